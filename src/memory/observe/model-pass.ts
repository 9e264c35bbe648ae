// The model-based extraction pass of observe: durable facts a language model finds in narrative
// text that the heuristic extractor missed, added to the same saved set. Only with
// MEMORY_LLM_MEMORY_EXTRACTION_ENABLED, a configured gateway and the project's
// FEATURE_MEMORY_INTELLIGENCE entitlement; best-effort: any transport, quota or parse error is
// logged and the pass adds nothing, never failing the write. Its tokens are metered by the gateway.
import type { FastifyBaseLogger } from 'fastify';
import type { ModelGateway } from '../../platform/gateway.js';
import type { Candidate } from '../extract/extract.js';

const FACTS_SCHEMA = {
  name: 'facts',
  schema: {
    type: 'object',
    properties: {
      facts: {
        type: 'array',
        items: {
          type: 'object',
          properties: { content: { type: 'string' }, type: { type: 'string', enum: ['fact', 'preference', 'event'] }, importance: { type: 'number' } },
          required: ['content', 'type', 'importance'],
          additionalProperties: false,
        },
      },
    },
    required: ['facts'],
    additionalProperties: false,
  },
};

const SYSTEM_PROMPT =
  'You read one turn of a conversation and list the durable facts it states about the person speaking: who they are, what they have, ' +
  'prefer, plan or did, that would still matter next month. One short sentence each, in the first person as they would say it. ' +
  'No small talk, no questions, no guesses. Answer JSON: {"facts":[{"content": string, "type": "fact"|"preference"|"event", "importance": 0 to 10}]}.';

/** Below this many characters a turn is too short for the pass. */
const MIN_TEXT = 40;
const MAX_FACTS = 20;

export class ModelPass {
  constructor(
    private readonly gateway: Pick<ModelGateway, 'chat' | 'configured'>,
    private readonly entitled: (projectId: string) => Promise<boolean>,
    private readonly log: FastifyBaseLogger,
    private readonly settings: { enabled: boolean },
  ) {}

  async candidates(projectId: string, text: string, role: string): Promise<Candidate[]> {
    if (!this.settings.enabled || !this.gateway.configured || role === 'system' || text.trim().length < MIN_TEXT) return [];
    try {
      if (!(await this.entitled(projectId))) return [];
      const result = await this.gateway.chat('Model-based observe', {
        projectId,
        schema: FACTS_SCHEMA,
        messages: [
          { role: 'system', content: SYSTEM_PROMPT },
          { role: 'user', content: `${role === 'assistant' ? 'The assistant said' : 'The person said'}:\n${text.slice(0, 20_000)}` },
        ],
      });
      const facts = (result.json as { facts?: unknown } | undefined)?.facts;
      if (!Array.isArray(facts)) return [];
      return facts.slice(0, MAX_FACTS).flatMap((raw): Candidate[] => {
        const f = raw as { content?: unknown; type?: unknown; importance?: unknown };
        const content = typeof f.content === 'string' ? f.content.trim().replace(/\s+/g, ' ') : '';
        if (content.length < 5 || content.length > 500) return [];
        const type = f.type === 'preference' || f.type === 'event' ? f.type : 'fact';
        const importance = typeof f.importance === 'number' && Number.isFinite(f.importance) ? Math.round(Math.min(10, Math.max(0, f.importance))) : 5;
        return [{ content: /[.!?]$/.test(content) ? content : `${content}.`, type, importance, confidence: 0.8, correction: false, entities: [] }];
      });
    } catch (error) {
      this.log.warn({ err: error, projectId }, 'model-based observe failed; the heuristic result stands');
      return [];
    }
  }
}
