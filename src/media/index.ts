// The media domain's face: files kept as blobs and remembered (attachments), and read by the model
// gateway into memories (media ingest).
import { join } from 'node:path';
import type { MemoryApi } from '../memory/index.js';
import { bindMethods, type DomainModule } from '../platform/module.js';
import type { Runtime } from '../platform/runtime.js';
import type { TenancyApi } from '../tenancy/index.js';
import { LocalBlobStore, S3BlobStore, type BlobStore } from './blobs.js';
import { mediaRoutes } from './routes.js';
import { MediaService } from './service.js';
import { blobReferenced } from './store.js';
import { mediaSubjectData } from './subject-data.js';

/** The face's methods, named once: its api type and its bound api both read them. */
const MEDIA_METHODS = ['attach', 'ingest'] as const;

export type MediaApi = Pick<MediaService, (typeof MEDIA_METHODS)[number]>;

export function createMediaModule(
  runtime: Pick<Runtime, 'config' | 'db' | 'gateway' | 'log'>,
  deps: { memory: Pick<MemoryApi, 'save' | 'observe'>; tenancy: Pick<TenancyApi, 'metered'> },
): DomainModule<MediaApi> {
  const { config } = runtime;
  const s3 = config.blobS3;
  const blobs: BlobStore = s3 ? new S3BlobStore({ ...s3, timeoutMs: config.modelGatewayTimeoutMs }) : new LocalBlobStore(config.blobDir ?? join(config.dataDir, 'blobs'));
  const media = new MediaService(deps.memory, blobs, runtime.gateway, deps.tenancy, { maxBytes: config.mediaMaxBytes, multimodal: config.multimodal }, (projectId, blobUri) =>
    blobReferenced(runtime.db, projectId, blobUri),
  );
  return {
    name: 'media',
    api: bindMethods(media, MEDIA_METHODS),
    routes: async (app) => app.register(mediaRoutes, { media, maxBytes: config.mediaMaxBytes }),
    subjectData: mediaSubjectData(runtime.db, blobs, runtime.log),
  };
}
