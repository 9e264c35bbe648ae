// How the fuzz suite judges an answer: the one error body, whether a request reached its handler,
// what a JSON-RPC answer says (a crash, a refusal, a success), and a snapshot of the rows a refused
// request must not have written.
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { LightMyRequestResponse } from 'fastify';

export const clip = (text: string, max = 1200) => (text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text);

/** Row counts of every table a request writes, and digests of the rows a failed request could have changed in place. */
export const SNAPSHOT = `SELECT
  (SELECT count(*) FROM projects)::text AS projects,
  (SELECT count(*) FROM api_keys)::text AS api_keys,
  (SELECT count(*) || ':' || coalesce(md5(string_agg(m::text, E'\\n' ORDER BY m.id)), '') FROM (
     SELECT id, project_id, content, type, scope, status, importance, confidence, metadata, category, source, subject_kind,
            subject_external_id, agent_id, user_id, session_key, impact, valid_from, valid_to, superseded_by, superseded_at,
            source_memory_ids, confirmed_at, confirmed_by, review_reason, negative_rating_count
       FROM memories) m) AS memories,
  (SELECT count(*) FROM events)::text AS events,
  (SELECT count(*) || ':' || coalesce(md5(string_agg(a::text, ',' ORDER BY a.id)), '') FROM typed_attributes a) AS typed_attributes,
  (SELECT count(*) FROM typed_observations)::text AS typed_observations,
  -- The accumulators' keys and the points they hold, folded or still waiting: the background jobs
  -- (typed.fold, typed.rebuild-series) move points and rebuild EWMAs without changing either.
  (SELECT count(*) || ':' || coalesce(md5(string_agg(a.project_id || '/' || a.subject_kind || '/' || a.subject_external_id || '/' || a.attribute_key, ','
            ORDER BY a.project_id, a.subject_kind, a.subject_external_id, a.attribute_key)), '')
          || ':' || (coalesce(sum(a.count), 0) + (SELECT coalesce(sum(cardinality(u.observation_ids)), 0) FROM typed_unfolded u))
     FROM typed_accumulators a) AS typed_accumulators,
  (SELECT count(*) FROM typed_ingest_batches)::text AS typed_ingest_batches,
  (SELECT count(*) || ':' || coalesce(md5(string_agg(r::text, ',' ORDER BY r.id)), '') FROM alert_rules r) AS alert_rules,
  (SELECT count(*) FROM alert_fires)::text AS alert_fires`;

export type Snapshot = Record<string, string>;

export const changed = (before: Snapshot, after: Snapshot) => Object.keys(before).filter((table) => before[table] !== after[table]);

/** The one error body: `{ statusCode, code, message }` with the answer's status. */
export function errorShapeProblem(res: LightMyRequestResponse): string | undefined {
  let body: { statusCode?: unknown; code?: unknown; message?: unknown };
  try {
    body = res.json();
  } catch {
    return 'the error body is not JSON';
  }
  if (body?.statusCode !== res.statusCode || typeof body.code !== 'string' || typeof body.message !== 'string') {
    return 'the error body is not { statusCode, code, message }';
  }
  const extra = Object.keys(body).filter((key) => !['statusCode', 'code', 'message', 'params'].includes(key));
  if (extra.length > 0) return `the error body has fields beyond { statusCode, code, message, params }: ${extra.join(', ')}`;
  // Our codes (VALIDATION_ERROR, NOT_FOUND, ...), never a framework's internal one (FST_ERR_...).
  if (!/^[A-Z][A-Z_]*$/.test(body.code) || body.code.startsWith('FST_')) return `the error code ${body.code} is not one of ours`;
  return undefined;
}

export const parsed = (res: LightMyRequestResponse): unknown => {
  try {
    return res.json();
  } catch {
    return undefined;
  }
};

/**
 * Whether a request got past authentication and validation into its handler: it succeeded, or the
 * handler refused it (a missing resource, a conflict, a rule the schema cannot state).
 */
export function reachedHandler(res: LightMyRequestResponse): boolean {
  if (res.statusCode < 400) return true;
  const body = parsed(res) as { code?: unknown; message?: unknown; params?: { errors?: unknown } } | undefined;
  if (res.statusCode === 404) return body?.code === 'NOT_FOUND' && !String(body.message).startsWith('no route');
  if (res.statusCode === 409) return true;
  // The schema and the input guard name the failing fields in params.errors; the handlers' own rules do not.
  return res.statusCode === 400 && body?.code === 'VALIDATION_ERROR' && body.params?.errors === undefined;
}

export const isJsonRpcError = (body: unknown) => {
  const error = (body as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown } } | null)?.error;
  return (body as { jsonrpc?: unknown } | null)?.jsonrpc === '2.0' && typeof error?.code === 'number' && typeof error.message === 'string';
};

/** What a JSON-RPC answer (one message or a batch) says: a crash, a refusal, or success. */
export function jsonRpcOutcome(body: unknown): { crash?: string; refused: boolean } {
  const messages = Array.isArray(body) ? body : [body];
  let refused = false;
  for (const message of messages) {
    const m = message as { error?: { code?: number }; result?: { isError?: boolean; content?: { text?: string }[] } } | null;
    if (m?.error) {
      if (m.error.code === ErrorCode.InternalError) return { crash: `JSON-RPC internal error: ${JSON.stringify(m.error)}`, refused: true };
      refused = true;
    } else if (m?.result?.isError) {
      const text = m.result.content?.[0]?.text ?? '';
      let status: unknown;
      try {
        status = (JSON.parse(text) as { statusCode?: unknown }).statusCode;
      } catch {
        status = undefined; // the SDK's own input-validation message is plain text
      }
      if (typeof status === 'number' && status >= 500) return { crash: `tool error ${clip(text, 300)}`, refused: true };
      refused = true;
    }
  }
  return { refused };
}
