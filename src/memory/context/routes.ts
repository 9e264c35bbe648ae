// POST /memory/context (SDK-WIRE.md 4.1): the conversation context the public clients' model wrappers
// fetch before every model call.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Nullable, SubjectSchema } from '../../platform/common-schemas.js';
import type { Brains } from '../brains/brains.js';
import { CONVERSATION_CONTEXT, type ConversationContexts } from './context.js';
import { MAX_QUERY_CHARS } from './conversation.js';

const { tokenBudget, limit } = CONVERSATION_CONTEXT;

const BodySchema = Type.Object(
  {
    turns: Type.Optional(
      Type.Array(
        Type.Object(
          {
            role: Type.Optional(Type.String({ maxLength: 100, description: 'user, assistant, system, tool, or the name of the person speaking' })),
            content: Type.String({ maxLength: 20_000 }),
          },
          { additionalProperties: false },
        ),
        { maxItems: 200 },
      ),
    ),
    conversation: Type.Optional(Type.String({ maxLength: 100_000, description: 'The conversation as one text: a line "Name: ..." starts a turn' })),
    intent: Type.Optional(Type.String({ maxLength: 2000, description: 'What the caller is about to do; searched before the last turn' })),
    tokenBudget: Type.Optional(Type.Number({ description: `Default ${tokenBudget.default}, clamped to [${tokenBudget.min}, ${tokenBudget.max}] (o200k_base tokens of the context text)` })),
    limit: Type.Optional(Type.Number({ description: `Memories searched before the budget; default ${limit.default}, clamped to [${limit.min}, ${limit.max}]` })),
    excludeCategories: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100, description: 'Memories of these categories are left out' })),
    brainId: Type.Optional(Type.String({ maxLength: 200 })),
    subject: Type.Optional(SubjectSchema),
    userId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    referenceTime: Type.Optional(Type.String({ format: 'date-time', description: "The instant the conversation's words about time are read against; default now" })),
  },
  { additionalProperties: false },
);

const AnswerSchema = Type.Object({
  context: Nullable(Type.String({ description: 'A header line, then one line per memory, best first: "- <content> (<type>, <valid from date>)"' })),
  subject: Nullable(
    Type.Object({
      kind: Type.String(),
      externalId: Type.String(),
      origin: Type.Union([Type.Literal('explicit'), Type.Literal('speaker-first-person'), Type.Literal('speaker'), Type.Literal('user')]),
      confidence: Type.Number(),
    }),
  ),
  memoryIds: Type.Array(Type.String(), { description: 'The memories in the context, in its order' }),
  tokensEstimate: Type.Integer({ description: 'Exact o200k_base tokens of `context`; never above tokenBudget' }),
  tokenBudget: Type.Integer(),
  droppedForBudget: Type.Integer({ description: 'Memories found that did not fit the budget' }),
  query: Type.String({ description: 'What was searched' }),
  reason: Nullable(Type.String({ description: 'Why context is null' })),
});

export const conversationContextRoutes: FastifyPluginAsyncTypebox<{ contexts: ConversationContexts; brains: Pick<Brains, 'readable'> }> = async (app, { contexts, brains }) => {
  app.post(
    '/memory/context',
    {
      config: { permission: 'READ_MEMORY', audit: 'read.context' },
      schema: {
        tags: ['memory'],
        summary: 'The memories a conversation needs, packed into a context text within a token budget',
        description:
          'The public clients\' OpenAI, Anthropic and AI SDK wrappers call it before every model call. From `turns` (or a `conversation` string of "Name: text" lines): ' +
          'the subject is the caller\'s `subject` (origin explicit, confidence 1); else a person\'s turn naming its speaker in the first person ("I\'m Priya", "my name is Priya", origin speaker-first-person, 0.8); else a person\'s turn whose role is a name (origin speaker, 0.6); else `userId` (origin user, 0.5). ' +
          'A speaker is the subject { kind: user, externalId: the name in lower case }. A candidate the project holds no live memory about is passed over (an explicit subject never is). ' +
          `The query is \`intent\` then the last turn a person wrote (at most ${MAX_QUERY_CHARS} characters, its end kept), searched with the project's search (as POST /memory/search) within the subject, \`limit\` memories, \`excludeCategories\` left out. ` +
          'A conversation that names no one is answered from the memories about no subject (the project\'s shared knowledge), never from a subject guessed. ' +
          'The memories are packed whole, best first, while the text stays within tokenBudget (o200k_base). context is null, with `reason`, when nothing is remembered about the subject, nothing matches, or the budget holds not even one memory. ' +
          '`brainId`: answer from that brain\'s memories instead (metadata.brainId; the project\'s own brain, or another project\'s published PUBLIC or UNLISTED one; 404 otherwise); the subject is then null.',
        body: BodySchema,
        response: { 200: AnswerSchema },
      },
    },
    async (request) => {
      const { brainId, referenceTime, ...body } = request.body;
      const brain = brainId === undefined ? undefined : await brains.readable(request.principal.projectId, brainId);
      const answer = await contexts.build(request.principal.projectId, {
        ...body,
        referenceTime: referenceTime === undefined ? undefined : new Date(referenceTime),
        ...(brain ? { brain: { id: brain.id, projectId: brain.projectId, name: brain.name } } : {}),
      });
      request.auditDetail = { memoryIds: answer.memoryIds, resultCount: answer.memoryIds.length, metadata: { subjectOrigin: answer.subject?.origin ?? null } };
      return answer;
    },
  );
};
