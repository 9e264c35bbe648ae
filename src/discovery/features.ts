// Subject features: a subject's RFM scores and segment, cadence, pattern kinds, top entities and
// typed-attribute summaries, stored per subject with a fixed-length vector, refreshed by a job after
// the subject is mined and nightly for every subject. A subject whose RFM segment moves gets a
// `segment.changed` event (payload {from, to}), in the same transaction, which segment-change
// alert rules fire on.
import type { BehaviorApi, SubjectSummary } from '../behavior/index.js';
import { PATTERN_KINDS } from '../behavior/schemas.js';
import type { EventsApi } from '../events/index.js';
import { ENGINE_EVENT_TYPES, type NewEvent } from '../events/schemas.js';
import type { Subject } from '../platform/common-schemas.js';
import type { Db, Queryable } from '../platform/db.js';
import type { SubjectDataHook } from '../platform/module.js';
import { deleteRows, SUBJECT_WHERE, type SubjectTable, tablePages } from '../platform/subject-data.js';

/**
 * The vector's groups and their weights. Each element lies in [0, 1]; a group's elements are
 * scaled by sqrt(weight / elements), so the Euclidean distance of two vectors is at most 1 and
 * each group contributes at most its weight to the squared distance:
 *   rfm (0.45): recency, frequency and monetary score / 5 (0 where unscored);
 *   kinds (0.25): one element per pattern kind, the confidence of the subject's most confident
 *     active pattern of it (0 without one), so that a weak pattern mined from noise moves a subject
 *     only a little away from its peers that have none;
 *   cadence (0.15): 1 - ln(period) / ln(365), the period of its most confident recurring pattern
 *     (weekly 0.67, monthly 0.42), times that pattern's confidence (0 without one);
 *   entities (0.15): added by discovery, one element per entity among the project's most named.
 */
export const FEATURE_WEIGHTS = { rfm: 0.45, kinds: 0.25, cadence: 0.15, entities: 0.15 } as const;
/** How many of the project's most named entities discovery adds to the vector. */
export const TOP_PROJECT_ENTITIES = 16;
/** A subject's top entities kept. */
const TOP_ENTITIES = 5;
const RFM_LOOKBACK_DAYS = 365;

export interface SubjectFeatures {
  subject: Subject;
  recencyScore: number | null;
  frequencyScore: number | null;
  monetaryScore: number | null;
  rfmSegment: string | null;
  cadenceDays: number | null;
  patternKinds: string[];
  patternIds: string[];
  topEntities: string[];
  attributes: Record<string, { count: number; mean: number; last: number }>;
  activityCount: number;
  lastActivityAt: string | null;
  vector: number[];
}

/** The fixed part of the vector: rfm, kinds, cadence (FEATURE_WEIGHTS). */
export function featureVector(
  f: Pick<SubjectFeatures, 'recencyScore' | 'frequencyScore' | 'monetaryScore' | 'cadenceDays'> & {
    /** Per pattern kind present, the confidence of the subject's most confident active pattern of it. */
    kindConfidence: Readonly<Record<string, number>>;
    /** The confidence of the recurring pattern cadenceDays comes from. */
    cadenceConfidence: number | null;
  },
): number[] {
  const rfm = Math.sqrt(FEATURE_WEIGHTS.rfm / 3);
  const kinds = Math.sqrt(FEATURE_WEIGHTS.kinds / PATTERN_KINDS.length);
  const cadence = Math.sqrt(FEATURE_WEIGHTS.cadence);
  const score = (s: number | null) => (s === null ? 0 : s / 5);
  const unit = (x: number) => Math.min(1, Math.max(0, x));
  const period = f.cadenceDays === null ? 0 : Math.min(1, Math.max(0, 1 - Math.log(Math.max(1, f.cadenceDays)) / Math.log(365)));
  return [
    rfm * score(f.recencyScore),
    rfm * score(f.frequencyScore),
    rfm * score(f.monetaryScore),
    ...PATTERN_KINDS.map((k) => kinds * unit(f.kindConfidence[k] ?? 0)),
    cadence * period * unit(f.cadenceConfidence ?? 0),
  ];
}

export function featuresOf(s: SubjectSummary): SubjectFeatures {
  // Patterns come most confident first, so the first of each kind is its most confident.
  const recurring = s.patterns.find((p) => p.metadata.patternKind === 'recurring_event' && p.metadata.cadence?.periodDays);
  const kindConfidence: Record<string, number> = {};
  for (const p of s.patterns) kindConfidence[p.metadata.patternKind] ??= p.confidence;
  const base = {
    subject: s.subject,
    recencyScore: s.profile.recencyScore,
    frequencyScore: s.profile.frequencyScore,
    monetaryScore: s.profile.monetaryScore,
    rfmSegment: s.profile.rfmSegment,
    cadenceDays: recurring?.metadata.cadence?.periodDays ?? null,
    patternKinds: Object.keys(kindConfidence).sort(),
    patternIds: s.patterns.map((p) => p.id),
    topEntities: s.entities.slice(0, TOP_ENTITIES).map(([name]) => name),
    attributes: s.attributes,
    activityCount: s.profile.activityCount ?? 0,
    lastActivityAt: s.profile.lastActivityAt ?? null,
  };
  return { ...base, vector: featureVector({ ...base, kindConfidence, cadenceConfidence: recurring?.confidence ?? null }) };
}

interface FeatureRow {
  subject_kind: string;
  subject_external_id: string;
  recency_score: number | null;
  frequency_score: number | null;
  monetary_score: number | null;
  rfm_segment: string | null;
  cadence_days: number | null;
  pattern_kinds: string[];
  pattern_ids: string[];
  top_entities: string[];
  attributes: SubjectFeatures['attributes'];
  activity_count: number;
  last_activity_at: Date | null;
  vector: number[];
}

const toFeatures = (r: FeatureRow): SubjectFeatures => ({
  subject: { kind: r.subject_kind, externalId: r.subject_external_id },
  recencyScore: r.recency_score,
  frequencyScore: r.frequency_score,
  monetaryScore: r.monetary_score,
  rfmSegment: r.rfm_segment,
  cadenceDays: r.cadence_days === null ? null : Number(r.cadence_days),
  patternKinds: r.pattern_kinds,
  patternIds: r.pattern_ids,
  topEntities: r.top_entities,
  attributes: r.attributes,
  activityCount: Number(r.activity_count),
  lastActivityAt: r.last_activity_at === null ? null : new Date(r.last_activity_at).toISOString(),
  vector: r.vector.map(Number),
});

/** How many subjects are summarised at once (one activity read, one pattern read). */
const CHUNK = 250;

export class FeatureStore {
  constructor(
    private readonly db: Db,
    private readonly behavior: Pick<BehaviorApi, 'summaries' | 'activeSubjects' | 'queuedSubjects'>,
    private readonly events: Pick<EventsApi, 'appendInTransaction' | 'afterCommit'>,
  ) {}

  /** Every subject's features, in subject order. */
  async all(projectId: string): Promise<SubjectFeatures[]> {
    const { rows } = await this.db.query<FeatureRow>(
      `SELECT subject_kind, subject_external_id, recency_score, frequency_score, monetary_score, rfm_segment, cadence_days, pattern_kinds, pattern_ids,
              top_entities, attributes, activity_count, last_activity_at, vector
         FROM discovery_features WHERE project_id = $1 ORDER BY subject_kind, subject_external_id`,
      [projectId],
    );
    return rows.map(toFeatures);
  }

  /** One subject's features, if stored. */
  async one(projectId: string, subject: Subject): Promise<SubjectFeatures | undefined> {
    const { rows } = await this.db.query<FeatureRow>(
      `SELECT subject_kind, subject_external_id, recency_score, frequency_score, monetary_score, rfm_segment, cadence_days, pattern_kinds, pattern_ids,
              top_entities, attributes, activity_count, last_activity_at, vector
         FROM discovery_features WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3`,
      [projectId, subject.kind, subject.externalId],
    );
    return rows[0] && toFeatures(rows[0]);
  }

  /** What a cohort compares, for every subject of the project (the columns it needs only). */
  async comparable(projectId: string): Promise<Pick<SubjectFeatures, 'subject' | 'recencyScore' | 'frequencyScore' | 'monetaryScore' | 'rfmSegment' | 'topEntities' | 'patternKinds'>[]> {
    const { rows } = await this.db.query<Pick<FeatureRow, 'subject_kind' | 'subject_external_id' | 'recency_score' | 'frequency_score' | 'monetary_score' | 'rfm_segment' | 'top_entities' | 'pattern_kinds'>>(
      `SELECT subject_kind, subject_external_id, recency_score, frequency_score, monetary_score, rfm_segment, top_entities, pattern_kinds
         FROM discovery_features WHERE project_id = $1`,
      [projectId],
    );
    return rows.map((r) => ({
      subject: { kind: r.subject_kind, externalId: r.subject_external_id },
      recencyScore: r.recency_score,
      frequencyScore: r.frequency_score,
      monetaryScore: r.monetary_score,
      rfmSegment: r.rfm_segment,
      topEntities: r.top_entities,
      patternKinds: r.pattern_kinds,
    }));
  }

  async count(projectId: string): Promise<number> {
    const { rows } = await this.db.query<{ n: string }>(`SELECT count(*) AS n FROM discovery_features WHERE project_id = $1`, [projectId]);
    return Number(rows[0]!.n);
  }

  /**
   * Subjects whose features lag their activity: those on the behaviour domain's mining queue
   * (they had activity since it last mined them; their refresh follows the mining) with no features
   * yet, or with features computed before their latest activity there. The queue is the behaviour
   * domain's (its api answers it), since no other count is cheap: which subjects have activity would
   * scan the project's history. Refreshes already enqueued (mined, not yet recomputed) are jobs, not counted here.
   */
  async backlog(projectId: string): Promise<{ stored: number; missing: number; stale: number; oldestPendingAt: Date | null }> {
    const queued = await this.behavior.queuedSubjects(projectId);
    const { rows } = await this.db.query<{ stored: number; missing: number; stale: number; oldestPendingAt: Date | null }>(
      `SELECT (SELECT count(*) FROM discovery_features WHERE project_id = $1)::int AS stored,
              count(*) FILTER (WHERE f.subject_kind IS NULL)::int AS missing,
              count(*) FILTER (WHERE f.computed_at < q.last_at)::int AS stale,
              min(q.first_at) FILTER (WHERE f.subject_kind IS NULL OR f.computed_at < q.last_at) AS "oldestPendingAt"
         FROM unnest($2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[]) AS q(subject_kind, subject_external_id, first_at, last_at)
         LEFT JOIN discovery_features f ON f.project_id = $1 AND f.subject_kind = q.subject_kind AND f.subject_external_id = q.subject_external_id`,
      [projectId, queued.map((q) => q.subject.kind), queued.map((q) => q.subject.externalId), queued.map((q) => q.firstAt), queued.map((q) => q.lastAt)],
    );
    return rows[0]!;
  }

  /**
   * Recomputes the features of these subjects (when none are named: every subject active in the
   * last year or holding features); a subject with no activity left in the year loses its row.
   * Answers how many were written, removed, and changed segment.
   */
  async refresh(projectId: string, subjects?: readonly Subject[], now = new Date()): Promise<{ refreshed: number; removed: number; segmentChanges: number }> {
    // Every subject active in the last year, and every subject with features (one gone quiet is
    // recomputed, or removed once it has no activity left in the year).
    const targets = subjects ?? unique([...(await this.behavior.activeSubjects(projectId, RFM_LOOKBACK_DAYS, now)), ...(await this.storedSubjects(projectId))]);
    let refreshed = 0;
    let removed = 0;
    let segmentChanges = 0;
    for (let i = 0; i < targets.length; i += CHUNK) {
      const computed = (await this.behavior.summaries(projectId, targets.slice(i, i + CHUNK), now)).map(featuresOf);
      const features = computed.filter((f) => f.activityCount > 0);
      const gone = computed.filter((f) => f.activityCount === 0).map((f) => f.subject);
      const { changes, receipt } = await this.db.transaction(async (tx) => {
        if (gone.length > 0) {
          await tx.query(
            `DELETE FROM discovery_features WHERE project_id = $1 AND (subject_kind, subject_external_id) IN (SELECT * FROM unnest($2::text[], $3::text[]))`,
            [projectId, gone.map((s) => s.kind), gone.map((s) => s.externalId)],
          );
        }
        const before = await upsert(tx, projectId, features, now);
        const events: NewEvent[] = features.flatMap((f) => {
          const from = before.get(`${f.subject.kind}\0${f.subject.externalId}`);
          if (from === undefined || from === null || f.rfmSegment === null || from === f.rfmSegment) return [];
          return [
            {
              eventType: ENGINE_EVENT_TYPES.segmentChanged,
              subject: f.subject,
              severity: 'info' as const,
              payload: { from, to: f.rfmSegment, recencyScore: f.recencyScore, frequencyScore: f.frequencyScore, monetaryScore: f.monetaryScore },
              sourceMemoryIds: f.patternIds,
              sourcePatternId: null,
              emittedByPack: null,
              dedupeKey: `segment.changed:${f.subject.kind}:${f.subject.externalId}:${from}:${f.rfmSegment}:${now.toISOString()}`,
            },
          ];
        });
        return { changes: events.length, receipt: events.length > 0 ? await this.events.appendInTransaction(tx, projectId, events) : undefined };
      });
      if (receipt) await this.events.afterCommit(receipt);
      refreshed += features.length;
      removed += gone.length;
      segmentChanges += changes;
    }
    return { refreshed, removed, segmentChanges };
  }

  private async storedSubjects(projectId: string): Promise<Subject[]> {
    const { rows } = await this.db.query<{ subject_kind: string; subject_external_id: string }>(
      `SELECT subject_kind, subject_external_id FROM discovery_features WHERE project_id = $1 ORDER BY 1, 2`,
      [projectId],
    );
    return rows.map((r) => ({ kind: r.subject_kind, externalId: r.subject_external_id }));
  }

  /** Projects that hold features: the nightly refresh walks them. */
  async projects(): Promise<string[]> {
    const { rows } = await this.db.query<{ project_id: string }>(`SELECT DISTINCT project_id FROM discovery_features ORDER BY 1`);
    return rows.map((r) => r.project_id);
  }
}

function unique(subjects: readonly Subject[]): Subject[] {
  const seen = new Map(subjects.map((s) => [`${s.kind}\0${s.externalId}`, s]));
  return [...seen.values()];
}

/** Writes the features; answers each subject's segment before the write (undefined: it had none stored). */
async function upsert(tx: Queryable, projectId: string, features: readonly SubjectFeatures[], now: Date): Promise<Map<string, string | null>> {
  if (features.length === 0) return new Map();
  const col = <T>(f: (x: SubjectFeatures) => T) => features.map(f);
  const { rows: before } = await tx.query<{ subject_kind: string; subject_external_id: string; rfm_segment: string | null }>(
    `SELECT subject_kind, subject_external_id, rfm_segment FROM discovery_features
      WHERE project_id = $1 AND (subject_kind, subject_external_id) IN (SELECT * FROM unnest($2::text[], $3::text[]))
      ORDER BY subject_kind, subject_external_id FOR UPDATE`,
    [projectId, col((f) => f.subject.kind), col((f) => f.subject.externalId)],
  );
  await tx.query(
    `INSERT INTO discovery_features AS f (project_id, subject_kind, subject_external_id, recency_score, frequency_score, monetary_score, rfm_segment,
       cadence_days, pattern_kinds, pattern_ids, top_entities, attributes, activity_count, last_activity_at, vector, computed_at)
     SELECT $1, v.kind, v.ext, v.r, v.f, v.m, v.segment, v.cadence,
            ARRAY(SELECT jsonb_array_elements_text(v.kinds)), ARRAY(SELECT jsonb_array_elements_text(v.ids)), ARRAY(SELECT jsonb_array_elements_text(v.entities)),
            v.attributes, v.activity, v.last, ARRAY(SELECT (jsonb_array_elements_text(v.vector))::float8), $15
       FROM unnest($2::text[], $3::text[], $4::int[], $5::int[], $6::int[], $7::text[], $8::float8[], $9::jsonb[], $10::jsonb[], $11::jsonb[], $12::jsonb[], $13::int[], $14::timestamptz[], $16::jsonb[])
            AS v(kind, ext, r, f, m, segment, cadence, kinds, ids, entities, attributes, activity, last, vector)
     ON CONFLICT (project_id, subject_kind, subject_external_id) DO UPDATE SET
       recency_score = excluded.recency_score, frequency_score = excluded.frequency_score, monetary_score = excluded.monetary_score,
       rfm_segment = excluded.rfm_segment, cadence_days = excluded.cadence_days, pattern_kinds = excluded.pattern_kinds, pattern_ids = excluded.pattern_ids,
       top_entities = excluded.top_entities, attributes = excluded.attributes, activity_count = excluded.activity_count,
       last_activity_at = excluded.last_activity_at, vector = excluded.vector, computed_at = excluded.computed_at`,
    [
      projectId,
      col((f) => f.subject.kind),
      col((f) => f.subject.externalId),
      col((f) => f.recencyScore),
      col((f) => f.frequencyScore),
      col((f) => f.monetaryScore),
      col((f) => f.rfmSegment),
      col((f) => f.cadenceDays),
      col((f) => JSON.stringify(f.patternKinds)),
      col((f) => JSON.stringify(f.patternIds)),
      col((f) => JSON.stringify(f.topEntities)),
      col((f) => JSON.stringify(f.attributes)),
      col((f) => f.activityCount),
      col((f) => f.lastActivityAt),
      now,
      col((f) => JSON.stringify(f.vector)),
    ],
  );
  return new Map(before.map((r) => [`${r.subject_kind}\0${r.subject_external_id}`, r.rfm_segment]));
}

/** The subject's feature row (data-subject rights). */
const SUBJECT_FEATURES: SubjectTable = {
  from: 'discovery_features',
  where: SUBJECT_WHERE,
  key: 'subject_external_id',
  columns: `subject_kind, subject_external_id, recency_score, frequency_score, monetary_score, rfm_segment, cadence_days, pattern_kinds, pattern_ids,
    top_entities, attributes, activity_count, last_activity_at, vector, computed_at`,
};

/** Discovery's part of data-subject rights: the subject's feature row. */
export function discoverySubjectData(db: Db): SubjectDataHook {
  return {
    export: ({ projectId, subject }) => tablePages(db, 'discovery_features', SUBJECT_FEATURES, [projectId, subject.kind, subject.externalId]),
    erase: async (tx, { projectId, subject }) => ({ counts: { discovery_features: await deleteRows(tx, SUBJECT_FEATURES, [projectId, subject.kind, subject.externalId]) } }),
  };
}
