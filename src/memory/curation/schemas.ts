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

export const MergeResultSchema = Type.Object({
  clustersFound: Type.Integer({ description: 'Groups of near duplicates found among the newest 10,000 live embedded memories' }),
  clustersMerged: Type.Integer({ description: 'Groups merged (on a dry run: that would be)' }),
  clustersAbstained: Type.Integer({ description: 'Groups left alone: too large, or not every pair a near duplicate' }),
  memoriesSuperseded: Type.Integer({ description: 'Memories superseded by the member they were merged into (on a dry run: that would be)' }),
  scanned: Type.Integer(),
  dryRun: Type.Boolean(),
  clusters: Type.Array(
    Type.Object({
      keptId: Type.String({ description: 'The member merged into (the strongest: confirmed, then importance, confidence, recency, age)' }),
      mergedIds: Type.Array(Type.String()),
      merged: Type.Boolean(),
      abstainedBecause: Type.Union([Type.String(), Type.Null()]),
    }),
    { description: 'Up to 100 groups, the largest first' },
  ),
});
export type MergeResult = Static<typeof MergeResultSchema>;
