// The media module's part of data-subject rights: the files a subject's memories refer to. The
// bytes are deleted once the erase has committed (a blob store is no transaction), and only when
// no surviving memory refers to the same content (blobs are kept once per content).
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../platform/db.js';
import type { SubjectDataHook } from '../platform/module.js';
import { idPages } from '../platform/subject-data.js';
import type { BlobStore } from './blobs.js';
import * as store from './store.js';

export function mediaSubjectData(db: Db, blobs: BlobStore, log: FastifyBaseLogger): SubjectDataHook {
  return {
    export: ({ projectId, memoryIds }) => idPages('blobs', memoryIds, (ids) => store.blobRefs(db, projectId, ids)),
    async erase(tx, { projectId, memoryIds }) {
      const doomed = await store.blobsOnlyOf(tx, projectId, memoryIds);
      return {
        counts: { blobs: doomed.length },
        afterCommit: async () => {
          for (const blobUri of doomed) {
            // A memory written since (the same bytes attached again) keeps the blob.
            if (await store.blobReferenced(db, projectId, blobUri)) continue;
            await blobs.delete(projectId, blobUri).catch((error: unknown) => log.error({ err: error, projectId, blobUri }, 'deleting an erased subject\'s blob failed'));
          }
        },
      };
    },
  };
}
