// The media domain's face: files kept as blobs and remembered (attachments), and read by the model
// gateway into memories (media ingest).
import { join } from 'node:path';
import type { MemoryApi } from '../memory/index.js';
import { bindMethods, type DomainModule } from '../platform/module.js';
import type { Runtime } from '../platform/runtime.js';
import type { TenancyApi } from '../tenancy/index.js';
import { BlobStore } from './blobs.js';
import { mediaRoutes } from './routes.js';
import { MediaService } from './service.js';

export type MediaApi = Pick<MediaService, 'attach' | 'ingest'>;

export function createMediaModule(
  runtime: Pick<Runtime, 'config' | 'gateway'>,
  deps: { memory: Pick<MemoryApi, 'save' | 'observe'>; tenancy: Pick<TenancyApi, 'metered'> },
): DomainModule<MediaApi> {
  const { config } = runtime;
  const blobs = new BlobStore(config.blobDir ?? join(config.dataDir, 'blobs'));
  const media = new MediaService(deps.memory, blobs, runtime.gateway, deps.tenancy, { maxBytes: config.mediaMaxBytes, multimodal: config.multimodal });
  return {
    name: 'media',
    api: bindMethods(media, ['attach', 'ingest']),
    routes: async (app) => app.register(mediaRoutes, { media, maxBytes: config.mediaMaxBytes }),
  };
}
