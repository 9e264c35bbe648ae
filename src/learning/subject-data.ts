// The learning module's part of data-subject rights: a subject's decisions and outcomes (their
// memories are the memory module's part), and the evidence kept for refs that are the subject's.
import type { Db } from '../platform/db.js';
import type { SubjectDataHook } from '../platform/module.js';
import { deleteWhere, keysetPages } from '../platform/subject-data.js';
import * as store from './store.js';

export function learningSubjectData(db: Db): SubjectDataHook {
  return {
    async *export({ projectId, subject: { kind, externalId }, memoryIds }) {
      yield* keysetPages('decisions', (r) => String(r.id), (after, limit) => store.subjectDecisionRows(db, projectId, kind, externalId, after, limit));
      yield* keysetPages('outcomes', (r) => String(r.id), (after, limit) => store.subjectOutcomeRows(db, projectId, kind, externalId, after, limit));
      yield* keysetPages('ref_evidence', (r) => String(r.ref_id), (after, limit) => store.subjectRefEvidenceRows(db, projectId, kind, externalId, memoryIds, after, limit));
    },
    async erase(tx, { projectId, subject: { kind, externalId }, memoryIds }) {
      const params = [projectId, kind, externalId];
      // Evidence first: it is found through the predictions and observations erased below this module.
      const evidence = await deleteWhere(tx, store.subjectRefEvidenceWhere.from, store.subjectRefEvidenceWhere.where, [...params, memoryIds]);
      // Outcomes before decisions: an outcome of another subject's decision is the outcome's subject's.
      const outcomes = await deleteWhere(tx, store.subjectOutcomesWhere.from, store.subjectOutcomesWhere.where, params);
      const decisions = await deleteWhere(tx, store.subjectDecisionsWhere.from, store.subjectDecisionsWhere.where, params);
      return { counts: { decisions, outcomes, ref_evidence: evidence } };
    },
  };
}
