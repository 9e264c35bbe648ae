import { Type, type Static } from 'typebox';
import { BACKFILL_DEFAULT_BATCH, BACKFILL_MAX_BATCH } from './service.js';

export const BackfillBodySchema = Type.Object(
  {
    batch: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: BACKFILL_MAX_BATCH,
        default: BACKFILL_DEFAULT_BATCH,
        description: 'How many memories without an embedding to embed in this call',
      }),
    ),
  },
  { additionalProperties: false },
);
export type BackfillBody = Static<typeof BackfillBodySchema>;

export const BackfillResultSchema = Type.Object({
  embedded: Type.Integer({ description: 'Memories embedded by this call; call again until 0' }),
});
