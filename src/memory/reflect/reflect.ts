// Reflection: insight memories synthesised by the model gateway from a subject's recent confirmed
// memories. Each insight must cite the memories it rests on (its provenance, kept as
// sourceMemoryIds); one that cites none of them, repeats an existing insight of the subject (the
// same words, by the near-duplicate lexical measure, or the same text) or another of this run, or
// passes maxInsights is skipped with the reason. dryRun previews without saving. Behind
// MEMORY_REFLECTION_ENABLED and a configured gateway; each refuses clearly when off.
import { comparableWords, lexicalSimilarity } from '../../../workers/near-duplicate.js';
import { clampTo } from '../../platform/common-schemas.js';
import { NotConfiguredError } from '../../platform/errors.js';
import type { ModelGateway } from '../../platform/gateway.js';
import type { Memory } from '../schemas.js';
import type { MemoryService } from '../service.js';

export const REFLECT_LIMITS = { maxSources: { default: 20, min: 2, max: 100 }, maxInsights: { default: 3, min: 1, max: 20 } } as const;
/** An insight whose words are this alike an existing one's (lexical near-duplicate measure) repeats it. */
const DUPLICATE_LEXICAL = 0.7;
/** Memory types reflection reads: what was learned about the subject, not what the engine derived. */
const SOURCE_TYPES = new Set(['fact', 'preference', 'event', 'observation', 'rule', 'correction', 'summary', 'procedure']);

export interface ReflectInput {
  /** The end user reflected on; without it, the project's memories as a whole (insights about no one subject). */
  userId?: string;
  maxSources?: number;
  maxInsights?: number;
  dryRun?: boolean;
}

const INSIGHTS_SCHEMA = {
  name: 'insights',
  schema: {
    type: 'object',
    properties: {
      insights: {
        type: 'array',
        items: {
          type: 'object',
          properties: { content: { type: 'string' }, sourceIds: { type: 'array', items: { type: 'string' } }, confidence: { type: 'number' } },
          required: ['content', 'sourceIds', 'confidence'],
          additionalProperties: false,
        },
      },
    },
    required: ['insights'],
    additionalProperties: false,
  },
};

/** The instructions, about one person (a userId) or about a project's memories as a whole. */
const systemPrompt = (person: boolean) =>
  `You reflect on what an AI agent remembers about ${person ? 'one person' : 'the people and the work of one project'} and write insights: durable, general conclusions that no single memory states ` +
  `(a habit, a preference pattern, a likely need), each in one plain sentence${person ? ' about the person' : ''}. Cite the ids of the memories each insight rests on ` +
  '(at least two where you can). Do not restate a memory, do not repeat an existing insight, do not guess beyond the memories. ' +
  'Answer JSON: {"insights":[{"content": string, "sourceIds": [memory ids], "confidence": 0 to 1}]}.';

export class MemoryReflection {
  constructor(
    private readonly memory: Pick<MemoryService, 'list' | 'save'>,
    private readonly gateway: Pick<ModelGateway, 'chat' | 'requireConfigured'>,
    private readonly settings: { enabled: boolean },
  ) {}

  private async subjectMemories(projectId: string, userId: string | undefined, filter: { type?: string; status?: string }, limit: number): Promise<Memory[]> {
    if (userId === undefined) return this.memory.list(projectId, { ...filter, limit });
    // The clients name the subject by userId: memories about subject user:<userId> or written for that end user.
    const [bySubject, byUser] = await Promise.all([
      this.memory.list(projectId, { ...filter, subjectKind: 'user', subjectExternalId: userId, limit }),
      this.memory.list(projectId, { ...filter, userId, limit }),
    ]);
    const seen = new Set<string>();
    return [...bySubject, ...byUser]
      .filter((m) => !seen.has(m.id) && seen.add(m.id))
      .sort((a, b) => Date.parse(b.validFrom) - Date.parse(a.validFrom) || (a.id < b.id ? 1 : -1))
      .slice(0, limit);
  }

  async reflect(projectId: string, input: ReflectInput) {
    if (!this.settings.enabled) throw new NotConfiguredError('reflection is turned off for this deployment: set MEMORY_REFLECTION_ENABLED=true (it also needs MODEL_GATEWAY_URL)');
    this.gateway.requireConfigured('Reflection');
    const maxSources = Math.round(clampTo(input.maxSources, REFLECT_LIMITS.maxSources));
    const maxInsights = Math.round(clampTo(input.maxInsights, REFLECT_LIMITS.maxInsights));
    const dryRun = input.dryRun === true;
    const recent = await this.subjectMemories(projectId, input.userId, { status: 'confirmed' }, maxSources * 3);
    const sources = recent.filter((m) => SOURCE_TYPES.has(m.type)).slice(0, maxSources);
    const existing = await this.subjectMemories(projectId, input.userId, { type: 'insight' }, 200);
    const base = { userId: input.userId ?? null, dryRun, sourcesConsidered: sources.length, existingInsights: existing.length };
    if (sources.length < 2) return { ...base, insights: [], saved: [], skipped: [], model: null, usage: null, note: 'fewer than two confirmed memories to reflect on' };

    const result = await this.gateway.chat('Reflection', {
      projectId,
      schema: INSIGHTS_SCHEMA,
      messages: [
        { role: 'system', content: systemPrompt(input.userId !== undefined) },
        {
          role: 'user',
          content:
            `Memories (newest first):\n${sources.map((m) => `[${m.id}] (${m.type}, ${m.validFrom.slice(0, 10)}) ${m.content}`).join('\n')}\n\n` +
            `Existing insights (do not repeat):\n${existing.length === 0 ? '(none)' : existing.map((m) => `- ${m.content}`).join('\n')}\n\n` +
            `Write at most ${maxInsights} insight(s).`,
        },
      ],
    });

    const given = new Set(sources.map((m) => m.id));
    const kept: { content: string; sourceMemoryIds: string[]; confidence: number }[] = [];
    const skipped: { content: string; reason: string }[] = [];
    const earlier = existing.map((m) => ({ id: m.id, text: comparableWords(m.content) }));
    const proposals = Array.isArray((result.json as { insights?: unknown } | undefined)?.insights) ? (result.json as { insights: unknown[] }).insights : [];
    for (const raw of proposals) {
      const p = raw as { content?: unknown; sourceIds?: unknown; confidence?: unknown };
      const content = typeof p.content === 'string' ? p.content.trim().slice(0, 2000) : '';
      if (content.length < 10) {
        skipped.push({ content, reason: 'too short to be an insight' });
        continue;
      }
      const cited = [...new Set(Array.isArray(p.sourceIds) ? p.sourceIds.filter((id): id is string => typeof id === 'string' && given.has(id)) : [])];
      if (cited.length === 0) {
        skipped.push({ content, reason: 'cites none of the memories it was given' });
        continue;
      }
      const words = comparableWords(content);
      const twin = earlier.find((e) => lexicalSimilarity(words, e.text) >= DUPLICATE_LEXICAL);
      if (twin) {
        skipped.push({ content, reason: `repeats the existing insight ${twin.id}` });
        continue;
      }
      if (kept.some((k) => lexicalSimilarity(words, comparableWords(k.content)) >= DUPLICATE_LEXICAL)) {
        skipped.push({ content, reason: 'repeats another insight of this run' });
        continue;
      }
      if (kept.length >= maxInsights) {
        skipped.push({ content, reason: `over maxInsights (${maxInsights})` });
        continue;
      }
      const confidence = typeof p.confidence === 'number' && Number.isFinite(p.confidence) ? Math.min(1, Math.max(0, p.confidence)) : 0.7;
      kept.push({ content, sourceMemoryIds: cited, confidence });
    }

    const saved: { id: string | null; content: string; sourceMemoryIds: string[]; confidence: number }[] = [];
    for (const k of kept) {
      if (dryRun) {
        saved.push({ id: null, ...k });
        continue;
      }
      const { memory, created } = await this.memory.save(projectId, {
        type: 'insight',
        content: k.content,
        subject: input.userId === undefined ? undefined : { kind: 'user', externalId: input.userId },
        userId: input.userId,
        source: 'reflection',
        confidence: k.confidence,
        importance: 6,
        sourceMemoryIds: k.sourceMemoryIds,
        metadata: { reflection: { model: result.model, sourceMemoryIds: k.sourceMemoryIds } },
      });
      if (created) saved.push({ id: memory.id, ...k });
      else skipped.push({ content: k.content, reason: `repeats the existing insight ${memory.id}` });
    }
    // `insights` is the clients' reading of the same list (SDK-WIRE 4.2): id '' on a dry run, sourceIds.
    const insights = saved.map((i) => ({ id: i.id ?? '', content: i.content, sourceIds: i.sourceMemoryIds, confidence: i.confidence }));
    return { ...base, insights, saved, skipped, model: result.model, usage: result.usage, note: null };
  }
}
