// The memory module's part of data-subject rights: which memories name a subject (its own and
// those derived from them, the scope's memoryIds every other module reads), their export, and their erase. Mined patterns are memories too, and
// are reported apart (SPEC.md's `patterns` and `patternsDeleted`).
import type { Db } from '../platform/db.js';
import type { SubjectDataHook } from '../platform/module.js';
import { idPages } from '../platform/subject-data.js';
import * as store from './store.js';

export function memorySubjectData(db: Db): SubjectDataHook {
  return {
    ids: async (q, projectId, subject) => ({ memoryIds: await store.subjectMemoryIds(q, projectId, subject.kind, subject.externalId) }),
    async *export({ projectId, memoryIds }) {
      yield* idPages('memories', memoryIds, (ids) => store.memoryRowsByIds(db, projectId, ids, false));
      yield* idPages('patterns', memoryIds, (ids) => store.memoryRowsByIds(db, projectId, ids, true));
    },
    async erase(tx, { projectId, memoryIds }) {
      const { memories, patterns } = await store.eraseMemories(tx, projectId, memoryIds);
      return { counts: { memories, patterns } };
    },
  };
}
