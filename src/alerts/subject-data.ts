// The alerts module's part of data-subject rights: the fires that name a subject or its events.
// A delivery still queued for an erased fire finds no fire and is dropped (AlertService.deliver).
import type { Db } from '../platform/db.js';
import type { SubjectDataHook } from '../platform/module.js';
import { deleteRows, tablePages } from '../platform/subject-data.js';
import { SUBJECT_FIRES } from './store.js';

export function alertsSubjectData(db: Db): SubjectDataHook {
  return {
    export: ({ projectId, subject, eventIds }) => tablePages(db, 'alert_fires', SUBJECT_FIRES, [projectId, subject.kind, subject.externalId, eventIds]),
    erase: async (tx, { projectId, subject, eventIds }) => ({ counts: { alert_fires: await deleteRows(tx, SUBJECT_FIRES, [projectId, subject.kind, subject.externalId, eventIds]) } }),
  };
}
