// Unit tests of the pairing of a fire's deliveries with its rule's channels as they are at delivery time.
import { describe, expect, it } from 'vitest';
import { DROPPED, deliveryTargets, pendingResult } from '../../src/alerts/delivery-targets.js';
import type { Channel, Rule } from '../../src/alerts/schemas.js';

const webhook = (url: string, secret = 'secret-of-some-length'): Channel => ({ kind: 'webhook', url, secret });
const memory = (content: string): Channel => ({ kind: 'memory', writeAs: { content, scope: 'project' } });
const rule = (notify: Channel[], enabled = true): Rule => ({
  id: 'alr_1',
  projectId: 'p',
  name: 'r',
  description: null,
  enabled,
  trigger: { kind: 'engine-event', eventTypes: [] },
  filter: null,
  notify,
  throttle: null,
  created: '2026-01-01T00:00:00.000Z',
  updated: '2026-01-01T00:00:00.000Z',
});
const recorded = (...channels: Channel[]) => channels.map(pendingResult);

describe('deliveryTargets', () => {
  it('pairs each delivery with the channel at its position when the rule was not edited', () => {
    const notify = [webhook('https://a.example/'), memory('m'), webhook('https://b.example/')];
    expect(deliveryTargets(recorded(...notify), rule(notify), true)).toEqual({ targets: notify.map((channel) => ({ channel })), added: [] });
  });

  it('goes with the channel as the rule has it now: a rotated secret, a new template', () => {
    const now = [webhook('https://a.example/', 'rotated-secret-value'), memory('new')];
    expect(deliveryTargets(recorded(webhook('https://a.example/'), memory('old')), rule(now), true).targets).toEqual(now.map((channel) => ({ channel })));
  });

  it('finds a channel the rule moved, drops one it removed, and lists one it added', () => {
    const [a, b, c] = [webhook('https://a.example/'), webhook('https://b.example/'), webhook('https://c.example/')];
    expect(deliveryTargets(recorded(a, b), rule([c, b]), true)).toEqual({ targets: [{ dropped: DROPPED.removed }, { channel: b }], added: [c] });
    expect(deliveryTargets(recorded(a, b), rule([b, a]), true)).toEqual({ targets: [{ channel: a }, { channel: b }], added: [] });
  });

  it('pairs one to one: two deliveries to one URL need two channels of it', () => {
    const a = webhook('https://a.example/');
    expect(deliveryTargets(recorded(a, a), rule([a]), true)).toEqual({ targets: [{ channel: a }, { dropped: DROPPED.removed }], added: [] });
    const [m1, m2] = [memory('one'), memory('two')];
    expect(deliveryTargets(recorded(m1, m2), rule([m2]), true)).toEqual({ targets: [{ channel: m2 }, { dropped: DROPPED.removed }], added: [] });
  });

  it('tells a webhook from a memory channel, and one URL from another', () => {
    expect(deliveryTargets(recorded(webhook('https://a.example/')), rule([webhook('https://a.example/x')]), true).targets).toEqual([{ dropped: DROPPED.removed }]);
    expect(deliveryTargets(recorded(memory('m')), rule([webhook('https://a.example/')]), true).targets).toEqual([{ dropped: DROPPED.removed }]);
  });

  it('drops every delivery, and adds nothing, when the rule is disabled or gone or the event is gone', () => {
    const a = webhook('https://a.example/');
    const b = webhook('https://b.example/');
    expect(deliveryTargets(recorded(a), rule([a, b], false), true)).toEqual({ targets: [{ dropped: DROPPED.disabled }], added: [] });
    expect(deliveryTargets(recorded(a), undefined, true)).toEqual({ targets: [{ dropped: DROPPED.removed }], added: [] });
    expect(deliveryTargets(recorded(a), rule([a, b]), false)).toEqual({ targets: [{ dropped: DROPPED.eventGone }], added: [] });
  });
});
