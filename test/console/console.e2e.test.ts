// The console end to end: the API serves the built console (npm run build) at /console/, and a real
// browser (Debian's chromium, driven by playwright-core) signs in with a pasted key and uses it.
// Screenshots of every page go to test-results/console/ (ignored by git), to be looked at.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import consolePlugin from '../../src/platform/console.js';
import errorHandler from '../../src/platform/error-handler.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { browserReady, built, SHOTS, startConsoleBrowser, type ConsoleBrowser } from './browser.js';

describe('the console, with its built files', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ consumers: false });
  });
  afterAll(() => h?.close());

  it.skipIf(!built)('is served at /console/ with no key, index never cached and assets cached for good', async () => {
    const redirect = await h.app.inject({ url: '/console' });
    expect(redirect.statusCode).toBe(301);
    expect(redirect.headers.location).toBe('/console/');
    const index = await h.app.inject({ url: '/console/' });
    expect(index.statusCode).toBe(200);
    expect(index.headers['content-type']).toContain('text/html');
    expect(index.headers['cache-control']).toBe('no-cache');
    const asset = /src="\/console\/(assets\/[^"]+\.js)"/.exec(index.body)?.[1];
    expect(asset).toBeDefined();
    const script = await h.app.inject({ url: `/console/${asset}` });
    expect(script.statusCode).toBe(200);
    expect(script.headers['cache-control']).toContain('immutable');
    // Nothing fetched from elsewhere: every script and stylesheet is the server's own.
    expect(index.body).not.toMatch(/(src|href)="https?:/);
  });

  it('answers 404 in the one error shape for a file the console does not have', async () => {
    const res = await h.app.inject({ url: '/console/no-such-file.js' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });
  });

  it('is left out of the OpenAPI document', async () => {
    const paths = Object.keys((await h.app.inject({ url: '/openapi.json' })).json().paths);
    expect(paths.filter((p) => p.startsWith('/console'))).toEqual([]);
  });
});

describe('the console, not built', () => {
  it('answers every console path with a 404 that says to build it, in the one error shape', async () => {
    const app = Fastify();
    await app.register(errorHandler);
    await app.register(consolePlugin, { root: mkdtempSync(join(tmpdir(), 'lattice-console-')) });
    try {
      for (const url of ['/console/', '/console/assets/index.js']) {
        const res = await app.inject({ url });
        expect(res.statusCode, url).toBe(404);
        expect(res.json()).toMatchObject({ statusCode: 404, code: 'NOT_FOUND', message: 'the console is not built: run npm run build' });
      }
      expect((await app.inject({ url: '/console' })).headers.location).toBe('/console/');
    } finally {
      await app.close();
    }
  });
});

describe.skipIf(!browserReady)('the console in a browser', () => {
  let h: Harness;
  let receiver: Receiver;
  let browser: ConsoleBrowser;
  let origin: string;
  let project: { projectId: string; apiKey: string };
  let readKey: string;
  let paris: { id: string };
  let berlin: { id: string };
  const jan = '2026-01-10T09:00:00.000Z';
  const jun = '2026-06-10T09:00:00.000Z';

  beforeAll(async () => {
    h = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    receiver = await startReceiver();
    project = await h.project();
    readKey = await h.key(project.projectId, ['READ_MEMORY']);
    const observe = async (text: string, occurredAt: string) => {
      const res = await h.call('POST', project.projectId, '/memory/observe', { body: { text, userId: 'u-move', occurredAt } });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().saved[0] as { id: string };
    };
    paris = await observe('I live in Paris.', jan);
    berlin = await observe('Actually I moved to Berlin.', jun);
    const saved = await h.call('POST', project.projectId, '/admin/memory', { body: { content: 'Prefers window seats on long flights', type: 'preference', importance: 7 } });
    expect(saved.statusCode, saved.body).toBe(201);
    browser = await startConsoleBrowser(h);
    origin = browser.origin;
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await receiver?.close();
  });

  const open = (viewport?: { width: number; height: number }) => browser.open(viewport);
  const signIn = (page: Page, key: string, projectId = project.projectId) => browser.signIn(page, key, projectId);

  it('shows a wrong key the sign-in page with the API\'s own error', async () => {
    const page = await open();
    await signIn(page, 'lat_not-a-real-key');
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 60_000 }).toMatch(/AUTHENTICATION_ERROR, 401/);
    expect(await page.getByRole('button', { name: 'Sign in' }).isVisible()).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'sign-in-error.png') });
    // The key is kept in this tab only: nothing in the URL, no cookie.
    expect(page.url()).not.toContain('lat_');
    expect(await page.context().cookies()).toEqual([]);
    await page.close();
  });

  it('signs in with a READ_MEMORY key, lists the memories, and says it is read only', async () => {
    const page = await open();
    await signIn(page, readKey);
    await page.getByRole('link', { name: 'Prefers window seats on long flights' }).waitFor();
    expect(await page.getByText('read only').isVisible()).toBe(true);
    // The live view: Berlin holds now, Paris was superseded by it and is not listed.
    expect(await page.getByRole('link', { name: /Berlin/ }).count()).toBe(1);
    expect(await page.getByRole('link', { name: /Paris/ }).count()).toBe(0);
    // The key is in sessionStorage, not in the URL or a cookie.
    expect(await page.evaluate(() => sessionStorage.getItem('lattice.console.session'))).toContain(readKey);
    expect(page.url()).not.toContain(readKey);
    expect(await page.context().cookies()).toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'memories.png'), fullPage: true });
    await page.close();
  });

  it('searches, and shows each hit with its score parts and explanation', async () => {
    const page = await open();
    await signIn(page, readKey);
    await page.getByLabel('Search memories').fill('window seats for long flights');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    // The hits, or whatever the page said instead (an error, nothing found), to fail with.
    await page.locator('.hits li, [role=alert], .search ~ p').first().waitFor();
    expect(await page.getByRole('alert').count(), await page.locator('main').innerText()).toBe(0);
    const first = page.locator('.hits li').first();
    expect(await first.getByRole('link').textContent()).toBe('Prefers window seats on long flights');
    expect(await first.locator('.score').textContent()).toMatch(/score \d\.\d{3} · relevance \d\.\d{3} \(semantic (\d\.\d{3}|not embedded), lexical/);
    expect((await first.locator('.explanation').textContent())!.length).toBeGreaterThan(0);
    await page.screenshot({ path: join(SHOTS, 'search.png'), fullPage: true });
    await page.close();
  });

  it('shows the project as it was with the as-of control: before the move Paris, not Berlin', async () => {
    const page = await open();
    await signIn(page, readKey);
    await page.getByRole('link', { name: /Berlin/ }).waitFor();
    await page.getByLabel('As of').fill('2026-03-01T12:00');
    await page.getByRole('link', { name: /Paris/ }).waitFor();
    expect(await page.getByRole('link', { name: /Berlin/ }).count()).toBe(0);
    expect(await page.getByText(/The project as it was at/).isVisible()).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'memories-as-of.png'), fullPage: true });
    await page.close();
  });

  it('opens a memory with its supersede chain', async () => {
    const page = await open();
    await signIn(page, readKey);
    await page.goto(`${origin}/console/#/memories/${paris.id}`);
    await page.getByRole('heading', { name: 'I live in Paris.' }).waitFor();
    const chain = page.getByRole('region', { name: 'Supersede chain' });
    await chain.getByRole('link', { name: /Berlin/ }).waitFor();
    expect(await chain.getByRole('link').getAttribute('href')).toBe(`#/memories/${berlin.id}`);
    expect(await page.getByText('superseded', { exact: true }).isVisible()).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'memory.png'), fullPage: true });
    await page.close();
  });

  it('is usable on a phone-sized screen and by keyboard alone', async () => {
    const page = await open({ width: 390, height: 844 });
    await page.getByLabel('Project id').focus();
    await page.keyboard.type(project.projectId);
    await page.keyboard.press('Tab');
    await page.keyboard.type(readKey);
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'Prefers window seats on long flights' }).waitFor();
    // Nothing wider than the screen but the table, which scrolls in its own box.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(SHOTS, 'memories-phone.png'), fullPage: true });
    await page.close();
  });

  it('confirms a pending memory out of the review queue with a key that may write', async () => {
    const pending = await h.call('POST', project.projectId, '/admin/memory', { body: { content: 'Might prefer morning calls', status: 'pending' } });
    expect(pending.statusCode, pending.body).toBe(201);
    const page = await open();
    await signIn(page, project.apiKey);
    await page.getByRole('link', { name: 'Review queue' }).click();
    const item = page.getByRole('listitem').filter({ hasText: 'Might prefer morning calls' });
    await item.waitFor();
    expect(await item.getByText(/reason: pending/).isVisible()).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'review.png'), fullPage: true });
    await page.getByRole('button', { name: 'Confirm “Might prefer morning calls”' }).click();
    await page.getByRole('status').filter({ hasText: 'Confirmed' }).waitFor();
    await item.waitFor({ state: 'detached' });
    const stored = (await h.call('GET', project.projectId, `/memory/${pending.json().id}`)).json();
    expect(stored.status).toBe('confirmed');
    await page.screenshot({ path: join(SHOTS, 'review-confirmed.png'), fullPage: true });
    await page.close();
  });

  it('shows a READ_MEMORY key the whole review queue with no button to change it', async () => {
    const pending = await h.call('POST', project.projectId, '/admin/memory', { body: { content: 'Could be vegetarian', status: 'pending' } });
    expect(pending.statusCode, pending.body).toBe(201);
    // A confirmed memory that consolidation's decay flagged stale, as the nightly job leaves it.
    const stale = await h.call('POST', project.projectId, '/admin/memory', { body: { content: 'Used to fly economy', type: 'fact' } });
    await h.db.query(`UPDATE memories SET review_reason = 'stale' WHERE project_id = $1 AND id = $2`, [project.projectId, stale.json().id]);
    const page = await open();
    await signIn(page, readKey);
    await page.getByRole('link', { name: 'Review queue' }).click();
    await page.getByRole('listitem').filter({ hasText: 'Could be vegetarian' }).waitFor();
    expect(await page.getByRole('listitem').filter({ hasText: 'Used to fly economy' }).getByText(/reason: stale/).isVisible()).toBe(true);
    expect(await page.getByText(/This key may only read/).isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: /Confirm|Reject|Promote/ }).count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'review-read-only.png'), fullPage: true });
    await page.close();
  });

  it('shows the event log, tails it live, and each alert fire with its delivery', async () => {
    const rule = await h.call('POST', project.projectId, '/memory-alerts', {
      body: { name: 'orders', trigger: { kind: 'engine-event', eventTypes: ['order.*'] }, notify: [{ kind: 'webhook', url: receiver.url }] },
    });
    expect(rule.statusCode, rule.body).toBe(201);
    const emit = (eventType: string, externalId: string) =>
      h.call('POST', project.projectId, '/lattice/events/emit', { body: { eventType, subject: { kind: 'customer', externalId }, payload: { total: 42 } } });
    expect((await emit('order.placed', 'c-1')).json()).toMatchObject({ emitted: true, alertDispatches: 1 });
    // Delivered by the job the emit enqueued: wait for its result, which the Fires view shows.
    const delivered = async () => (await h.call('GET', project.projectId, `/memory-alerts/${rule.json().id}/fires`)).json()[0]?.deliveryResults[0]?.ok;
    await expect.poll(delivered, { timeout: 60_000 }).toBe(true);
    expect(receiver.received).toHaveLength(1);

    const page = await open();
    await signIn(page, readKey);
    await page.getByRole('link', { name: 'Events and alerts' }).click();
    const log = page.getByRole('region', { name: 'Event log' });
    await log.getByRole('cell', { name: 'order.placed' }).waitFor();
    expect(await log.getByRole('cell', { name: 'customer:c-1' }).isVisible()).toBe(true);

    await page.getByLabel('Live tail').check();
    await emit('order.refunded', 'c-2');
    await log.getByRole('cell', { name: 'order.refunded' }).waitFor({ timeout: 60_000 });
    // Newest on top.
    expect(await log.locator('tbody tr').first().textContent()).toContain('order.refunded');

    const rules = page.getByRole('region', { name: 'Alert rules' });
    await rules.getByRole('button', { name: 'Fires' }).click();
    const fires = page.getByRole('region', { name: 'Fires of orders' });
    await fires.getByText(/delivered \(204\)/).first().waitFor();
    expect(await fires.getByText(`webhook ${receiver.url}`).first().isVisible()).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'events.png'), fullPage: true });
    await page.close();
  });

  it('draws the calibration of scored predictions, bucket by bucket, with ECE and Brier', async () => {
    // Scored predictions as the scoring job leaves them (the job itself is tested in learning/).
    const seeded: [number, boolean][] = [[0.15, false], [0.15, true], [0.85, true], [0.85, true], [0.85, true], [0.85, false]];
    for (const [i, [probability, hit]] of seeded.entries()) {
      await h.db.query(
        `INSERT INTO behavior_predictions (project_id, id, subject_kind, subject_external_id, target_kind, horizon_days, lookback_days, model, probability,
           explanation, made_at, due_at, scored_at, hit)
         VALUES ($1, $2, 'customer', 'c-cal', 'event_occurrence', 30, 365, 'gamma_poisson', $3, 'seeded', now(), now(), now(), $4)`,
        [project.projectId, `prd_console${i}`, probability, hit],
      );
    }
    const page = await open();
    await signIn(page, readKey);
    await page.getByRole('link', { name: 'Learning' }).click();
    const buckets = page.getByRole('table', { name: 'Calibration buckets' });
    await buckets.waitFor();
    const row = (range: string) => buckets.getByRole('row').filter({ has: page.getByRole('cell', { name: range, exact: true }) });
    expect(await row('0.1–0.2').getByRole('cell').allTextContents()).toEqual(['0.1–0.2', '2', '2', '1', '0.15', '0.50', '0']);
    expect(await row('0.8–0.9').getByRole('cell').allTextContents()).toEqual(['0.8–0.9', '4', '4', '3', '0.85', '0.75', '0']);
    expect(await row('0.4–0.5').getByRole('cell').allTextContents()).toEqual(['0.4–0.5', '0', '0', '0', '–', '–', '0']);
    // The plot is drawn (a canvas inside the labelled chart), and the headline figures are the API's.
    expect(await page.getByRole('img', { name: /Reliability diagram/ }).locator('canvas').count()).toBeGreaterThan(0);
    const report = (await h.call('GET', project.projectId, '/lattice/calibration?bucketCount=10')).json();
    expect(await page.getByText(/^ECE/).textContent()).toBe(`ECE ${report.expectedCalibrationError.toFixed(3)}`);
    expect(await page.getByText(/^Brier/).textContent()).toBe(`Brier ${report.brierScore.toFixed(3)}`);
    await page.getByRole('region', { name: 'Effectiveness' }).getByText('No outcomes yet').waitFor();
    await page.screenshot({ path: join(SHOTS, 'learning.png'), fullPage: true });
    await page.close();
  });

  it('shows a subject: its profile, its patterns, its predictions with their intervals, its events', async () => {
    const gymGoer = { kind: 'customer', externalId: 'c-gym' };
    const DAY = 86_400_000;
    const last = Date.now() - 6 * DAY;
    for (let week = 9; week >= 0; week--) {
      const at = new Date(last - week * 7 * DAY).toISOString();
      const res = await h.call('POST', project.projectId, '/admin/memory', {
        body: { content: `gym visit by c-gym at ${at}`, type: 'event', subject: gymGoer, validFrom: at, metadata: { eventType: 'gym', amount: 12 } },
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    const mined = await h.call('POST', project.projectId, '/lattice/patterns/extract', { body: { subject: gymGoer } });
    expect(mined.json().patternsCreated, mined.body).toBeGreaterThan(0);
    expect((await h.call('POST', project.projectId, '/lattice/events/emit', { body: { eventType: 'gym.checkin', subject: gymGoer, payload: { club: 'downtown' } } })).statusCode).toBe(200);
    expect((await h.call('POST', project.projectId, '/memory-typed/attributes', { body: { attributeKey: 'weight', dataType: 'numeric', unit: 'kg' } })).statusCode).toBe(201);
    const weights = [80.5, 80.1, 79.8, 79.9, 79.2, 78.8, 78.9, 78.1];
    const ingested = await h.call('POST', project.projectId, '/memory-typed/observations', {
      body: { observations: weights.map((v, i) => ({ attributeKey: 'weight', subjectKind: 'customer', subjectExternalId: 'c-gym', valueNumeric: v, observedAt: new Date(last - (8 - i) * 7 * DAY).toISOString() })) },
    });
    expect(ingested.statusCode, ingested.body).toBe(200);
    const accumulator = (await h.call('GET', project.projectId, '/memory-typed/accumulator?subjectKind=customer&subjectExternalId=c-gym&attributeKey=weight')).json();
    expect(accumulator.count).toBe(8);

    const page = await open();
    const profileCalls: string[] = [];
    page.on('request', (request) => request.url().endsWith('/lattice/profile') && profileCalls.push(request.url()));
    await signIn(page, readKey);
    await page.getByRole('link', { name: 'Subject' }).click();
    await page.getByLabel('External id').fill('c-gym');
    await page.getByRole('button', { name: 'Open' }).click();
    await page.getByRole('heading', { name: 'Subject customer:c-gym' }).waitFor();
    const profile = page.getByRole('region', { name: 'Profile' });
    await profile.getByText('RFM scores').waitFor();
    // Typing another subject into the form reads nothing until it is opened.
    expect(profileCalls).toHaveLength(1);
    await page.getByLabel('External id').fill('c-someone-else');
    await page.getByLabel('External id').fill('c-gym');
    expect(profileCalls).toHaveLength(1);
    expect(await profile.innerText()).toMatch(/Activity in the last year\s+1[01], the last/);
    const patterns = page.getByRole('table', { name: 'Patterns' });
    await patterns.waitFor();
    expect(await patterns.getByRole('cell', { name: /every 7 days/ }).count()).toBeGreaterThan(0);

    await page.getByRole('button', { name: 'Project the next 30 days' }).click();
    const predicted = page.getByRole('list', { name: 'Predicted events' });
    await predicted.waitFor();
    const interval = predicted.getByRole('img', { name: /confidence \d\.\d\d, 95% interval \d\.\d\d to \d\.\d\d/ }).first();
    const [, point, lower, upper] = /confidence (\S+), 95% interval (\S+) to (\S+)/.exec((await interval.getAttribute('aria-label'))!)!.map(Number);
    expect(lower).toBeLessThanOrEqual(point!);
    expect(point).toBeLessThanOrEqual(upper!);

    const weight = page.getByRole('article', { name: 'Attribute weight' });
    const figures = weight.locator('.figures');
    await figures.getByText(/^count/).waitFor();
    expect(await weight.locator('canvas').count()).toBeGreaterThan(0);
    expect(await figures.getByText(/^mean/).textContent()).toBe(`mean ${Number(accumulator.mean.toFixed(3))}`);
    expect(await figures.getByText(/^EWMA/).textContent()).toBe(`EWMA ${Number(accumulator.ewma.toFixed(3))}`);
    expect(await figures.getByText(/^count/).textContent()).toBe('count 8');
    const timeline = page.getByRole('region', { name: 'Event timeline' });
    await timeline.getByText('gym.checkin').waitFor();
    await page.screenshot({ path: join(SHOTS, 'subject.png'), fullPage: true });
    await page.close();
  });

  it('answers another project\'s id with the API\'s 404, never its data', async () => {
    const other = await h.project();
    const page = await open();
    await signIn(page, readKey, other.projectId);
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 60_000 }).toMatch(/NOT_FOUND, 404/);
    await page.close();
  });
});
