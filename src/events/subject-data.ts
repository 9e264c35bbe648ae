// The events module's part of data-subject rights: the events that name a subject (their ids are
// the scope's eventIds, which alert fires point at).
import type { Db } from '../platform/db.js';
import type { SubjectDataHook } from '../platform/module.js';
import { deleteRows, subjectKeys, tablePages } from '../platform/subject-data.js';
import { SUBJECT_EVENTS } from './store.js';

export function eventsSubjectData(db: Db): SubjectDataHook {
  return {
    ids: async (q, projectId, subject) => ({ eventIds: await subjectKeys(q, SUBJECT_EVENTS, [projectId, subject.kind, subject.externalId]) }),
    export: ({ projectId, subject }) => tablePages(db, 'events', SUBJECT_EVENTS, [projectId, subject.kind, subject.externalId]),
    erase: async (tx, { projectId, subject }) => ({ counts: { events: await deleteRows(tx, SUBJECT_EVENTS, [projectId, subject.kind, subject.externalId]) } }),
  };
}
