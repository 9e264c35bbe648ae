// Where each delivery of a fire goes: the rule as it is when the delivery is made decides. A fire
// records one delivery result per channel its rule had when it fired, each naming its target
// (the channel kind, and a webhook's URL); at every attempt that target is looked up among the
// rule's channels as they are now, and a delivery whose target the rule no longer has, or whose
// rule is disabled, is dropped rather than sent. Pure: the service reads the rule and writes the
// outcome.
import type { Channel, DeliveryResult, Rule } from './schemas.js';

type Target = Pick<DeliveryResult, 'channel' | 'url'>;

/** A delivery's channel as the rule has it now (its current secret or template), or why the delivery is dropped. */
export type DeliveryTarget = { channel: Channel } | { dropped: string };

export const DROPPED = {
  removed: 'the rule no longer has this channel; delivery dropped',
  disabled: 'the rule is disabled; delivery dropped',
  eventGone: 'the event that fired the rule is gone; delivery dropped',
} as const;

/** What a delivery result records of its channel. */
export function channelTarget(channel: Channel): Target {
  return channel.kind === 'webhook' ? { channel: channel.kind, url: channel.url } : { channel: channel.kind };
}

/** A new delivery result: pending, no attempt made. */
export function pendingResult(channel: Channel): DeliveryResult {
  return { ...channelTarget(channel), ok: false, pending: true, attempts: 0 };
}

function sameTarget(a: Target, b: Target): boolean {
  return a.channel === b.channel && a.url === b.url;
}

/**
 * Pairs a fire's delivery results with the rule's channels of the same target, one to one: at the
 * same position first (the usual case: the rule was not edited), then the first free channel of
 * that target in the rule's order (channels reordered or inserted before it). A memory channel
 * pairs with any memory channel of the rule. Answers, per delivery result, its channel or why it
 * is dropped, and the rule's channels no result pairs with (added since the fire). A disabled
 * rule, or a fire whose event is gone, delivers nothing.
 */
export function deliveryTargets(results: readonly Target[], rule: Rule | undefined, eventFound: boolean): { targets: DeliveryTarget[]; added: Channel[] } {
  const dropAll = (dropped: string) => ({ targets: results.map(() => ({ dropped })), added: [] });
  if (!rule) return dropAll(DROPPED.removed);
  if (!rule.enabled) return dropAll(DROPPED.disabled);
  if (!eventFound) return dropAll(DROPPED.eventGone);
  const paired = new Set<number>();
  const pairs = results.map((result, i) => {
    const channel = rule.notify[i];
    if (channel === undefined || !sameTarget(result, channelTarget(channel))) return undefined;
    paired.add(i);
    return i;
  });
  for (const [i, result] of results.entries()) {
    if (pairs[i] !== undefined) continue;
    const j = rule.notify.findIndex((channel, k) => !paired.has(k) && sameTarget(result, channelTarget(channel)));
    if (j < 0) continue;
    paired.add(j);
    pairs[i] = j;
  }
  return {
    targets: pairs.map((j) => (j === undefined ? { dropped: DROPPED.removed } : { channel: rule.notify[j]! })),
    added: rule.notify.filter((_, k) => !paired.has(k)),
  };
}
