// Precedence between memories that disagree (GET, PUT /admin/memory/precedence; SDK-WIRE.md 4.2).
// Two live memories of one subject on one slot (metadata.slot, observe's single-valued facts) with
// different content disagree; the project's policy says which one a reader should see first:
//   - an override for the memories' category names the winning tier;
//   - else, with scopeNearestWins, the memory of the nearer scope (session, user, agent, location,
//     project, platform: the nearer the caller, the more specific);
//   - else the tier earlier in defaultOrder.
// A memory's tier: human_verified (a person confirmed it, POST /admin/memory/{id}/confirm), base
// (platform scope: what every project starts from), licensed_brain (read from a published brain,
// metadata.brainId), local (the project's own, everything else). Two memories of one tier and
// scope are left to newer first (freshness.ts). In search the loser is put just under the winner,
// after newer first, so a policy can keep a verified value above a newer unverified one. Pure.
import type { Memory } from '../schemas.js';
import { appendTo } from '../../platform/collections.js';

export const PRECEDENCE_TIERS = ['human_verified', 'local', 'licensed_brain', 'base'] as const;
export type PrecedenceTier = (typeof PRECEDENCE_TIERS)[number];

export interface PrecedencePolicy {
  defaultOrder: PrecedenceTier[];
  scopeNearestWins: boolean;
  overrides: { category: string; winningTier: PrecedenceTier }[];
}

export const DEFAULT_PRECEDENCE: PrecedencePolicy = { defaultOrder: [...PRECEDENCE_TIERS], scopeNearestWins: true, overrides: [] };

/** Nearest first: the more specific a scope, the nearer the caller. */
const SCOPE_NEARNESS = ['session', 'user', 'agent', 'location', 'project', 'platform'];

export function tierOf(m: Memory): PrecedenceTier {
  if (m.status === 'confirmed' && m.confirmedAt !== null && m.confirmedAt !== undefined) return 'human_verified';
  if (m.scope === 'platform') return 'base';
  if (typeof m.metadata?.brainId === 'string') return 'licensed_brain';
  return 'local';
}

/** Which of two disagreeing memories the policy puts first; undefined when it cannot tell (same tier and scope). */
export function winner(a: Memory, b: Memory, policy: PrecedencePolicy): Memory | undefined {
  const [ta, tb] = [tierOf(a), tierOf(b)];
  const category = (a.category ?? b.category)?.toLowerCase();
  const override = category === undefined ? undefined : policy.overrides.find((o) => o.category.toLowerCase() === category);
  if (override && ta !== tb) {
    if (ta === override.winningTier) return a;
    if (tb === override.winningTier) return b;
  }
  if (policy.scopeNearestWins && a.scope !== b.scope) {
    return SCOPE_NEARNESS.indexOf(a.scope) < SCOPE_NEARNESS.indexOf(b.scope) ? a : b;
  }
  if (ta === tb) return undefined;
  return policy.defaultOrder.indexOf(ta) < policy.defaultOrder.indexOf(tb) ? a : b;
}

const LIVE = new Set(['pending', 'confirmed']);
const slotOf = (m: Memory) => (typeof m.metadata?.slot === 'string' && m.metadata.slot !== '' ? m.metadata.slot : undefined);
const normal = (text: string) => text.trim().toLowerCase().replace(/\s+/g, ' ');

export interface Outranked {
  /** The memory the policy puts first. */
  winnerId: string;
  /** The loser's score now: just under the winner's. */
  score: number;
}

/**
 * The hits the policy puts under another hit that disagrees with them, each with the score that
 * puts it there (just under its winner's, as scores stand after newer first). A loser already below
 * keeps its score. Winners are settled best first, so a chain (a over b over c) holds.
 */
const slotKey = (m: Memory, slot: string) => `${m.subject!.kind}\u0000${m.subject!.externalId}\u0000${slot}`;

/** Whether two live hits of one subject fill one slot: only then is a policy worth reading. */
export function disagreeOnASlot(hits: readonly { memory: Memory }[]): boolean {
  const seen = new Set<string>();
  for (const { memory: m } of hits) {
    const slot = slotOf(m);
    if (!slot || !m.subject || !LIVE.has(m.status)) continue;
    const key = slotKey(m, slot);
    if (seen.has(key)) return true;
    seen.add(key);
  }
  return false;
}

export function precedenceFirst(hits: readonly { memory: Memory; score: number }[], policy: PrecedencePolicy, margin = 1e-4): Map<string, Outranked> {
  const scores = new Map(hits.map((h) => [h.memory.id, h.score]));
  const bySlot = new Map<string, Memory[]>();
  for (const { memory: m } of hits) {
    const slot = slotOf(m);
    if (!slot || !m.subject || !LIVE.has(m.status)) continue;
    const key = slotKey(m, slot);
    appendTo(bySlot, key, m);
  }
  const outranked = new Map<string, Outranked>();
  for (const group of bySlot.values()) {
    if (group.length < 2) continue;
    // Every disagreeing pair the policy can settle, the winner's side settled first (best score first).
    const ordered = [...group].sort((a, b) => scores.get(b.id)! - scores.get(a.id)! || (a.id < b.id ? -1 : 1));
    for (let changed = true, rounds = 0; changed && rounds < group.length; rounds++) {
      changed = false;
      for (const a of ordered) {
        for (const b of ordered) {
          if (a.id === b.id || normal(a.content) === normal(b.content)) continue;
          if (winner(a, b, policy) !== a) continue;
          const high = scores.get(a.id)!;
          if (scores.get(b.id)! < high) continue;
          const score = high - margin;
          scores.set(b.id, score);
          outranked.set(b.id, { winnerId: a.id, score });
          changed = true;
        }
      }
    }
  }
  return outranked;
}

/** Refusals of a policy a client sends, in words; empty when it is sound. */
export function policyProblems(policy: PrecedencePolicy): string[] {
  const problems: string[] = [];
  const order = policy.defaultOrder;
  if (order.length !== PRECEDENCE_TIERS.length || new Set(order).size !== order.length || !PRECEDENCE_TIERS.every((t) => order.includes(t))) {
    problems.push(`defaultOrder must name each tier once: ${PRECEDENCE_TIERS.join(', ')}`);
  }
  const categories = policy.overrides.map((o) => o.category.trim().toLowerCase());
  if (new Set(categories).size !== categories.length) problems.push('overrides: one override per category');
  return problems;
}
