import { Type, type Static } from 'typebox';
import { SubjectSchema, Timestamp } from '../../platform/common-schemas.js';
import { MemoryScopeSchema, MemoryStatusSchema, MemoryTypeSchema } from '../schemas.js';

export const SearchBodySchema = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 2000, description: 'What to look for, in natural language' }),
    scope: Type.Optional(MemoryScopeSchema),
    scopes: Type.Optional(Type.Array(MemoryScopeSchema, { minItems: 1, maxItems: 6, description: 'Any of these scopes' })),
    type: Type.Optional(MemoryTypeSchema),
    status: Type.Optional(MemoryStatusSchema),
    category: Type.Optional(Type.String({ maxLength: 100 })),
    subject: Type.Optional(SubjectSchema),
    chatIdentityId: Type.Optional(Type.String({ maxLength: 256, description: 'Only memories about this end user' })),
    chatbotId: Type.Optional(Type.String({ maxLength: 256, description: 'Only memories written by this agent' })),
    asOf: Type.Optional(Timestamp('Search the bi-temporal slice valid at this instant, superseded memories included')),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, default: 0 })),
    minScore: Type.Optional(Type.Number({ minimum: 0, maximum: 1.2, default: 0, description: 'Drop hits scoring below this' })),
    referenceTime: Type.Optional(
      Timestamp('The instant the query\'s words about time ("last week", "in May", "two weeks ago") are read against, and recency is measured from; default now'),
    ),
    brainId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: "Search this brain's memories (metadata.brainId) instead: the project's own brain, or another project's published PUBLIC or UNLISTED one (read-only; its hits are that project's memories); 404 otherwise",
      }),
    ),
  },
  { additionalProperties: false },
);
export type SearchBody = Static<typeof SearchBodySchema>;

export const SearchHitSchema = Type.Object({
  id: Type.String(),
  type: MemoryTypeSchema,
  kind: MemoryTypeSchema,
  content: Type.String(),
  category: Type.Union([Type.String(), Type.Null()]),
  metadata: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  scope: MemoryScopeSchema,
  status: MemoryStatusSchema,
  importance: Type.Number(),
  subject: Type.Union([SubjectSchema, Type.Null()]),
  validFrom: Timestamp(),
  validTo: Type.Union([Timestamp(), Type.Null()]),
  supersededById: Type.Union([Type.String(), Type.Null()]),
  similarity: Type.Number({ description: 'Relevance to the query in [0, 1]: 0.75 x (cosine - hubness) + 0.25 x normalised BM25' }),
  score: Type.Number({ description: 'The ranking score: 0.85 relevance + 0.025 recency + 0.1 importance (+ graph bonus) (+ time) (+ names) (- stale)' }),
  scoreParts: Type.Object({
    semantic: Type.Union([Type.Number(), Type.Null()], { description: 'Cosine similarity; null when the memory is not embedded yet' }),
    hubness: Type.Number({
      description:
        'What relevance takes off the cosine because the memory is close to many texts (CSLS): its mean cosine to its 10 nearest fellow candidates, less the candidates\' mean. Negative for a memory closer to the query than to its neighbours; 0 without an embedding',
    }),
    lexical: Type.Number({ description: 'BM25 of the query over the memory, divided by the best BM25 among the candidates: 1 for the best match by words, 0 when no query word occurs' }),
    context: Type.Number({
      description:
        "The part of lexical that the turns beside the memory in its session gave (0.3 x the BM25 of the turn before it plus 0.3 x the turn after it), when the search's collection (a subject) is small enough to be scored whole",
    }),
    relevance: Type.Number({ description: '0.75 x (semantic - hubness) (0 without an embedding) + 0.25 x lexical, within [0, 1]' }),
    recency: Type.Number({ description: 'Halves every 30 days since validFrom or the last recall' }),
    importance: Type.Number({ description: 'importance / 10' }),
    graph: Type.Number({ description: 'Associative-recall bonus (0 unless MEMORY_ASSOCIATIVE_RECALL_ENABLED)' }),
    time: Type.Number({
      description:
        'When the query names a span of time ("last week", "in May 2023", "two weeks ago", read against referenceTime): 0.1 for a memory whose validFrom falls within it, less the further outside (0 beyond half the span\'s length, at least 3 days); 0 when the query names none',
    }),
    names: Type.Number({
      description:
        'When the query gives names (capitalised words: people, places, organisations): 0.02 x the share of them the memory holds, in its words or in the entities observe found in it; 0 when the query names none',
    }),
    stale: Type.Number({
      description:
        'How much the score was lowered so that the memory ranks under a newer live memory of the same subject holding the same fact with another value (the same slot, or a short restatement sharing at least half its words), or under the memory of the same slot the project\'s precedence policy puts first (GET /admin/memory/precedence); 0 when none',
    }),
    vectorRank: Type.Union([Type.Integer(), Type.Null()], { description: 'Rank by cosine among the candidates (1 = nearest)' }),
    textRank: Type.Union([Type.Integer(), Type.Null()], { description: 'Rank by BM25 among the candidates (1 = best); null when no query word occurs' }),
  }),
  explanation: Type.String(),
});
