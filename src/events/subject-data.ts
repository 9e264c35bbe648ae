// The events module's part of data-subject rights: the events that name a subject.
import type { Db } from '../platform/db.js';
import type { SubjectDataHook } from '../platform/module.js';
import { deleteRows, tablePages } from '../platform/subject-data.js';
import { SUBJECT_EVENTS } from './store.js';

export function eventsSubjectData(db: Db): SubjectDataHook {
  return {
    export: ({ projectId, subject }) => tablePages(db, 'events', SUBJECT_EVENTS, [projectId, subject.kind, subject.externalId]),
    erase: async (tx, { projectId, subject }) => ({ counts: { events: await deleteRows(tx, SUBJECT_EVENTS, [projectId, subject.kind, subject.externalId]) } }),
  };
}
