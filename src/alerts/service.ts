// Alert rules: CRUD with the active-triggers ceiling, evaluation inside event emission (in the
// emitter's transaction), and delivery to channels after commit, through the queue: one job makes
// the first attempts of a batch of fires at once, then each failed channel retries with backoff.
// Every attempt goes where the rule says when it is made (delivery-targets.ts), not when it fired.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { EventsApi } from '../events/index.js';
import type { LoggedEvent } from '../events/schemas.js';
import type { MemoryApi } from '../memory/index.js';
import { mapConcurrent } from '../platform/concurrency.js';
import type { Db, Queryable } from '../platform/db.js';
import { AppError, NotFoundError } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { backoffDelay, type DomainQueue, type JobHandlers } from '../platform/queue.js';
import { channelTarget, deliveryTargets, pendingResult } from './delivery-targets.js';
import { admitFire, dedupeKeyFor, isThrottled, renderTemplate, ruleMatches } from './match.js';
import type { Channel, CreateRuleBody, DeliveryResult, Fire, MemoryChannel, PatchRuleBody, Rule, WebhookChannel } from './schemas.js';
import * as store from './store.js';
import { checkWebhookSecret, checkWebhookTarget, generateWebhookSecret, sendWebhook, type WebhookPolicy } from './webhook.js';

/** Fires listed per rule. */
export const FIRES_LISTED = 100;
const MAX_RETRY_DELAY_MS = 3_600_000;

export interface AlertSettings extends WebhookPolicy {
  maxAttempts: number;
  retryBaseMs: number;
}

/** The number of enabled rules may not pass the plan's active-triggers ceiling. Not retryable: 403. */
export class ActiveTriggersExceededError extends AppError {
  readonly code = 'QUOTA_EXCEEDED';
  readonly statusCode = 403;
  constructor(limit: number) {
    super(`This project may have at most ${limit} enabled alert rules (active-triggers on its plan). Disable or delete a rule, or upgrade the plan.`, {
      quota: 'active-triggers',
      limit,
    });
  }
}

/** A fire recorded in the emitter's transaction, to be delivered once it commits. */
export interface PendingFire {
  fireId: string;
  rule: Rule;
  event: LoggedEvent;
}

export interface DeliverPayload {
  projectId: string;
  fireId: string;
  channel: number;
  attempt: number;
  /** The claim on this attempt the sweep found lapsed (its claimant stopped): this job may take it over. */
  takeOver?: string;
}

export interface DeliverFiresPayload {
  projectId: string;
  fireIds: string[];
}

/**
 * Deliveries are jobs: `alerts.deliver-fires` makes the first attempt at every channel of a batch
 * of new fires, `alerts.deliver` one later attempt (retries with backoff); a sweep re-enqueues
 * those whose job was lost. Whichever job makes an attempt claims it in the fire's row first, so
 * two jobs at the same attempt post it once.
 */
export type AlertJobs = {
  'alerts.deliver-fires': { payload: DeliverFiresPayload; result: { delivered: number; failed: number } };
  'alerts.deliver': { payload: DeliverPayload; result: { delivered: boolean } };
  'alerts.sweep': { payload: Record<string, never>; result: { enqueued: number } };
};

const deliveryJobId = (fireId: string, channel: number, attempt: number) => `alerts.deliver.${fireId}.${channel}.${attempt}`;
/**
 * How long a claimed attempt may take before the sweep counts its claimant as stopped and gives
 * the attempt to another job: well past a webhook's timeout, and room for a memory write.
 */
const claimLeaseMs = (timeoutMs: number) => Math.max(60_000, 4 * timeoutMs);
/** Fires per first-attempt job: one job for an emit's fires, a few for a bulk ingest's. */
const FIRES_PER_JOB = 64;
/** First attempts one job makes at once (each a webhook bounded by its timeout, or a memory write). */
const ATTEMPTS_AT_ONCE = 32;

export class AlertService {
  /** First attempts this process makes itself while the queue cannot take them, one batch at a time. */
  private withoutQueue: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly queue: DomainQueue<AlertJobs>,
    private readonly events: Pick<EventsApi, 'get'>,
    private readonly memory: Pick<MemoryApi, 'save'>,
    private readonly settings: AlertSettings,
    private readonly log: FastifyBaseLogger,
  ) {}

  // ---- rules ----------------------------------------------------------------------------------

  async create(projectId: string, body: CreateRuleBody, activeLimit: number): Promise<Rule> {
    const notify = await this.prepareChannels(body.notify);
    const fields: store.RuleFields = {
      name: body.name,
      description: body.description ?? null,
      enabled: body.enabled ?? true,
      trigger: body.trigger,
      filter: body.filter ?? null,
      notify,
      throttle: body.throttle ?? null,
    };
    return this.db.transaction(async (tx) => {
      if (fields.enabled) await this.assertRoom(tx, projectId, activeLimit);
      return store.insertRule(tx, newId('alr'), projectId, fields);
    });
  }

  /** Rules as read back: webhook secrets are shown only in the answers to create and patch. */
  async list(projectId: string): Promise<Rule[]> {
    return (await store.listRules(this.db, projectId)).map(withoutSecrets);
  }

  async get(projectId: string, id: string): Promise<Rule> {
    const rule = await store.getRule(this.db, projectId, id);
    if (!rule) throw new NotFoundError(`alert rule ${id} not found`);
    return withoutSecrets(rule);
  }

  /** Changes the given fields; description, filter and throttle may be null to clear them. */
  async patch(projectId: string, id: string, body: PatchRuleBody, activeLimit: number): Promise<Rule> {
    return this.db.transaction(async (tx) => {
      await store.lockProjectRules(tx, projectId);
      const current = await store.getRule(tx, projectId, id, true);
      if (!current) throw new NotFoundError(`alert rule ${id} not found`);
      const notify = body.notify === undefined ? undefined : await this.prepareChannels(body.notify, current.notify);
      const fields: store.RuleFields = {
        name: body.name ?? current.name,
        description: body.description === undefined ? current.description : body.description,
        enabled: body.enabled ?? current.enabled,
        trigger: body.trigger ?? current.trigger,
        filter: body.filter === undefined ? current.filter : body.filter,
        notify: notify ?? current.notify,
        throttle: body.throttle === undefined ? current.throttle : body.throttle,
      };
      if (fields.enabled && !current.enabled) await this.assertRoom(tx, projectId, activeLimit, id);
      return (await store.updateRule(tx, projectId, id, fields))!;
    });
  }

  async delete(projectId: string, id: string): Promise<void> {
    if (!(await store.deleteRule(this.db, projectId, id))) throw new NotFoundError(`alert rule ${id} not found`);
  }

  /** The enabled rules, which the plan's active-triggers ceiling counts (the count create and patch check). */
  countActive(projectId: string): Promise<number> {
    return store.countEnabled(this.db, projectId);
  }

  async fires(projectId: string, id: string): Promise<Fire[]> {
    await this.get(projectId, id);
    return store.listFires(this.db, projectId, id, FIRES_LISTED);
  }

  private async assertRoom(tx: Queryable, projectId: string, limit: number, exceptId?: string): Promise<void> {
    await store.lockProjectRules(tx, projectId);
    if (!Number.isFinite(limit)) return;
    if ((await store.countEnabled(tx, projectId, exceptId)) >= limit) throw new ActiveTriggersExceededError(limit);
  }

  /**
   * Refuses unsafe webhook targets and bad secrets, and gives every webhook a signing secret: the
   * one sent, else the one the rule already had for that URL, else a new one. A memory channel
   * without a scope writes at project scope, and the rule says so.
   */
  private async prepareChannels(channels: readonly Channel[], previous: readonly Channel[] = []): Promise<Channel[]> {
    const known = new Map(previous.flatMap((c) => (c.kind === 'webhook' && c.secret !== undefined ? [[c.url, c.secret] as const] : [])));
    return Promise.all(
      channels.map(async (channel) => {
        if (channel.kind !== 'webhook') return { ...channel, writeAs: { ...channel.writeAs, scope: channel.writeAs.scope ?? 'project' } };
        await checkWebhookTarget(channel.url, this.settings);
        if (channel.secret !== undefined) checkWebhookSecret(channel.secret);
        return { ...channel, secret: channel.secret ?? known.get(channel.url) ?? generateWebhookSecret() };
      }),
    );
  }

  // ---- evaluation -----------------------------------------------------------------------------

  /**
   * Matches the events against the project's enabled rules, applies throttles and records the
   * fires, inside the caller's transaction (after the events were appended).
   */
  async evaluate(tx: Queryable, projectId: string, events: readonly LoggedEvent[]): Promise<PendingFire[]> {
    if (events.length === 0) return [];
    const rules = await store.listRules(tx, projectId, { enabledOnly: true });
    if (rules.length === 0) return [];
    const candidates = events.flatMap((event) => rules.filter((rule) => ruleMatches(rule, event)).map((rule) => ({ rule, event, dedupeKey: dedupeKeyFor(rule, event) })));
    if (candidates.length === 0) return [];

    const throttledKeys = [...new Set(candidates.filter((c) => isThrottled(c.rule.throttle)).map((c) => c.dedupeKey))];
    const windowMinutes = rules.reduce((most, rule) => Math.max(most, rule.throttle?.cooldownMinutes ?? 0), 0);
    const { now, history } = await store.throttleHistory(tx, projectId, throttledKeys, windowMinutes);

    const fires: (store.NewFire & PendingFire)[] = [];
    for (const { rule, event, dedupeKey } of candidates) {
      if (isThrottled(rule.throttle)) {
        const entry = history.get(dedupeKey) ?? { lastHour: 0, lastFiredAt: null };
        history.set(dedupeKey, entry);
        if (!admitFire(rule.throttle, entry, now)) continue;
      }
      const fireId = newId('fire');
      fires.push({
        id: fireId,
        fireId,
        rule,
        event,
        ruleId: rule.id,
        eventId: event.id,
        subjectKind: event.subject?.kind ?? null,
        subjectExternalId: event.subject?.externalId ?? null,
        dedupeKey,
        deliveryResults: rule.notify.map(pendingResult),
      });
    }
    await store.insertFires(tx, projectId, fires);
    return fires.map(({ fireId, rule, event }) => ({ fireId, rule, event }));
  }

  // ---- delivery -------------------------------------------------------------------------------

  /**
   * After the fires committed: hands them to the queue, one job per FIRES_PER_JOB, and returns; the
   * emitter does not wait for the webhooks. When the queue cannot take a job (its store is down),
   * this process makes the batch's first attempts itself, as the job would, one batch after
   * another in the background (neither an emit nor a bulk ingest waits on them); a retry they need
   * is left to the delivery sweep, which enqueues it once the queue is back. A process that stops
   * before it gets to a batch leaves its fires pending, for the sweep too.
   */
  async dispatch(projectId: string, fires: readonly PendingFire[]): Promise<void> {
    const fireIds = fires.filter((fire) => fire.rule.notify.length > 0).map((fire) => fire.fireId);
    for (let start = 0; start < fireIds.length; start += FIRES_PER_JOB) {
      const batch = { projectId, fireIds: fireIds.slice(start, start + FIRES_PER_JOB) };
      try {
        await this.queue.enqueue('alerts.deliver-fires', batch, { attempts: 1, jobId: `alerts.deliver-fires.${batch.fireIds[0]!}` });
      } catch (error) {
        this.log.warn({ err: error, fires: batch.fireIds.length }, 'could not enqueue alert deliveries; this process makes their first attempts');
        this.withoutQueue = this.withoutQueue
          .then(() => this.deliverFires(batch))
          .then(
            () => undefined,
            (failure: unknown) => this.log.warn({ err: failure }, 'alert deliveries failed; the delivery sweep will retry'),
          );
      }
    }
  }

  /**
   * The job: the first attempt at every channel of these fires, ATTEMPTS_AT_ONCE at a time, to the
   * rule's channels as they are now (see deliverChannel): a channel added since the fire joins it,
   * one removed is dropped. A channel whose first attempt another job made or claimed (the
   * sweep's job got there first) is left alone; one that throws (the database blinked) stays
   * pending for the sweep, which waits for its claim to lapse if it was claimed.
   */
  async deliverFires({ projectId, fireIds }: DeliverFiresPayload): Promise<{ delivered: number; failed: number }> {
    const fires = await store.getFires(this.db, projectId, fireIds);
    const rules = new Map((await store.getRules(this.db, projectId, [...new Set(fires.map((f) => f.alertRuleId))])).map((r) => [r.id, r]));
    const events = new Map((await this.events.get(projectId, fires.flatMap((f) => (f.eventId === null ? [] : [f.eventId])))).map((e) => [e.id, e]));
    const firsts: { fire: Fire; rule: Rule | undefined; event: LoggedEvent | undefined; channel: number }[] = [];
    for (const recorded of fires) {
      const rule = rules.get(recorded.alertRuleId);
      const event = recorded.eventId === null ? undefined : events.get(recorded.eventId);
      const fire = await this.startDelivery(projectId, recorded, rule, event);
      for (const [channel, result] of fire.deliveryResults.entries()) {
        if (result.pending && result.attempts === 0) firsts.push({ fire, rule, event, channel });
      }
    }
    const outcomes = await mapConcurrent(firsts, ATTEMPTS_AT_ONCE, async ({ fire, rule, event, channel }) => {
      try {
        return await this.deliverChannel(projectId, fire, rule, event, channel, 1);
      } catch (error) {
        this.log.warn({ err: error, fireId: fire.id, channel }, 'alert delivery failed; the delivery sweep will retry');
        return false;
      }
    });
    const delivered = outcomes.filter(Boolean).length;
    return { delivered, failed: outcomes.length - delivered };
  }

  /** The job: one attempt at one channel of one fire (a retry, or a first attempt the sweep found lost). */
  async deliver(payload: DeliverPayload): Promise<{ delivered: boolean }> {
    const { projectId, fireId, channel, attempt } = payload;
    const [recorded] = await store.getFires(this.db, projectId, [fireId]);
    if (!recorded) return { delivered: false }; // the rule (and so the fire) was deleted
    const current = recorded.deliveryResults[channel];
    if (current?.ok) return { delivered: true };
    // Settled, or this attempt already made (a sweep may enqueue again an attempt whose job ran
    // meanwhile; each attempt posts once).
    if (!current || !current.pending || current.attempts >= attempt) return { delivered: false };
    const rule = await store.getRule(this.db, projectId, recorded.alertRuleId);
    const [event] = recorded.eventId === null ? [] : await this.events.get(projectId, [recorded.eventId]);
    const fire = attempt === 1 ? await this.startDelivery(projectId, recorded, rule, event) : recorded;
    return { delivered: await this.deliverChannel(projectId, fire, rule, event, channel, attempt, payload.takeOver) };
  }

  /**
   * Before a fire's first attempts: the rule's channels that none of its deliveries goes to (added
   * since it fired) join it, unless an attempt of it was made meanwhile. Their first attempts are
   * the caller's (deliverFires) or, from a single delivery's job, the sweep's.
   */
  private async startDelivery(projectId: string, fire: Fire, rule: Rule | undefined, event: LoggedEvent | undefined): Promise<Fire> {
    const { added } = deliveryTargets(fire.deliveryResults, rule, event !== undefined);
    if (added.length === 0) return fire;
    const deliveryResults = await store.addDeliveries(this.db, projectId, fire.id, fire.deliveryResults.length, added.map(pendingResult));
    return deliveryResults ? { ...fire, deliveryResults } : fire;
  }

  /**
   * One attempt at one channel of a fire, for both jobs. It is claimed first (attempt - 1 made, no
   * live claim): a job that does not get the claim does nothing, as another job has this attempt.
   * Then the rule as it is now decides where it goes (delivery-targets.ts), with that channel's
   * current secret or template. A delivery the rule no longer has a channel for, or whose rule is
   * disabled or event gone, is settled as dropped at once, never sent nor retried. A process that
   * stops between the claim and the result leaves the claim, which the sweep finds lapsed.
   */
  private async deliverChannel(
    projectId: string,
    fire: Fire,
    rule: Rule | undefined,
    event: LoggedEvent | undefined,
    index: number,
    attempt: number,
    takeOver?: string,
  ): Promise<boolean> {
    const claim = randomUUID();
    const claimed = await store.claimAttempt(this.db, projectId, fire.id, index, attempt - 1, claim, takeOver);
    if (!claimed) return false;
    const target = deliveryTargets(fire.deliveryResults, rule, event !== undefined).targets[index]!;
    if ('dropped' in target) {
      await store.setDeliveryResult(this.db, projectId, fire.id, index, droppedResult(claimed, target.dropped), claim);
      return false;
    }
    // deliveryTargets pairs a delivery with a channel only when the rule and the event are there.
    return this.attempt(projectId, { fireId: fire.id, rule: rule!, event: event! }, index, target.channel, attempt, claim);
  }

  /**
   * Re-enqueues deliveries whose job was lost; the job id matches the one a live retry would have,
   * and a job that finds its attempt made or claimed does nothing, so nothing posts twice. A first
   * attempt gets the time an inline attempt may take (two webhook timeouts, at least 10 s) before
   * it counts as lost; a retry, a second past its due time; a claimed attempt, `claimLeaseMs` past
   * its claim, after which its job (an id of its own: the job that claimed may be kept under the
   * plain one) takes that claim over.
   */
  async sweepDeliveries(
    firstGraceMs = Math.max(10_000, 2 * this.settings.timeoutMs),
    retryGraceMs = 1_000,
    leaseMs = claimLeaseMs(this.settings.timeoutMs),
  ): Promise<number> {
    const overdue = await store.overdueDeliveries(this.db, { firstGraceMs, retryGraceMs, claimLeaseMs: leaseMs }, 1000);
    for (const { projectId, fireId, channel, attempts, claim } of overdue) {
      const attempt = attempts + 1;
      const jobId = claim === undefined ? deliveryJobId(fireId, channel, attempt) : `${deliveryJobId(fireId, channel, attempt)}.${claim}`;
      await this.queue.enqueue('alerts.deliver', { projectId, fireId, channel, attempt, ...(claim === undefined ? {} : { takeOver: claim }) }, { attempts: 1, jobId });
    }
    return overdue.length;
  }

  /** Makes the claimed attempt, records its result (ending the claim) and enqueues its retry. */
  private async attempt(projectId: string, fire: PendingFire, index: number, channel: Channel, attempt: number, claim: string): Promise<boolean> {
    const at = new Date();
    const outcome = channel.kind === 'memory' ? await this.writeBack(projectId, fire, channel) : await this.post(fire, index, channel, at);
    const retry = !outcome.ok && outcome.retryable && attempt < this.settings.maxAttempts;
    const delayMs = retry
      ? Math.min(MAX_RETRY_DELAY_MS, Math.max(outcome.retryAfterMs ?? 0, backoffDelay(attempt, this.settings.retryBaseMs, MAX_RETRY_DELAY_MS)))
      : 0;
    const result: DeliveryResult = {
      ...channelTarget(channel),
      ok: outcome.ok,
      pending: retry,
      attempts: attempt,
      ...(outcome.statusCode === undefined ? {} : { statusCode: outcome.statusCode }),
      ...(outcome.memoryId === undefined ? {} : { memoryId: outcome.memoryId }),
      ...(outcome.error === undefined ? {} : { error: outcome.error }),
      lastAttemptAt: at.toISOString(),
      ...(retry ? { nextAttemptAt: new Date(at.getTime() + delayMs).toISOString() } : {}),
    };
    if (outcome.gone) await store.disableRule(this.db, projectId, fire.rule.id);
    if (!(await store.setDeliveryResult(this.db, projectId, fire.fireId, index, result, claim))) {
      // Outlasted its claim: the sweep gave the attempt to another job, whose result stands.
      this.log.warn({ fireId: fire.fireId, channel: index, attempt }, 'an alert delivery attempt outlasted its claim; its result is not recorded');
      return outcome.ok;
    }
    if (retry) {
      await this.queue.enqueue(
        'alerts.deliver',
        { projectId, fireId: fire.fireId, channel: index, attempt: attempt + 1 },
        { attempts: 1, delayMs, jobId: deliveryJobId(fire.fireId, index, attempt + 1) },
      );
    }
    return outcome.ok;
  }

  private async post(fire: PendingFire, index: number, channel: WebhookChannel, at: Date): Promise<ChannelOutcome> {
    const sent = await sendWebhook({ url: channel.url, secret: channel.secret! }, { id: `${fire.fireId}.${index}`, body: webhookBody(fire, at) }, this.settings, at);
    return {
      ok: sent.ok,
      retryable: !sent.gone,
      gone: sent.gone,
      ...(sent.retryAfterMs === undefined ? {} : { retryAfterMs: sent.retryAfterMs }),
      ...(sent.statusCode === undefined ? {} : { statusCode: sent.statusCode }),
      ...(sent.ok ? {} : { error: sent.gone ? `${sent.error ?? 'HTTP 410'}: the receiver is gone; rule disabled` : (sent.error ?? 'failed') }),
    };
  }

  /** The memory channel: a memory about the event's subject, rendered from the rule's template. */
  private async writeBack(projectId: string, fire: PendingFire, channel: MemoryChannel): Promise<ChannelOutcome> {
    try {
      const saved = await this.memory.save(projectId, {
        content: renderTemplate(channel.writeAs.content, { event: fire.event, rule: fire.rule }),
        type: 'event',
        scope: channel.writeAs.scope ?? 'project',
        importance: channel.writeAs.importance ?? 5,
        source: 'alert',
        ...(fire.event.subject ? { subject: fire.event.subject } : {}),
        metadata: { alertRuleId: fire.rule.id, alertFireId: fire.fireId, eventId: fire.event.id, eventType: fire.event.eventType },
      });
      return { ok: true, retryable: false, gone: false, memoryId: saved.memory.id };
    } catch (error) {
      // A bad template (say, it renders empty) will not get better; anything else may.
      const permanent = error instanceof AppError && error.statusCode < 500;
      return { ok: false, retryable: !permanent, gone: false, error: error instanceof AppError ? error.message : 'memory write failed' };
    }
  }
}

interface ChannelOutcome {
  ok: boolean;
  retryable: boolean;
  gone: boolean;
  retryAfterMs?: number;
  statusCode?: number;
  memoryId?: string;
  error?: string;
}

export function alertJobs(alerts: AlertService): JobHandlers<AlertJobs> {
  return {
    'alerts.deliver-fires': (payload) => alerts.deliverFires(payload),
    'alerts.deliver': (payload) => alerts.deliver(payload),
    'alerts.sweep': async () => ({ enqueued: await alerts.sweepDeliveries() }),
  };
}

/** A delivery settled without an attempt: what it recorded so far, no longer pending, and why. */
function droppedResult(current: DeliveryResult, why: string): DeliveryResult {
  return {
    channel: current.channel,
    ...(current.url === undefined ? {} : { url: current.url }),
    ok: false,
    pending: false,
    attempts: current.attempts,
    ...(current.statusCode === undefined ? {} : { statusCode: current.statusCode }),
    ...(current.lastAttemptAt === undefined ? {} : { lastAttemptAt: current.lastAttemptAt }),
    error: why,
  };
}

function withoutSecrets(rule: Rule): Rule {
  return { ...rule, notify: rule.notify.map((channel) => (channel.kind === 'webhook' ? { kind: channel.kind, url: channel.url } : channel)) };
}

/** The webhook body (Standard Webhooks envelope). */
export function webhookBody(fire: PendingFire, at: Date): string {
  return JSON.stringify({
    type: 'alert.fired',
    timestamp: at.toISOString(),
    data: {
      fireId: fire.fireId,
      alertRuleId: fire.rule.id,
      ruleName: fire.rule.name,
      event: fire.event,
    },
  });
}
