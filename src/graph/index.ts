// The graph domain's face: a bi-temporal knowledge graph of entities and edges, resolved by name,
// extracted from memories (a heuristic job, or the caller's model over MCP), traversed at any
// instant, and folded back into recall (prefetch, associative search bonus, onboarding briefings).
import type { BehaviorApi } from '../behavior/index.js';
import type { MemoryApi } from '../memory/index.js';
import { bindMethods, type DomainModule } from '../platform/module.js';
import type { Runtime } from '../platform/runtime.js';
import { EXTRACT_SWEEP_MS, GraphExtraction, graphJobs, type GraphJobs } from './extraction.js';
import { graphTools } from './mcp.js';
import { GraphRecall } from './recall.js';
import { graphRoutes } from './routes.js';
import { EdgeSchema, EntitySchema, TraversalEdgeSchema } from './schemas.js';
import { GraphService } from './service.js';
import { extractionBacklog } from './store/extractions.js';
import { graphSubjectData } from './subject-data.js';

export type { GraphJobs } from './extraction.js';

/** The face's methods, named once: its api type and its bound api both read them. */
const GRAPH_SERVICE_METHODS = ['createEntity', 'createEdge', 'retireEdge', 'retireEntity', 'mergeEntity', 'traverse', 'query', 'stats', 'setExtraction'] as const;
const GRAPH_EXTRACTION_METHODS = ['backfill', 'sweep', 'pending', 'commit'] as const;
const GRAPH_RECALL_METHODS = ['prefetch', 'bonus', 'onboarding'] as const;

export type GraphApi = Pick<GraphService, (typeof GRAPH_SERVICE_METHODS)[number]> &
  Pick<GraphExtraction, (typeof GRAPH_EXTRACTION_METHODS)[number]> &
  Pick<GraphRecall, (typeof GRAPH_RECALL_METHODS)[number]>;

export function createGraphModule(
  runtime: Pick<Runtime, 'config' | 'db' | 'pool'>,
  deps: { memory: Pick<MemoryApi, 'getMany' | 'setGraphBonus'>; behavior: Pick<BehaviorApi, 'setContactGraph'> },
): DomainModule<GraphApi, GraphJobs> {
  const settings = { platformExtraction: runtime.config.graphExtraction };
  const graph = new GraphService(runtime.db, settings);
  const extraction = new GraphExtraction(runtime.db, graph, settings);
  const recall = new GraphRecall(runtime.db, deps.memory, runtime.pool);
  // MEMORY_ASSOCIATIVE_RECALL_ENABLED: ranked search adds the graph's bounded bonus.
  if (runtime.config.associativeRecall) deps.memory.setGraphBonus((projectId, ids) => recall.bonus(projectId, ids));
  // A contact's context (behaviour) shows its part of the graph.
  deps.behavior.setContactGraph((projectId, subjects, options) => recall.subjectGraph(projectId, subjects, options));
  return {
    name: 'graph',
    api: {
      ...bindMethods(graph, GRAPH_SERVICE_METHODS),
      ...bindMethods(extraction, GRAPH_EXTRACTION_METHODS),
      ...bindMethods(recall, GRAPH_RECALL_METHODS),
    },
    routes: async (app) => app.register(graphRoutes, { graph, extraction, recall }),
    schemas: [EntitySchema, EdgeSchema, TraversalEdgeSchema],
    jobs: graphJobs(extraction),
    schedules: [{ id: 'graph.extract-sweep', job: 'graph.extract-sweep', payload: {}, everyMs: EXTRACT_SWEEP_MS }],
    tools: graphTools(extraction),
    subjectData: graphSubjectData(runtime.db),
    // Shown once the project opted in to extraction; the same count as the backfill's `remaining`.
    backlog: async (projectId) => {
      const backlog = await extractionBacklog(runtime.db, projectId);
      if (!backlog) return [];
      const worker = settings.platformExtraction
        ? `the extraction sweep takes them every ${EXTRACT_SWEEP_MS / 1000} s (or POST /admin/memory/graph/backfill, or an MCP client's model)`
        : "heuristic extraction is off for this deployment (GRAPH_EXTRACTION_ENABLED=false), so only an MCP client's model takes them";
      return [
        {
          name: 'extraction',
          description: `Live memories not yet linked into the knowledge graph, or changed since their extraction: ${worker}.`,
          pending: backlog.pending,
          done: backlog.total - backlog.pending,
          total: backlog.total,
          oldestPendingAt: backlog.oldestPendingAt,
        },
      ];
    },
  };
}
