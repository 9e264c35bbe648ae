// The behaviour module's part of data-subject rights: a subject's recorded predictions and its
// place in the mining queue. Its mined patterns are memories (the memory module's part) and its
// activity is memories and events.
import type { Db } from '../platform/db.js';
import type { SubjectDataHook } from '../platform/module.js';
import { deleteRows, subjectKeys, tablePages } from '../platform/subject-data.js';
import { SUBJECT_MINING_QUEUE, SUBJECT_PREDICTIONS } from './predict/store.js';

export function behaviorSubjectData(db: Db): SubjectDataHook {
  return {
    ids: async (q, projectId, subject) => ({ predictionIds: await subjectKeys(q, SUBJECT_PREDICTIONS, [projectId, subject.kind, subject.externalId]) }),
    export: ({ projectId, subject }) => tablePages(db, 'predictions', SUBJECT_PREDICTIONS, [projectId, subject.kind, subject.externalId]),
    async erase(tx, { projectId, subject }) {
      const params = [projectId, subject.kind, subject.externalId];
      return { counts: { predictions: await deleteRows(tx, SUBJECT_PREDICTIONS, params), mining_queue: await deleteRows(tx, SUBJECT_MINING_QUEUE, params) } };
    },
  };
}
