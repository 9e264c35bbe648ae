// The behaviour module's part of data-subject rights: a subject's recorded predictions and its
// place in the mining queue. Its mined patterns are memories (the memory module's part) and its
// activity is memories and events.
import type { Db } from '../platform/db.js';
import type { SubjectDataHook } from '../platform/module.js';
import { deleteWhere, keysetPages } from '../platform/subject-data.js';
import { subjectMiningQueueWhere, subjectPredictionRows, subjectPredictionsWhere } from './predict/store.js';

export function behaviorSubjectData(db: Db): SubjectDataHook {
  return {
    export: ({ projectId, subject }) =>
      keysetPages('predictions', (r) => String(r.id), (after, limit) => subjectPredictionRows(db, projectId, subject.kind, subject.externalId, after, limit)),
    async erase(tx, { projectId, subject }) {
      const params = [projectId, subject.kind, subject.externalId];
      const predictions = await deleteWhere(tx, subjectPredictionsWhere.from, subjectPredictionsWhere.where, params);
      const queued = await deleteWhere(tx, subjectMiningQueueWhere.from, subjectMiningQueueWhere.where, params);
      return { counts: { predictions, mining_queue: queued } };
    },
  };
}
