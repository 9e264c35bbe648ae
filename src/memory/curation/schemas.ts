// The shapes of the curation passes, defined once: the job results and the route answers.
import { Type, type Static } from 'typebox';

export const DedupResultSchema = Type.Object({
  scanned: Type.Integer({ description: 'Live embedded memories examined (the newest scanLimit)' }),
  groups: Type.Integer({ description: 'Groups of near-duplicates found' }),
  superseded: Type.Integer({ description: 'Memories marked superseded (on a dry run: that would be)' }),
  dryRun: Type.Boolean(),
  groupsDetail: Type.Array(Type.Object({ keptId: Type.String(), supersededIds: Type.Array(Type.String()) }), { description: 'Up to 100 groups' }),
});
export type DedupResult = Static<typeof DedupResultSchema>;

export const ConsolidateResultSchema = Type.Object({
  dedup: DedupResultSchema,
  decayed: Type.Integer(),
  flaggedStale: Type.Integer(),
});
export type ConsolidateResult = Static<typeof ConsolidateResultSchema>;
