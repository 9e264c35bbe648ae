// The media domain's face: files kept as blobs and remembered (attachments), and read by the model
// gateway into memories (media ingest).
import { join } from 'node:path';
import type { MemoryApi } from '../memory/index.js';
import { bindMethods, type DomainModule } from '../platform/module.js';
import type { Runtime } from '../platform/runtime.js';
import { BlobStore } from './blobs.js';
import { mediaRoutes } from './routes.js';
import { MediaService } from './service.js';

export type MediaApi = Pick<MediaService, 'attach'>;

export function createMediaModule(runtime: Pick<Runtime, 'config'>, deps: { memory: Pick<MemoryApi, 'save'> }): DomainModule<MediaApi> {
  const { config } = runtime;
  const blobs = new BlobStore(config.blobDir ?? join(config.dataDir, 'blobs'));
  const media = new MediaService(deps.memory, blobs, { maxBytes: config.mediaMaxBytes });
  return {
    name: 'media',
    api: bindMethods(media, ['attach']),
    routes: async (app) => app.register(mediaRoutes, { media, maxBytes: config.mediaMaxBytes }),
  };
}
