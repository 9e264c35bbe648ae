// Shapes of behaviour that other domains may use by value (the architecture lets a domain import
// another's index.ts for types and its schemas.ts for shapes).
export { PATTERN_KINDS } from './patterns/schemas.js';
export { RFM_SEGMENTS } from './profile/schemas.js';
