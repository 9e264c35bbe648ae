// SQL for typed_attributes: the definitions observations are checked against.
import type { Queryable } from '../../platform/db.js';
import { Conditions, iso } from '../../platform/sql.js';
import type { Attribute, AttributeBody, DataType } from '../schemas.js';
import type { AttributeRule } from '../validate.js';

interface AttributeRow {
  id: string;
  project_id: string;
  attribute_key: string;
  data_type: DataType;
  unit: string | null;
  min_valid: number | null;
  max_valid: number | null;
  required: boolean;
  metadata: unknown;
  created_at: Date;
  updated_at: Date;
  created?: boolean;
}

function toAttribute(row: AttributeRow): Attribute {
  return {
    id: row.id,
    projectId: row.project_id,
    attributeKey: row.attribute_key,
    dataType: row.data_type,
    unit: row.unit,
    minValid: row.min_valid,
    maxValid: row.max_valid,
    required: row.required,
    metadata: row.metadata ?? null,
    metadataJson: row.metadata === null || row.metadata === undefined ? null : JSON.stringify(row.metadata),
    created: iso(row.created_at)!,
    updated: iso(row.updated_at)!,
  };
}

/** Creates the definition, or replaces every field of the existing one with the same key. */
export async function upsertAttribute(db: Queryable, id: string, projectId: string, body: AttributeBody): Promise<{ attribute: Attribute; created: boolean }> {
  const { rows } = await db.query<AttributeRow>(
    `INSERT INTO typed_attributes (id, project_id, attribute_key, data_type, unit, min_valid, max_valid, required, metadata)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb)
     ON CONFLICT (project_id, attribute_key) DO UPDATE SET
       data_type = EXCLUDED.data_type, unit = EXCLUDED.unit, min_valid = EXCLUDED.min_valid, max_valid = EXCLUDED.max_valid,
       required = EXCLUDED.required, metadata = EXCLUDED.metadata, updated_at = EXCLUDED.updated_at
     RETURNING *, (xmax = 0) AS created`,
    [
      id,
      projectId,
      body.attributeKey,
      body.dataType,
      body.unit ?? null,
      body.minValid ?? null,
      body.maxValid ?? null,
      body.required ?? false,
      body.metadata === undefined ? null : JSON.stringify(body.metadata),
    ],
  );
  const row = rows[0]!;
  return { attribute: toAttribute(row), created: row.created === true };
}

export async function getAttribute(db: Queryable, projectId: string, attributeKey: string): Promise<Attribute | undefined> {
  const { rows } = await db.query<AttributeRow>('SELECT * FROM typed_attributes WHERE project_id = $1 AND attribute_key = $2', [projectId, attributeKey]);
  return rows[0] && toAttribute(rows[0]);
}

export async function listAttributes(db: Queryable, projectId: string, query: { attributeKey?: string; limit: number; offset: number }): Promise<Attribute[]> {
  const where = new Conditions([projectId]).add('project_id = $1').add('attribute_key = ?', query.attributeKey);
  const { rows } = await db.query<AttributeRow>(
    `SELECT * FROM typed_attributes WHERE ${where.sql} ORDER BY attribute_key LIMIT ${where.param(query.limit)} OFFSET ${where.param(query.offset)}`,
    where.params,
  );
  return rows.map(toAttribute);
}

export async function loadRules(db: Queryable, projectId: string, keys: readonly string[]): Promise<Map<string, AttributeRule & { unit: string | null }>> {
  if (keys.length === 0) return new Map();
  const { rows } = await db.query<AttributeRow>('SELECT * FROM typed_attributes WHERE project_id = $1 AND attribute_key = ANY($2::text[])', [projectId, keys]);
  return new Map(rows.map((r) => [r.attribute_key, { dataType: r.data_type, minValid: r.min_valid, maxValid: r.max_valid, unit: r.unit }]));
}
