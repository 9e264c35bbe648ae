// Queue adapters for memory jobs.
import type { JobHandlers } from '../platform/queue.js';
import type { JobMap } from '../jobs.js';
import type { MemoryCuration } from './curation.js';
import type { MemoryService } from './service.js';

type MemoryJobNames = 'embeddings.backfill' | 'embeddings.drain' | 'memory.dedup' | 'memory.consolidate' | 'memory.consolidate-all';

export function memoryJobs(memory: MemoryService, curation: MemoryCuration): Pick<JobHandlers<JobMap>, MemoryJobNames> {
  return {
    'memory.dedup': ({ projectId, ...options }) => curation.runDedup(projectId, options),
    'memory.consolidate': ({ projectId, ...options }) => curation.runConsolidate(projectId, options),
    'memory.consolidate-all': () => curation.consolidateAll(),
    'embeddings.backfill': ({ projectId, batch }) => memory.embedPending(projectId, batch),
    'embeddings.drain': ({ projectId }) => memory.drainEmbeddings(projectId),
  };
}
