// Queue adapters for memory jobs.
import type { JobHandlers } from '../platform/queue.js';
import type { JobMap } from '../jobs.js';
import type { MemoryCuration } from './curation.js';
import type { MemoryObserver } from './observe.js';
import type { MemoryService } from './service.js';

type MemoryJobNames = 'embeddings.backfill' | 'embeddings.drain' | 'memory.dedup' | 'memory.consolidate' | 'memory.consolidate-all' | 'memory.observe';

export function memoryJobs(memory: MemoryService, curation: MemoryCuration, observer: MemoryObserver): Pick<JobHandlers<JobMap>, MemoryJobNames> {
  return {
    'memory.observe': async ({ projectId, input }) => ({
      saved: (await observer.extractAndSave(projectId, { ...input, occurredAt: new Date(input.occurredAt) })).saved.length,
    }),
    'memory.dedup': ({ projectId, ...options }) => curation.runDedup(projectId, options),
    'memory.consolidate': ({ projectId, ...options }) => curation.runConsolidate(projectId, options),
    'memory.consolidate-all': () => curation.consolidateAll(),
    'embeddings.backfill': ({ projectId, batch }) => memory.embedPending(projectId, batch),
    'embeddings.drain': ({ projectId }) => memory.drainEmbeddings(projectId),
  };
}
