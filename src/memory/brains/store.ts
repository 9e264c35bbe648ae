// The brains table (migration 0023): one row per brain of a project.
import type { Queryable } from '../../platform/db.js';
import { iso } from '../../platform/sql.js';
import type { Brain } from './schemas.js';

interface BrainRow {
  project_id: string;
  id: string;
  external_id: string;
  name: string;
  domain: string | null;
  brain_interface: string;
  version: string;
  visibility: Brain['visibility'];
  status: Brain['status'];
  rights_attested: boolean;
  card: Brain['card'];
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'project_id, id, external_id, name, domain, brain_interface, version, visibility, status, rights_attested, card, created_at, updated_at';

const toBrain = (r: BrainRow): Brain => ({
  id: r.id,
  created: iso(r.created_at),
  updated: iso(r.updated_at),
  projectId: r.project_id,
  externalId: r.external_id,
  name: r.name,
  domain: r.domain,
  brainInterface: r.brain_interface,
  version: r.version,
  visibility: r.visibility,
  status: r.status,
  rightsAttested: r.rights_attested,
  card: r.card,
});

/** Inserts the brain; undefined when the project already has one with its externalId. */
export async function insertBrain(db: Queryable, b: Omit<Brain, 'created' | 'updated'>): Promise<Brain | undefined> {
  const { rows } = await db.query<BrainRow>(
    `INSERT INTO brains (project_id, id, external_id, name, domain, brain_interface, version, visibility, status, rights_attested, card)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb)
     ON CONFLICT (project_id, external_id) DO NOTHING RETURNING ${COLUMNS}`,
    [b.projectId, b.id, b.externalId, b.name, b.domain, b.brainInterface, b.version, b.visibility, b.status, b.rightsAttested, b.card === null ? null : JSON.stringify(b.card)],
  );
  return rows[0] && toBrain(rows[0]);
}

/** The brain with this id in any project (ids are unique across projects). */
export async function findBrain(db: Queryable, id: string): Promise<Brain | undefined> {
  const { rows } = await db.query<BrainRow>(`SELECT ${COLUMNS} FROM brains WHERE id = $1 LIMIT 1`, [id]);
  return rows[0] && toBrain(rows[0]);
}

export async function getBrain(db: Queryable, projectId: string, id: string): Promise<Brain | undefined> {
  const { rows } = await db.query<BrainRow>(`SELECT ${COLUMNS} FROM brains WHERE project_id = $1 AND id = $2`, [projectId, id]);
  return rows[0] && toBrain(rows[0]);
}

/** Writes the brain's editable fields as given. */
export async function updateBrain(db: Queryable, b: Brain): Promise<Brain | undefined> {
  const { rows } = await db.query<BrainRow>(
    `UPDATE brains SET name = $3, domain = $4, version = $5, visibility = $6, status = $7, rights_attested = $8, card = $9::jsonb, updated_at = now()
      WHERE project_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [b.projectId, b.id, b.name, b.domain, b.version, b.visibility, b.status, b.rightsAttested, b.card === null ? null : JSON.stringify(b.card)],
  );
  return rows[0] && toBrain(rows[0]);
}

export async function deleteBrain(db: Queryable, projectId: string, id: string): Promise<boolean> {
  const result = await db.query(`DELETE FROM brains WHERE project_id = $1 AND id = $2`, [projectId, id]);
  return (result.rowCount ?? 0) > 0;
}

/** Whose brains a page walks: one project's, or every project's published public brains (the catalogue). */
export type BrainShelf = { projectId: string } | { catalogue: true; domain?: string };

function shelfWhere(shelf: BrainShelf): { sql: string; params: unknown[] } {
  if ('projectId' in shelf) return { sql: 'project_id = $1', params: [shelf.projectId] };
  return { sql: "status = 'PUBLISHED' AND visibility = 'PUBLIC' AND ($1::text IS NULL OR lower(domain) = lower($1))", params: [shelf.domain ?? null] };
}

/**
 * A page of a shelf's brains, newest first (ids are time-ordered): after `after` (older) or
 * before `before` (newer), at most `limit`; with whether more lie beyond each end.
 */
export async function brainPage(db: Queryable, shelf: BrainShelf, limit: number, at: { after?: string; before?: string }): Promise<{ brains: Brain[]; older: boolean; newer: boolean }> {
  const backwards = at.before !== undefined;
  const where = shelfWhere(shelf);
  const { rows } = await db.query<BrainRow>(
    `SELECT ${COLUMNS} FROM brains
      WHERE ${where.sql} AND ($2::text IS NULL OR id < $2) AND ($3::text IS NULL OR id > $3)
      ORDER BY id ${backwards ? 'ASC' : 'DESC'} LIMIT $4`,
    [...where.params, at.after ?? null, at.before ?? null, limit + 1],
  );
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  if (backwards) page.reverse();
  const brains = page.map(toBrain);
  if (brains.length === 0) return { brains, older: false, newer: false };
  const { rows: beyond } = await db.query<{ older: boolean; newer: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM brains WHERE ${where.sql} AND id < $2) AS older, EXISTS (SELECT 1 FROM brains WHERE ${where.sql} AND id > $3) AS newer`,
    [...where.params, brains.at(-1)!.id, brains[0]!.id],
  );
  return { brains, older: backwards ? beyond[0]!.older : more || beyond[0]!.older, newer: beyond[0]!.newer };
}

/** Which of `ids` are brains of the project (a memory's metadata.brainId must name one). */
export async function brainIdsOf(db: Queryable, projectId: string, ids: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM brains WHERE project_id = $1 AND id = ANY($2::text[])', [projectId, ids]);
  return rows.map((r) => r.id);
}
