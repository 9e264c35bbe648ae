// The events module's part of data-subject rights: the events that name a subject.
import type { Db } from '../platform/db.js';
import type { SubjectDataHook } from '../platform/module.js';
import { deleteWhere, keysetPages } from '../platform/subject-data.js';
import { subjectEventRows, subjectEventsWhere } from './store.js';

export function eventsSubjectData(db: Db): SubjectDataHook {
  return {
    export: ({ projectId, subject }) =>
      keysetPages('events', (row) => String(row.id), (after, limit) => subjectEventRows(db, projectId, subject.kind, subject.externalId, after, limit)),
    async erase(tx, { projectId, subject }) {
      const events = await deleteWhere(tx, subjectEventsWhere.from, subjectEventsWhere.where, [projectId, subject.kind, subject.externalId]);
      return { counts: { events } };
    },
  };
}
