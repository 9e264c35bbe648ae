// The graph's store, one file per table family: entities.ts (graph_entities, graph_entity_names),
// edges.ts (graph_edges), mentions.ts (graph_mentions), extractions.ts (graph_extractions,
// graph_settings), stats.ts (counts across them) and subject.ts (one subject's rows, for
// data-subject rights). The service, extraction and recall read it as one namespace.
export * from './edges.js';
export * from './entities.js';
export * from './extractions.js';
export * from './mentions.js';
export * from './stats.js';
export * from './subject.js';
