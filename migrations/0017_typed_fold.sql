-- Typed ingest folds its batch into the subjects' accumulators in one statement.
--
-- Concurrent ingests of the same subjects queue on their accumulator rows. Folded in the service,
-- a batch held them from the SELECT ... FOR UPDATE through the fold, the UPDATE and the COMMIT:
-- two and a half round trips, each as long as the process is busy. typed_fold takes the rows, folds
-- and writes them in one call, so they are held for that call and the COMMIT only.
--
-- It computes exactly what src/typed/accumulator.ts computes (foldPoints, foldLate), operation for
-- operation in double precision, so the two give the same bits. Where they could differ it answers
-- false before writing anything, and the service folds that batch itself:
--   * an overflow or underflow: Postgres raises an error where JavaScript gives Infinity or 0 (a
--     sum past 1.8e308, the square of a value under 1e-162);
--   * an id outside ASCII: the series order compares ids by UTF-16 code unit in the service and by
--     byte here (COLLATE "C"), which agree on ASCII only;
--   * a row deleted meanwhile (a hard delete of the subject), which the service creates again.
-- The batch comes as one array per column, key by key; its values in two flat arrays (in the order
-- sent, for the moments, and in series order, for the EWMA), each key's from `offsets` for `lengths`.
-- The rows are locked in key order (COLLATE "C"), as the service locks them, so two batches never
-- wait on each other in a circle.
CREATE FUNCTION typed_fold(
  project text, kinds text[], exts text[], attrs text[],
  offsets integer[], lengths integer[], vals float8[], sorted_vals float8[],
  first_ats timestamptz[], first_ids text[], last_ats timestamptz[], last_ids text[], last_vals float8[],
  alpha float8
) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  r record;
  x float8;
  n bigint;
  s float8;
  sq float8;
  cum float8;
  lo float8;
  hi float8;
  e float8;
  v float8;
  diff float8;
  inc float8;
  lv float8;
  lat timestamptz;
  lid text;
  stale boolean;
  locked integer;
  unsafe integer;
  -- The new states, key by key, written by one UPDATE once all are computed.
  u_kind text[] := '{}'; u_ext text[] := '{}'; u_attr text[] := '{}';
  u_n bigint[] := '{}'; u_s float8[] := '{}'; u_sq float8[] := '{}'; u_cum float8[] := '{}';
  u_lo float8[] := '{}'; u_hi float8[] := '{}'; u_e float8[] := '{}'; u_v float8[] := '{}';
  u_lv float8[] := '{}'; u_lat timestamptz[] := '{}'; u_lid text[] := '{}'; u_stale boolean[] := '{}';
BEGIN
  INSERT INTO typed_accumulators (project_id, subject_kind, subject_external_id, attribute_key)
  SELECT project, k.kind, k.ext, k.attr FROM unnest(kinds, exts, attrs) WITH ORDINALITY AS k(kind, ext, attr, i)
   ORDER BY k.i
  ON CONFLICT DO NOTHING;

  SELECT count(*), count(*) FILTER (WHERE l.unsafe) INTO locked, unsafe FROM (
    SELECT octet_length(a.last_id) <> length(a.last_id) AS unsafe
      FROM typed_accumulators a
      JOIN unnest(kinds, exts, attrs) AS k(kind, ext, attr)
        ON a.subject_kind = k.kind AND a.subject_external_id = k.ext AND a.attribute_key = k.attr
     WHERE a.project_id = project
     ORDER BY a.subject_kind COLLATE "C", a.subject_external_id COLLATE "C", a.attribute_key COLLATE "C"
       FOR UPDATE OF a
  ) l;
  IF locked <> cardinality(kinds) OR unsafe > 0 THEN
    RETURN false;
  END IF;

  BEGIN
    FOR r IN
      SELECT a.subject_kind, a.subject_external_id, a.attribute_key, a.count, a.sum, a.sum_sq, a.min_val, a.max_val,
             a.last_val, a.last_observed_at, a.last_id, a.cumulative, a.ewma, a.ewma_var, a.series_stale,
             k.off, k.len, k.first_at, k.first_id, k.new_at, k.new_id, k.new_val
        FROM typed_accumulators a
        JOIN unnest(kinds, exts, attrs, offsets, lengths, first_ats, first_ids, last_ats, last_ids, last_vals)
             AS k(kind, ext, attr, off, len, first_at, first_id, new_at, new_id, new_val)
          ON a.subject_kind = k.kind AND a.subject_external_id = k.ext AND a.attribute_key = k.attr
       WHERE a.project_id = project
    LOOP
      -- The order-free moments, value by value in the order sent (foldMoments).
      n := r.count; s := r.sum; sq := r.sum_sq; cum := r.cumulative; lo := r.min_val; hi := r.max_val;
      FOREACH x IN ARRAY vals[r.off + 1 : r.off + r.len] LOOP
        n := n + 1;
        s := s + x;
        sq := sq + x * x;
        cum := cum + x;
        IF lo IS NULL OR x < lo THEN lo := x; END IF;
        IF hi IS NULL OR x > hi THEN hi := x; END IF;
      END LOOP;
      e := r.ewma; v := r.ewma_var; stale := r.series_stale;
      IF r.last_observed_at IS NULL OR r.last_id IS NULL
         OR r.first_at > r.last_observed_at
         OR (r.first_at = r.last_observed_at AND r.first_id COLLATE "C" > r.last_id COLLATE "C") THEN
        -- Every point comes after the stored last: the EWMA goes on over them in series order (foldSeries, ewmaStep).
        FOREACH x IN ARRAY sorted_vals[r.off + 1 : r.off + r.len] LOOP
          IF e IS NULL THEN
            e := x; v := 0;
          ELSE
            diff := x - e;
            inc := alpha * diff;
            v := (1 - alpha) * (coalesce(v, 0) + diff * inc);
            e := e + inc;
          END IF;
        END LOOP;
        lv := r.new_val; lat := r.new_at; lid := r.new_id;
      ELSE
        -- Late data (foldLate): the EWMA waits for a rebuild from the whole series; last is the newer of the two.
        stale := true;
        IF r.new_at > r.last_observed_at OR (r.new_at = r.last_observed_at AND r.new_id COLLATE "C" > r.last_id COLLATE "C") THEN
          lv := r.new_val; lat := r.new_at; lid := r.new_id;
        ELSE
          lv := r.last_val; lat := r.last_observed_at; lid := r.last_id;
        END IF;
      END IF;
      u_kind := array_append(u_kind, r.subject_kind); u_ext := array_append(u_ext, r.subject_external_id);
      u_attr := array_append(u_attr, r.attribute_key); u_n := array_append(u_n, n); u_s := array_append(u_s, s);
      u_sq := array_append(u_sq, sq); u_cum := array_append(u_cum, cum); u_lo := array_append(u_lo, lo);
      u_hi := array_append(u_hi, hi); u_e := array_append(u_e, e); u_v := array_append(u_v, v);
      u_lv := array_append(u_lv, lv); u_lat := array_append(u_lat, lat); u_lid := array_append(u_lid, lid);
      u_stale := array_append(u_stale, stale);
    END LOOP;
  EXCEPTION WHEN numeric_value_out_of_range THEN
    RETURN false;
  END;

  UPDATE typed_accumulators a SET
    count = u.n, sum = u.s, sum_sq = u.sq, min_val = u.lo, max_val = u.hi, last_val = u.lv, last_observed_at = u.lat,
    last_id = u.lid, cumulative = u.cum, ewma = u.e, ewma_var = u.v, series_stale = u.stale, updated_at = now()
    FROM unnest(u_kind, u_ext, u_attr, u_n, u_s, u_sq, u_lo, u_hi, u_lv, u_lat, u_lid, u_cum, u_e, u_v, u_stale)
         AS u(kind, ext, attr, n, s, sq, lo, hi, lv, lat, lid, cum, e, v, stale)
   WHERE a.project_id = project AND a.subject_kind = u.kind AND a.subject_external_id = u.ext AND a.attribute_key = u.attr;
  RETURN true;
END;
$$;
