// The console's one way to the API: the public REST routes under /api/v1/projects/{projectId}, with
// the key the person pasted (sessionStorage, never a URL or a cookie). A failed call throws the
// API's own error body, whose message the pages show as it is.
import type { Memory } from '../../src/memory/schemas.js';
import type { SearchBody } from '../../src/memory/search/schemas.js';
import type { SearchHitSchema } from '../../src/memory/search/schemas.js';
import type { Static } from 'typebox';

export type { Memory };
export type SearchHit = Static<typeof SearchHitSchema>;
export type { SearchBody };

export interface Session {
  projectId: string;
  key: string;
  /** Whether the key holds WRITE_MEMORY (found at sign-in by a read that needs it). */
  canWrite: boolean;
}

const STORAGE_KEY = 'lattice.console.session';

export function loadSession(): Session | undefined {
  const raw = sessionStorage.getItem(STORAGE_KEY);
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as Session;
  } catch {
    return undefined;
  }
}

export function saveSession(session: Session | undefined): void {
  if (session) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
  else sessionStorage.removeItem(STORAGE_KEY);
}

/** The API's error body: { statusCode, code, message, params? }. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type Query = Record<string, string | number | boolean | undefined>;

export async function call<T>(session: Pick<Session, 'projectId' | 'key'>, method: string, path: string, options: { query?: Query; body?: unknown } = {}): Promise<T> {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined && value !== '') params.set(name, String(value));
  const search = params.size > 0 ? `?${params}` : '';
  let response: Response;
  try {
    response = await fetch(`/api/v1/projects/${encodeURIComponent(session.projectId)}${path}${search}`, {
      method,
      headers: { authorization: `Bearer ${session.key}`, ...(options.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch (error) {
    throw new ApiError(0, 'NETWORK_ERROR', `The API did not answer: ${(error as Error).message}`);
  }
  const text = await response.text();
  const parsed: unknown = text ? JSON.parse(text) : null;
  if (!response.ok) {
    const body = (parsed ?? {}) as { code?: string; message?: string };
    throw new ApiError(response.status, body.code ?? 'ERROR', body.message ?? `${response.status} ${response.statusText}`);
  }
  return parsed as T;
}

/**
 * Signs in: a READ_MEMORY read proves the key belongs to the project, then a read that needs
 * WRITE_MEMORY tells whether the console may offer writes (403 means it may not).
 */
export async function signIn(projectId: string, key: string): Promise<Session> {
  const candidate = { projectId: projectId.trim(), key: key.trim() };
  await call(candidate, 'GET', '/memory', { query: { limit: 1 } });
  let canWrite = true;
  try {
    await call(candidate, 'GET', '/admin/memory/stats');
  } catch (error) {
    if (error instanceof ApiError && error.statusCode === 403) canWrite = false;
    else throw error;
  }
  return { ...candidate, canWrite };
}
