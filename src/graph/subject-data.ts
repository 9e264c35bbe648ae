// The graph module's part of data-subject rights: the subject's entities and edges, the entities
// its memories mention, and on erase every entity that existed only for it.
import type { Db } from '../platform/db.js';
import type { SubjectDataHook } from '../platform/module.js';
import { idPages, keysetPages } from '../platform/subject-data.js';
import * as store from './store/subject.js';

export function graphSubjectData(db: Db): SubjectDataHook {
  return {
    async *export({ projectId, subject, memoryIds }) {
      yield* keysetPages('graph_entities', (r) => String(r.id), (after, limit) => store.subjectEntityRows(db, projectId, subject, memoryIds, after, limit));
      yield* keysetPages('graph_edges', (r) => String(r.id), (after, limit) => store.subjectEdgeRows(db, projectId, subject, memoryIds, after, limit));
      yield* idPages('graph_mentions', memoryIds, (ids) => store.subjectMentionRows(db, projectId, ids));
    },
    async erase(tx, { projectId, subject, memoryIds }) {
      return { counts: await store.eraseSubjectGraph(tx, projectId, subject, memoryIds) };
    },
  };
}
