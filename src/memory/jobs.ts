// Queue adapters for memory jobs.
import type { JobHandlers } from '../platform/queue.js';
import type { JobMap } from '../jobs.js';
import type { MemoryService } from './service.js';

export function memoryJobs(memory: MemoryService): Pick<JobHandlers<JobMap>, 'embeddings.backfill' | 'embeddings.drain'> {
  return {
    'embeddings.backfill': ({ projectId, batch }) => memory.embedPending(projectId, batch),
    'embeddings.drain': ({ projectId }) => memory.drainEmbeddings(projectId),
  };
}
