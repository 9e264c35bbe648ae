import { Type } from 'typebox';
import { SubjectSchema } from '../platform/common-schemas.js';

export const InsightSchema = Type.Object({
  subject: SubjectSchema,
  memoryCount: Type.Integer(),
  firstMemoryAt: Type.String({ format: 'date-time' }),
  lastMemoryAt: Type.String({ format: 'date-time' }),
  daysSinceLastMemory: Type.Number({ description: 'Silence: days since the newest memory about the subject' }),
  avgImportance: Type.Number(),
  maxImportance: Type.Number(),
});
