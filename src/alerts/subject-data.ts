// The alerts module's part of data-subject rights: the fires that name a subject or its events.
// A delivery still queued for an erased fire finds no fire and is dropped (AlertService.deliver).
import type { Db } from '../platform/db.js';
import type { SubjectDataHook } from '../platform/module.js';
import { deleteWhere, keysetPages } from '../platform/subject-data.js';
import { subjectFireRows, subjectFiresWhere } from './store.js';

export function alertsSubjectData(db: Db): SubjectDataHook {
  return {
    export: ({ projectId, subject }) =>
      keysetPages('alert_fires', (row) => String(row.id), (after, limit) => subjectFireRows(db, projectId, subject.kind, subject.externalId, after, limit)),
    async erase(tx, { projectId, subject }) {
      const alertFires = await deleteWhere(tx, subjectFiresWhere.from, subjectFiresWhere.where, [projectId, subject.kind, subject.externalId]);
      return { counts: { alert_fires: alertFires } };
    },
  };
}
