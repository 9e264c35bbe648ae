// The learning module's part of data-subject rights: a subject's decisions and outcomes (their
// memories are the memory module's part), and the evidence kept for refs that are the subject's.
import type { Db } from '../platform/db.js';
import type { SubjectDataHook, SubjectScope } from '../platform/module.js';
import { deleteRows, tablePages } from '../platform/subject-data.js';
import { SUBJECT_DECISIONS, SUBJECT_OUTCOMES, SUBJECT_REF_EVIDENCE } from './store.js';

/** The refs a decision may cite that are the subject's: its memories (patterns among them), predictions and observations. */
const subjectRefs = (scope: SubjectScope) => [...scope.memoryIds, ...scope.predictionIds, ...scope.observationIds];

export function learningSubjectData(db: Db): SubjectDataHook {
  return {
    async *export(scope) {
      const { projectId, subject: { kind, externalId } } = scope;
      yield* tablePages(db, 'decisions', SUBJECT_DECISIONS, [projectId, kind, externalId]);
      yield* tablePages(db, 'outcomes', SUBJECT_OUTCOMES, [projectId, kind, externalId]);
      yield* tablePages(db, 'ref_evidence', SUBJECT_REF_EVIDENCE, [projectId, subjectRefs(scope)]);
    },
    async erase(tx, scope) {
      const { projectId, subject: { kind, externalId } } = scope;
      const params = [projectId, kind, externalId];
      const evidence = await deleteRows(tx, SUBJECT_REF_EVIDENCE, [projectId, subjectRefs(scope)]);
      // Outcomes before decisions: an outcome of another subject's decision is the outcome's subject's.
      const outcomes = await deleteRows(tx, SUBJECT_OUTCOMES, params);
      const decisions = await deleteRows(tx, SUBJECT_DECISIONS, params);
      return { counts: { decisions, outcomes, ref_evidence: evidence } };
    },
  };
}
