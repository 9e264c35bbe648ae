// The events domain's face: the durable, pollable event log. Appends are idempotent per dedupeKey;
// higher domains subscribe to appends (alert rules) without the log knowing them.
import { bindMethods, type DomainModule } from '../platform/module.js';
import type { Runtime } from '../platform/runtime.js';
import { eventRoutes } from './routes.js';
import { EventLog } from './service.js';
import { eventsSubjectData } from './subject-data.js';

export type { AppendFollowUp, AppendHook, AppendReceipt, EmitResult } from './service.js';
export type { EventPage } from './store.js';

/** The face's methods, named once: its api type and its bound api both read them. */
const EVENTS_METHODS = ['onAppend', 'appendInTransaction', 'afterCommit', 'emit', 'list', 'get'] as const;

export type EventsApi = Pick<EventLog, (typeof EVENTS_METHODS)[number]>;

export function createEventsModule(runtime: Pick<Runtime, 'db'>): DomainModule<EventsApi> {
  const events = new EventLog(runtime.db);
  return {
    name: 'events',
    api: bindMethods(events, EVENTS_METHODS),
    routes: async (app) => app.register(eventRoutes, { events }),
    subjectData: eventsSubjectData(runtime.db),
  };
}
