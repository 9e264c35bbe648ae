// Every job Lattice runs: name -> payload and result. One handler per name (see handlers below).
import type { JobHandlers, JobQueue } from './platform/queue.js';
import type { MemoryService } from './memory/service.js';
import { memoryJobs } from './memory/jobs.js';

export type JobMap = {
  'embeddings.backfill': { payload: { projectId: string; batch: number }; result: { embedded: number } };
  'embeddings.drain': { payload: { projectId: string }; result: { embedded: number } };
};

export type JobName = keyof JobMap;
export const JOB_NAMES: readonly JobName[] = ['embeddings.backfill', 'embeddings.drain'];
export type AppQueue = JobQueue<JobMap>;

export function jobHandlers(services: { memory: MemoryService }): JobHandlers<JobMap> {
  return {
    ...memoryJobs(services.memory),
  };
}
