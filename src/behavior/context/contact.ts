// A contact's context (GET /lattice/contacts/{contactId}/context, the public clients'
// lattice.getContext): the contact card, its patterns, its recent events and memories and its part
// of the graph, as they stood at an instant. contactId is a subject's externalId of any kind (as the
// contact's patterns route reads it); every subject with that id is one contact.
import type { Subject } from '../../platform/common-schemas.js';
import type { Db } from '../../platform/db.js';
import { NotFoundError } from '../../platform/errors.js';
import { readActivity } from '../activity/store.js';
import { patternsAt } from '../patterns/store.js';
import type { Profiler } from '../profile/profile.js';
import * as store from './contact-store.js';
import { CONTACT_CONTEXT_LIMITS, type ContactContext, type ContactContextQuery } from './schemas.js';

/** A contact's part of the graph; the graph domain, built after this one, plugs it in. */
export type ContactGraph = (
  projectId: string,
  subjects: readonly Subject[],
  options: { at: Date; hops: number; memoryIds: readonly string[] },
) => Promise<{ entities: NonNullable<ContactContext['entities']>; edges: NonNullable<ContactContext['edges']>; subjectEntityIds: readonly string[] }>;

/** The typed attributes a contact card reads, by the card's field. */
const CARD_ATTRIBUTES = {
  displayName: ['display_name', 'displayName', 'name', 'full_name'],
  email: ['email'],
  phone: ['phone', 'phone_number'],
  tags: ['tags'],
} as const;

export class ContactContexts {
  private graph: ContactGraph | undefined;

  constructor(
    private readonly db: Db,
    private readonly profiler: Pick<Profiler, 'profile'>,
  ) {}

  setContactGraph(graph: ContactGraph | undefined): void {
    this.graph = graph;
  }

  async build(projectId: string, contactId: string, query: ContactContextQuery): Promise<ContactContext> {
    const at = query.asOf === undefined ? new Date() : new Date(query.asOf);
    const subjects = await store.contactSubjects(this.db, projectId, contactId, query.subjectKind);
    if (subjects.length === 0) throw new NotFoundError(`contact ${contactId} not found: no memory, event or observation of this project is about a subject with that externalId`);
    const keys = Object.values(CARD_ATTRIBUTES).flat();
    const [activePatterns, recentEvents, recentMemories, readings, activity, segment] = await Promise.all([
      patternsAt(this.db, projectId, subjects, query.asOf === undefined ? undefined : at),
      store.recentEvents(this.db, projectId, subjects, at, query.eventsLimit ?? CONTACT_CONTEXT_LIMITS.events.default),
      store.recentMemories(this.db, projectId, subjects, at, query.memoriesLimit ?? CONTACT_CONTEXT_LIMITS.memories.default),
      store.latestReadings(this.db, projectId, subjects, keys, at),
      readActivity(this.db, projectId, subjects, new Date(0), new Date(at.getTime() + 1)),
      // A profile scores recency against the project now: a past instant has no segment.
      query.asOf === undefined ? this.segment(projectId, subjects) : undefined,
    ]);
    const graph = this.graph && (await this.graph(projectId, subjects, { at, hops: query.graphHops ?? CONTACT_CONTEXT_LIMITS.hops.default, memoryIds: recentMemories.map((m) => m.id) }));
    const reading = (field: keyof typeof CARD_ATTRIBUTES) => CARD_ATTRIBUTES[field].map((k) => readings.get(k)).find((v) => v !== undefined && v.trim() !== '');
    const all = activity.flatMap((s) => s.activities);
    const amounts = all.flatMap((a) => (a.amount === null ? [] : [a.amount]));
    const last = all.reduce((max, a) => Math.max(max, a.at), -Infinity);
    const standsFor = graph?.entities.find((e) => e.name !== '' && graph.subjectEntityIds.includes(e.id));
    const displayName = reading('displayName') ?? standsFor?.name;
    const tags = reading('tags')?.split(',').map((t) => t.trim()).filter((t) => t !== '');
    return {
      contactId,
      contact: {
        id: contactId,
        ...(displayName !== undefined ? { displayName } : {}),
        ...(reading('email') !== undefined ? { email: reading('email')! } : {}),
        ...(reading('phone') !== undefined ? { phone: reading('phone')! } : {}),
        ...(segment ? { segment } : {}),
        ...(tags && tags.length > 0 ? { tags } : {}),
        ...(amounts.length > 0 ? { lifetimeValue: amounts.reduce((s, v) => s + v, 0) } : {}),
        ...(Number.isFinite(last) ? { lastInteractionAt: new Date(last).toISOString() } : {}),
      },
      activePatterns,
      recentEvents,
      recentMemories,
      ...(graph ? { entities: graph.entities, edges: graph.edges } : {}),
    };
  }

  /** The first of the contact's subjects (by kind) whose profile has a segment. */
  private async segment(projectId: string, subjects: readonly Subject[]): Promise<string | undefined> {
    for (const subject of subjects) {
      const { rfmSegment } = await this.profiler.profile(projectId, subject);
      if (rfmSegment) return rfmSegment;
    }
    return undefined;
  }
}
