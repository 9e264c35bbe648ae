// The typed module's part of data-subject rights: a subject's observations (stored, and still
// queued), and its running statistics. Accumulators are per subject and attribute, computed from
// that subject's observations only, so erasing the subject removes them rather than recomputing.
import type { Db } from '../platform/db.js';
import type { SubjectDataHook } from '../platform/module.js';
import { deleteRows, SUBJECT_PAGE, subjectKeys, tablePages } from '../platform/subject-data.js';
import { takeEraseLock } from './store/event-outbox.js';
import * as store from './store/subject.js';

export function typedSubjectData(db: Db): SubjectDataHook {
  return {
    ids: async (q, projectId, subject) => ({ observationIds: await subjectKeys(q, store.SUBJECT_OBSERVATIONS, [projectId, subject.kind, subject.externalId]) }),
    async *export({ projectId, subject: { kind, externalId } }) {
      yield* tablePages(db, 'observations', store.SUBJECT_OBSERVATIONS, [projectId, kind, externalId]);
      // Queued rows page by batch: a page of batches, then their rows of the subject.
      for (let after: string | null = null; ; ) {
        const batchIds = await store.subjectQueuedBatchIds(db, projectId, kind, externalId, after, SUBJECT_PAGE);
        if (batchIds.length === 0) break;
        yield { kind: 'queued_observations', rows: await store.subjectQueuedRows(db, projectId, kind, externalId, batchIds) };
        if (batchIds.length < SUBJECT_PAGE) break;
        after = batchIds[batchIds.length - 1]!;
      }
      yield* tablePages(db, 'accumulators', store.SUBJECT_ACCUMULATORS, [projectId, kind, externalId]);
    },
    async erase(tx, { projectId, subject: { kind, externalId } }) {
      const params = [projectId, kind, externalId];
      // No typed.events job appends the events of these observations while they go (nor after).
      await takeEraseLock(tx, projectId);
      const observations = await deleteRows(tx, store.SUBJECT_OBSERVATIONS, params);
      const queued = await store.eraseQueuedRows(tx, projectId, kind, externalId);
      await deleteRows(tx, store.SUBJECT_UNFOLDED, params);
      const accumulators = await deleteRows(tx, store.SUBJECT_ACCUMULATORS, params);
      return { counts: { observations, queued_observations: queued, accumulators } };
    },
  };
}
