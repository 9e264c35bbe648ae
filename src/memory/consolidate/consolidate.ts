// Observation consolidation (POST /admin/memory/llm-consolidate, the clients' `consolidate`): per
// subject, the memories written in a window are consolidated into observations, one per topic,
// each stating what holds now and citing the memories it rests on (type observation,
// metadata.consolidated, metadata.topic, sourceMemoryIds). A topic's observation is created the
// first time; when later memories only add evidence its provenance grows (updated); when what holds
// changed, a new observation supersedes the old one (superseded), so the history stays readable.
//   - The model path, when the deployment has a model gateway and the project the
//     FEATURE_MEMORY_INTELLIGENCE entitlement: the model proposes the observations (topic, sentence,
//     cited ids); one that cites none of the memories it was given, or is too short, is skipped.
//   - The heuristic path otherwise: the single-valued facts observe recognised (metadata.slot: a
//     plan, an address, an employer ...) with at least two statements in the window give one
//     observation per slot, whose sentence is the newest statement.
// The answer says which path ran.
import type { Subject } from '../../platform/common-schemas.js';
import type { Db } from '../../platform/db.js';
import type { ModelGateway } from '../../platform/gateway.js';
import type { Memory } from '../schemas.js';
import type { MemoryService } from '../service.js';
import * as store from './store.js';
import { appendTo } from '../../platform/collections.js';

export const LLM_CONSOLIDATE = { windowDays: { default: 30, min: 1, max: 365 }, maxSubjects: 200, maxSources: 100 } as const;

export interface LlmConsolidateInput {
  subject?: Subject;
  windowDays?: number;
  dryRun?: boolean;
}

export interface LlmConsolidateResult {
  subjectsConsidered: number;
  observationsCreated: number;
  observationsUpdated: number;
  observationsSuperseded: number;
  method: 'model' | 'heuristic';
  /** Why the heuristic path ran, when it did. */
  methodReason: string | null;
  dryRun: boolean;
  /** More subjects had memories in the window than one call takes (the first maxSubjects, by kind and id, were). */
  subjectsCapped: boolean;
  skipped: { subject: Subject; content: string; reason: string }[];
}

/** One observation a path proposes for a subject. */
interface Proposal {
  topic: string;
  content: string;
  sourceIds: string[];
}

const OBSERVATIONS_SCHEMA = {
  name: 'observations',
  schema: {
    type: 'object',
    properties: {
      observations: {
        type: 'array',
        items: {
          type: 'object',
          properties: { topic: { type: 'string' }, content: { type: 'string' }, sourceIds: { type: 'array', items: { type: 'string' } } },
          required: ['topic', 'content', 'sourceIds'],
          additionalProperties: false,
        },
      },
    },
    required: ['observations'],
    additionalProperties: false,
  },
};

const SYSTEM_PROMPT =
  'You consolidate what an AI agent remembers about one subject (a person, a customer) into observations: one per topic ' +
  '(a short lowercase key such as plan, address, employer, diet, family, travel), each one plain sentence saying what holds now. ' +
  'Where memories disagree, the newer one holds; say what changed when it matters. Cite the ids of the memories each observation rests on. ' +
  'Keep the topic of an existing observation when you restate or update it. Do not guess beyond the memories. ' +
  'Answer JSON: {"observations":[{"topic": string, "content": string, "sourceIds": [memory ids]}]}.';

const topicKey = (topic: string) =>
  topic
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 60);
const sameText = (a: string, b: string) => a.trim().replace(/\s+/g, ' ').toLowerCase() === b.trim().replace(/\s+/g, ' ').toLowerCase();

export class ObservationConsolidation {
  constructor(
    private readonly db: Db,
    private readonly memory: Pick<MemoryService, 'save' | 'supersede'>,
    private readonly gateway: Pick<ModelGateway, 'chat' | 'configured'>,
    private readonly entitled: (projectId: string) => Promise<boolean>,
  ) {}

  async consolidate(projectId: string, input: LlmConsolidateInput, now = new Date()): Promise<LlmConsolidateResult> {
    const windowDays = input.windowDays ?? LLM_CONSOLIDATE.windowDays.default;
    const since = new Date(now.getTime() - windowDays * 86_400_000);
    const dryRun = input.dryRun === true;
    const methodReason = !this.gateway.configured
      ? 'no model gateway is configured (MODEL_GATEWAY_URL)'
      : !(await this.entitled(projectId))
        ? 'the project lacks the FEATURE_MEMORY_INTELLIGENCE entitlement'
        : null;
    const found = input.subject ? [input.subject] : await store.subjectsWrittenSince(this.db, projectId, since, LLM_CONSOLIDATE.maxSubjects + 1);
    const subjects = found.slice(0, LLM_CONSOLIDATE.maxSubjects);
    const result: LlmConsolidateResult = {
      subjectsConsidered: 0,
      observationsCreated: 0,
      observationsUpdated: 0,
      observationsSuperseded: 0,
      method: methodReason === null ? 'model' : 'heuristic',
      methodReason,
      dryRun,
      subjectsCapped: found.length > subjects.length,
      skipped: [],
    };
    for (const subject of subjects) {
      const sources = await store.sourcesOf(this.db, projectId, subject, since, LLM_CONSOLIDATE.maxSources);
      if (sources.length === 0) continue;
      result.subjectsConsidered++;
      const existing = await store.observationsOf(this.db, projectId, subject);
      const proposals = methodReason === null ? await this.fromModel(projectId, subject, sources, existing, result) : fromSlots(sources);
      for (const p of proposals) await this.apply(projectId, subject, p, existing.get(p.topic), sources, result);
    }
    return result;
  }

  /** Creates, grows or supersedes the topic's observation, counting what it did (or would do). */
  private async apply(projectId: string, subject: Subject, p: Proposal, current: Memory | undefined, sources: readonly Memory[], result: LlmConsolidateResult): Promise<void> {
    if (current && sameText(current.content, p.content)) {
      const added = p.sourceIds.filter((id) => !current.sourceMemoryIds.includes(id));
      if (added.length === 0) return;
      result.observationsUpdated++;
      if (!result.dryRun) await store.addSources(this.db, projectId, current.id, added);
      return;
    }
    result.observationsCreated++;
    if (current) result.observationsSuperseded++;
    if (result.dryRun) return;
    const cited = sources.filter((m) => p.sourceIds.includes(m.id));
    const { memory } = await this.memory.save(projectId, {
      content: p.content,
      type: 'observation',
      subject,
      source: 'consolidation',
      importance: Math.max(...cited.map((m) => m.importance)),
      sourceMemoryIds: p.sourceIds,
      metadata: { consolidated: true, topic: p.topic, method: result.method },
    });
    if (current) await this.memory.supersede(projectId, [current.id], memory.id);
  }

  private async fromModel(projectId: string, subject: Subject, sources: readonly Memory[], existing: ReadonlyMap<string, Memory>, result: LlmConsolidateResult): Promise<Proposal[]> {
    const answer = await this.gateway.chat('Consolidation', {
      projectId,
      schema: OBSERVATIONS_SCHEMA,
      messages: [
        { role: 'system', content: SYSTEM_PROMPT },
        {
          role: 'user',
          content:
            `Subject: ${subject.kind}:${subject.externalId}\n\nMemories (newest first):\n` +
            sources.map((m) => `[${m.id}] (${m.type}, ${m.validFrom.slice(0, 10)}) ${m.content}`).join('\n') +
            `\n\nExisting observations:\n${existing.size === 0 ? '(none)' : [...existing].map(([topic, m]) => `- ${topic}: ${m.content}`).join('\n')}`,
        },
      ],
    });
    const given = new Set(sources.map((m) => m.id));
    const raw = (answer.json as { observations?: unknown } | undefined)?.observations;
    const proposals = new Map<string, Proposal>();
    for (const item of Array.isArray(raw) ? raw : []) {
      const o = item as { topic?: unknown; content?: unknown; sourceIds?: unknown };
      const content = typeof o.content === 'string' ? o.content.trim().slice(0, 2000) : '';
      const topic = typeof o.topic === 'string' ? topicKey(o.topic) : '';
      const cited = [...new Set(Array.isArray(o.sourceIds) ? o.sourceIds.filter((id): id is string => typeof id === 'string' && given.has(id)) : [])].sort();
      const reason =
        content.length < 10 ? 'too short to be an observation' : topic === '' ? 'no topic' : cited.length === 0 ? 'cites none of the memories it was given' : proposals.has(topic) ? `a second observation of topic ${topic}` : null;
      if (reason) result.skipped.push({ subject, content, reason });
      else proposals.set(topic, { topic, content, sourceIds: cited });
    }
    return [...proposals.values()];
  }
}

/** The heuristic path: one observation per slot with two or more statements, the newest one's sentence. */
function fromSlots(sources: readonly Memory[]): Proposal[] {
  const slots = new Map<string, Memory[]>();
  for (const m of sources) {
    const slot = typeof m.metadata?.slot === 'string' ? topicKey(m.metadata.slot) : '';
    if (slot !== '') appendTo(slots, slot, m);
  }
  return [...slots]
    .filter(([, statements]) => statements.length >= 2)
    .map(([topic, statements]) => ({ topic, content: statements[0]!.content, sourceIds: statements.map((m) => m.id).sort() }));
}
