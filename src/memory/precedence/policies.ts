// A project's precedence policy, read by search on every search that finds two memories disagreeing
// on a slot (cached per process for PRECEDENCE_CACHE_MS; a PUT in this process is seen at once) and
// set by PUT /admin/memory/precedence.
import { LRUCache } from 'lru-cache';
import type { Db } from '../../platform/db.js';
import { ValidationError } from '../../platform/errors.js';
import { DEFAULT_PRECEDENCE, policyProblems, type PrecedencePolicy } from '../search/precedence.js';

/** How long another process's PUT may go unseen by this one's searches. */
export const PRECEDENCE_CACHE_MS = 5_000;

export class PrecedencePolicies {
  private readonly cache = new LRUCache<string, PrecedencePolicy>({ max: 10_000, ttl: PRECEDENCE_CACHE_MS });

  constructor(private readonly db: Db) {}

  async policyFor(projectId: string): Promise<PrecedencePolicy> {
    const cached = this.cache.get(projectId);
    if (cached) return cached;
    const { rows } = await this.db.query<{ policy: PrecedencePolicy }>(`SELECT policy FROM memory_precedence WHERE project_id = $1`, [projectId]);
    const policy = rows[0]?.policy ?? DEFAULT_PRECEDENCE;
    this.cache.set(projectId, policy);
    return policy;
  }

  /** Stores the policy (400 naming what is wrong with it) and answers it as stored. */
  async set(projectId: string, policy: PrecedencePolicy, by: string | null): Promise<PrecedencePolicy> {
    const problems = policyProblems(policy);
    if (problems.length > 0) throw new ValidationError(problems.join('; '), { field: 'body' });
    const stored: PrecedencePolicy = {
      defaultOrder: [...policy.defaultOrder],
      scopeNearestWins: policy.scopeNearestWins,
      overrides: policy.overrides.map((o) => ({ category: o.category.trim(), winningTier: o.winningTier })),
    };
    await this.db.query(
      `INSERT INTO memory_precedence (project_id, policy, updated_by) VALUES ($1, $2::jsonb, $3)
       ON CONFLICT (project_id) DO UPDATE SET policy = excluded.policy, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
      [projectId, JSON.stringify(stored), by],
    );
    this.cache.set(projectId, stored);
    return stored;
  }
}
