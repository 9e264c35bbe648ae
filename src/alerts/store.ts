// SQL for alert rules and fires.
import type { Queryable } from '../platform/db.js';
import { iso } from '../platform/sql.js';
import type { SubjectTable } from '../platform/subject-data.js';
import type { ThrottleHistory } from './match.js';
import type { Channel, DeliveryResult, Filter, Fire, Rule, Throttle, Trigger } from './schemas.js';


interface RuleRow {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  enabled: boolean;
  trigger: Trigger;
  filter: Filter | null;
  notify: Channel[];
  throttle: Throttle | null;
  created_at: Date;
  updated_at: Date;
}

function toRule(row: RuleRow): Rule {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    description: row.description,
    enabled: row.enabled,
    trigger: row.trigger,
    filter: row.filter,
    notify: row.notify,
    throttle: row.throttle,
    created: iso(row.created_at),
    updated: iso(row.updated_at),
  };
}

export type RuleFields = Omit<Rule, 'id' | 'projectId' | 'created' | 'updated'>;

/** Serialises rule writes of one project (the active-triggers count) until the transaction ends. */
export async function lockProjectRules(db: Queryable, projectId: string): Promise<void> {
  await db.query(`SELECT pg_advisory_xact_lock(hashtextextended('alert-rules:' || $1, 0))`, [projectId]);
}

export async function countEnabled(db: Queryable, projectId: string, exceptId?: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM alert_rules WHERE project_id = $1 AND enabled AND id IS DISTINCT FROM $2',
    [projectId, exceptId ?? null],
  );
  return rows[0]!.n;
}

export async function insertRule(db: Queryable, id: string, projectId: string, fields: RuleFields): Promise<Rule> {
  const { rows } = await db.query<RuleRow>(
    `INSERT INTO alert_rules (id, project_id, name, description, enabled, trigger, filter, notify, throttle)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8::jsonb, $9::jsonb) RETURNING *`,
    [id, projectId, fields.name, fields.description, fields.enabled, JSON.stringify(fields.trigger), json(fields.filter), JSON.stringify(fields.notify), json(fields.throttle)],
  );
  return toRule(rows[0]!);
}

const json = (value: unknown) => (value === null ? null : JSON.stringify(value));

export async function updateRule(db: Queryable, projectId: string, id: string, fields: RuleFields): Promise<Rule | undefined> {
  const { rows } = await db.query<RuleRow>(
    `UPDATE alert_rules SET name = $3, description = $4, enabled = $5, trigger = $6::jsonb, filter = $7::jsonb, notify = $8::jsonb,
       throttle = $9::jsonb, updated_at = now()
     WHERE project_id = $1 AND id = $2 RETURNING *`,
    [projectId, id, fields.name, fields.description, fields.enabled, JSON.stringify(fields.trigger), json(fields.filter), JSON.stringify(fields.notify), json(fields.throttle)],
  );
  return rows[0] && toRule(rows[0]);
}

export async function disableRule(db: Queryable, projectId: string, id: string): Promise<void> {
  await db.query('UPDATE alert_rules SET enabled = false, updated_at = now() WHERE project_id = $1 AND id = $2', [projectId, id]);
}

export async function getRule(db: Queryable, projectId: string, id: string, forUpdate = false): Promise<Rule | undefined> {
  const { rows } = await db.query<RuleRow>(`SELECT * FROM alert_rules WHERE project_id = $1 AND id = $2${forUpdate ? ' FOR UPDATE' : ''}`, [projectId, id]);
  return rows[0] && toRule(rows[0]);
}

export async function getRules(db: Queryable, projectId: string, ids: readonly string[]): Promise<Rule[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<RuleRow>('SELECT * FROM alert_rules WHERE project_id = $1 AND id = ANY($2::text[])', [projectId, ids]);
  return rows.map(toRule);
}

export async function listRules(db: Queryable, projectId: string, options: { enabledOnly?: boolean } = {}): Promise<Rule[]> {
  const { rows } = await db.query<RuleRow>(
    `SELECT * FROM alert_rules WHERE project_id = $1${options.enabledOnly ? ' AND enabled' : ''} ORDER BY created_at, id`,
    [projectId],
  );
  return rows.map(toRule);
}

/** Deletes the rule; its fires go with it (foreign key cascade). */
export async function deleteRule(db: Queryable, projectId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM alert_rules WHERE project_id = $1 AND id = $2', [projectId, id]);
  return rowCount > 0;
}

/**
 * Locks the throttle keys (sorted, so concurrent emits cannot deadlock) and answers their history
 * and the transaction's `now`, which is also every new fire's firedAt.
 */
export async function throttleHistory(
  db: Queryable,
  projectId: string,
  dedupeKeys: readonly string[],
  windowMinutes: number,
): Promise<{ now: number; history: Map<string, ThrottleHistory> }> {
  if (dedupeKeys.length > 0) {
    await db.query(
      `SELECT pg_advisory_xact_lock(h) FROM (
         SELECT DISTINCT hashtextextended($1 || ':' || k, 0) AS h FROM unnest($2::text[]) AS k ORDER BY h
       ) AS keys`,
      [projectId, dedupeKeys],
    );
  }
  const { rows } = await db.query<{ dedupe_key: string | null; last_hour: number; last_fired_at: Date | null; now: Date }>(
    `SELECT f.dedupe_key, count(*) FILTER (WHERE f.fired_at > now() - interval '1 hour')::int AS last_hour, max(f.fired_at) AS last_fired_at, now() AS now
     FROM (SELECT 1) AS one
     LEFT JOIN alert_fires f ON f.project_id = $1 AND f.dedupe_key = ANY($2::text[])
       AND f.fired_at > now() - greatest(interval '1 hour', $3::float8 * interval '1 minute')
     GROUP BY f.dedupe_key`,
    [projectId, dedupeKeys, windowMinutes],
  );
  const history = new Map<string, ThrottleHistory>();
  for (const row of rows) {
    if (row.dedupe_key !== null) history.set(row.dedupe_key, { lastHour: row.last_hour, lastFiredAt: row.last_fired_at && new Date(row.last_fired_at).getTime() });
  }
  return { now: new Date(rows[0]!.now).getTime(), history };
}

export interface NewFire {
  id: string;
  ruleId: string;
  eventId: string;
  subjectKind: string | null;
  subjectExternalId: string | null;
  dedupeKey: string;
  deliveryResults: DeliveryResult[];
}

export async function insertFires(db: Queryable, projectId: string, fires: readonly NewFire[]): Promise<void> {
  if (fires.length === 0) return;
  const col = <T>(f: (x: NewFire) => T) => fires.map(f);
  await db.query(
    `INSERT INTO alert_fires (id, project_id, alert_rule_id, event_id, subject_kind, subject_external_id, dedupe_key, delivery_results)
     SELECT f.id, $1, f.rule_id, f.event_id, f.subject_kind, f.subject_external_id, f.dedupe_key, f.results::jsonb
     FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
       AS f(id, rule_id, event_id, subject_kind, subject_external_id, dedupe_key, results)`,
    [
      projectId,
      col((f) => f.id),
      col((f) => f.ruleId),
      col((f) => f.eventId),
      col((f) => f.subjectKind),
      col((f) => f.subjectExternalId),
      col((f) => f.dedupeKey),
      col((f) => JSON.stringify(f.deliveryResults)),
    ],
  );
}

/**
 * A delivery result as stored: while an attempt is under way it also holds the attempt's claim (a
 * token) and when it was claimed (the database's clock); the attempt's result replaces both.
 */
interface StoredResult extends DeliveryResult {
  claim?: string;
  claimedAt?: string;
}

interface FireRow {
  id: string;
  alert_rule_id: string;
  event_id: string | null;
  dedupe_key: string;
  delivery_results: StoredResult[];
  fired_at: Date;
}

function toFire(row: FireRow): Fire {
  return {
    id: row.id,
    alertRuleId: row.alert_rule_id,
    eventId: row.event_id,
    dedupeKey: row.dedupe_key,
    deliveryResults: row.delivery_results.map(unclaimed),
    firedAt: iso(row.fired_at),
  };
}

function unclaimed({ claim: _claim, claimedAt: _claimedAt, ...result }: StoredResult): DeliveryResult {
  return result;
}

/** The rule's latest fires, newest first. */
export async function listFires(db: Queryable, projectId: string, ruleId: string, limit: number): Promise<Fire[]> {
  const { rows } = await db.query<FireRow>(
    'SELECT * FROM alert_fires WHERE project_id = $1 AND alert_rule_id = $2 ORDER BY fired_at DESC, id DESC LIMIT $3',
    [projectId, ruleId, limit],
  );
  return rows.map(toFire);
}

/** The fires with these ids (those of another project are not found), in no particular order. */
export async function getFires(db: Queryable, projectId: string, ids: readonly string[]): Promise<Fire[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<FireRow>('SELECT * FROM alert_fires WHERE project_id = $1 AND id = ANY($2::text[])', [projectId, ids]);
  return rows.map(toFire);
}

/**
 * Appends delivery results (channels added to the rule since the fire) while the fire still has
 * `count` of them and none has been attempted or claimed: answers the fire's results then, else
 * undefined.
 */
export async function addDeliveries(db: Queryable, projectId: string, fireId: string, count: number, results: readonly DeliveryResult[]): Promise<DeliveryResult[] | undefined> {
  const { rows } = await db.query<{ delivery_results: StoredResult[] }>(
    `UPDATE alert_fires SET delivery_results = delivery_results || $4::jsonb, delivery_pending = true
     WHERE project_id = $1 AND id = $2 AND jsonb_array_length(delivery_results) = $3
       AND NOT EXISTS (
         SELECT 1 FROM jsonb_array_elements(delivery_results) AS c(v)
         WHERE coalesce((c.v ->> 'attempts')::int, 0) > 0 OR c.v ->> 'claim' IS NOT NULL
       )
     RETURNING delivery_results`,
    [projectId, fireId, count, JSON.stringify(results)],
  );
  return rows[0]?.delivery_results.map(unclaimed);
}

/**
 * Claims the next attempt at one channel of a fire, before it is made: succeeds only while the
 * channel is pending with `attempts` made and unclaimed (or claimed by `takeOver`, a claim the
 * sweep found lapsed). Of claimants at once exactly one succeeds (the row's lock orders them and
 * the others find it claimed); it answers the result as claimed, the others undefined.
 */
export async function claimAttempt(
  db: Queryable,
  projectId: string,
  fireId: string,
  channel: number,
  attempts: number,
  claim: string,
  takeOver?: string,
): Promise<DeliveryResult | undefined> {
  const { rows } = await db.query<{ result: StoredResult }>(
    `UPDATE alert_fires
     SET delivery_results = jsonb_set(delivery_results, ARRAY[$3::text], (delivery_results -> ($3::text)::int) || jsonb_build_object('claim', $5::text, 'claimedAt', now()))
     WHERE project_id = $1 AND id = $2
       AND (delivery_results -> ($3::text)::int ->> 'pending')::boolean
       AND coalesce((delivery_results -> ($3::text)::int ->> 'attempts')::int, 0) = $4
       AND delivery_results -> ($3::text)::int ->> 'claim' IS NOT DISTINCT FROM $6::text
     RETURNING delivery_results -> ($3::text)::int AS result`,
    [projectId, fireId, String(channel), attempts, claim, takeOver ?? null],
  );
  return rows[0] && unclaimed(rows[0].result);
}

/**
 * Records the outcome of a claimed attempt at one channel of a fire (which ends the claim), leaving
 * the other channels (written concurrently) alone. False when the claim is no longer there: the
 * sweep found it lapsed and gave the attempt to another job.
 */
export async function setDeliveryResult(db: Queryable, projectId: string, fireId: string, channel: number, result: DeliveryResult, claim: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE alert_fires SET
       delivery_results = jsonb_set(delivery_results, ARRAY[$3::text], $4::jsonb),
       delivery_pending = EXISTS (
         SELECT 1 FROM jsonb_array_elements(jsonb_set(delivery_results, ARRAY[$3::text], $4::jsonb)) AS c WHERE (c ->> 'pending')::boolean
       )
     WHERE project_id = $1 AND id = $2 AND delivery_results -> ($3::text)::int ->> 'claim' = $5`,
    [projectId, fireId, String(channel), JSON.stringify(result), claim],
  );
  return rowCount > 0;
}

/**
 * Channels still pending whose attempt is overdue: their job was lost (a crash before the first
 * attempt, a retry that could not be enqueued while the queue was down, an in-process queue that
 * restarted) or its claimant stopped before recording the attempt. A claimed attempt is overdue
 * `claimLeaseMs` after its claim (it may still be under way), and answers its claim; an unclaimed
 * first attempt `firstGraceMs` after the fire (its job may not have run yet); a retry
 * `retryGraceMs` after its `nextAttemptAt`. Oldest first.
 */
export async function overdueDeliveries(
  db: Queryable,
  graceMs: { firstGraceMs: number; retryGraceMs: number; claimLeaseMs: number },
  limit: number,
): Promise<{ projectId: string; fireId: string; channel: number; attempts: number; claim?: string }[]> {
  const { rows } = await db.query<{ project_id: string; id: string; channel: number; attempts: number; claim: string | null }>(
    `SELECT f.project_id, f.id, (c.n - 1)::int AS channel, coalesce((c.v ->> 'attempts')::int, 0) AS attempts, c.v ->> 'claim' AS claim
     FROM alert_fires f, jsonb_array_elements(f.delivery_results) WITH ORDINALITY AS c(v, n)
     WHERE f.delivery_pending AND (c.v ->> 'pending')::boolean
       AND CASE WHEN c.v ->> 'claim' IS NOT NULL THEN (c.v ->> 'claimedAt')::timestamptz <= now() - $3::float8 * interval '1 millisecond'
                WHEN c.v ->> 'nextAttemptAt' IS NULL THEN f.fired_at <= now() - $1::float8 * interval '1 millisecond'
                ELSE (c.v ->> 'nextAttemptAt')::timestamptz <= now() - $2::float8 * interval '1 millisecond' END
     ORDER BY f.fired_at
     LIMIT $4`,
    [graceMs.firstGraceMs, graceMs.retryGraceMs, graceMs.claimLeaseMs, limit],
  );
  return rows.map((r) => ({ projectId: r.project_id, fireId: r.id, channel: r.channel, attempts: r.attempts, ...(r.claim === null ? {} : { claim: r.claim }) }));
}

/** The subject's fires: those naming it, and those of its events (alerts sit above events). */
export const SUBJECT_FIRES: SubjectTable = {
  from: 'alert_fires',
  where: `project_id = $1 AND ((subject_kind = $2 AND subject_external_id = $3) OR event_id = ANY($4::text[]))`,
  key: 'id',
  columns: 'id, alert_rule_id, event_id, subject_kind, subject_external_id, dedupe_key, delivery_results, delivery_pending, fired_at',
};
