// The console end to end, continued: the graph page (search, a neighbourhood drawn, as-of, retired
// edges), a memory's provenance and graph entities, a subject's decisions and outcomes, the
// learning page's discovered behaviors and cohorts, the project page, each with a READ_MEMORY key;
// every page of an empty project; the pages on a phone-sized screen.
import type { Page } from 'playwright-core';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';
import { browserReady, SHOTS, startConsoleBrowser, type ConsoleBrowser } from './browser.js';

const DAY = 86_400_000;

describe.skipIf(!browserReady)('the console in a browser: graph, provenance, decisions, discovery', () => {
  let h: Harness;
  let browser: ConsoleBrowser;
  let project: { projectId: string; apiKey: string };
  let readKey: string;
  let ana: string;
  let note: string;
  let insight: string;

  const post = async (path: string, body: unknown, expected = 201) => {
    const res = await h.call('POST', project.projectId, path, { body });
    expect(res.statusCode, res.body).toBe(expected);
    return res.json();
  };

  beforeAll(async () => {
    h = await createHarness();
    project = await h.project();
    readKey = await h.key(project.projectId, ['READ_MEMORY']);
    const entity = async (type: string, canonicalName: string) => (await post('/admin/memory/entities', { type, canonicalName })).id as string;
    ana = await entity('person', 'Ana Silva');
    const acme = await entity('org', 'Acme');
    const lisbon = await entity('location', 'Lisbon');
    const porto = await entity('location', 'Porto');
    note = (await post('/admin/memory', { content: 'Ana Silva works at Acme as a buyer', type: 'fact' })).id;
    insight = (await post('/admin/memory', { content: 'Acme buys through Ana', type: 'insight', sourceMemoryIds: [note] })).id;
    await post('/admin/memory/edges', { subjectId: ana, predicate: 'works_at', objectId: acme, weight: 0.9, validFrom: '2024-01-01T00:00:00Z', sourceMemoryId: note });
    await post('/admin/memory/edges', { subjectId: acme, predicate: 'located_in', objectId: lisbon, weight: 0.7, validFrom: '2024-01-01T00:00:00Z' });
    const moved = (await post('/admin/memory/edges', { subjectId: ana, predicate: 'lives_in', objectId: porto, validFrom: '2023-01-01T00:00:00Z' })).id;
    await post(`/admin/memory/edges/${moved}/retire`, { at: '2024-06-01T00:00:00Z' }, 200);
    browser = await startConsoleBrowser(h);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  const signedIn = async (viewport?: { width: number; height: number }): Promise<Page> => {
    const page = await browser.open(viewport);
    await browser.signIn(page, readKey, project.projectId);
    await page.getByRole('link', { name: 'Graph' }).waitFor();
    return page;
  };
  const edgeRows = async (page: Page) =>
    (await page.getByRole('table', { name: 'Edges' }).locator('tbody tr').allInnerTexts()).map((row) => row.split('\t').slice(0, 4).map((cell) => cell.trim()));

  it("finds an entity and draws its neighbourhood, two hops, with predicates and weights", async () => {
    const page = await signedIn();
    await page.getByRole('link', { name: 'Graph' }).click();
    await page.getByLabel('Entity name or alias').fill('ana');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('list', { name: 'Entities found' }).getByRole('link', { name: 'Ana Silva' }).click();
    await page.getByRole('heading', { name: 'Ana Silva' }).waitFor();
    await page.getByRole('table', { name: 'Edges' }).waitFor();
    expect(await edgeRows(page)).toEqual([
      ['1', 'Ana Silva', 'works_at', 'Acme'],
      ['2', 'Acme', 'located_in', 'Lisbon'],
    ]);
    expect(await page.getByRole('table', { name: 'Edges' }).getByRole('cell', { name: '0.90' }).count()).toBe(1);
    // Cytoscape drew it: its canvases are inside the drawing's box.
    expect(await page.getByRole('img', { name: /A drawing of 2 edges/ }).locator('canvas').count()).toBeGreaterThan(0);
    await page.screenshot({ path: join(SHOTS, 'graph.png'), fullPage: true });
    // One hop leaves the neighbour's edge out.
    await page.getByLabel('Hops').selectOption('1');
    await expect.poll(() => edgeRows(page), { timeout: 60_000 }).toEqual([['1', 'Ana Silva', 'works_at', 'Acme']]);
    await page.close();
  });

  it('finds and opens an entity by keyboard alone', async () => {
    const page = await signedIn();
    await page.goto(`${browser.origin}/console/#/graph`);
    await page.getByLabel('Entity name or alias').focus();
    await page.keyboard.type('acme');
    await page.keyboard.press('Enter');
    const found = page.getByRole('list', { name: 'Entities found' }).getByRole('link', { name: 'Acme' });
    await found.waitFor();
    // From the search field: past the Find button to the first entity found, then open it.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await found.evaluate((link) => link === document.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Acme' }).waitFor();
    // Both directions: Ana's edge into Acme, and Acme's out to Lisbon.
    expect((await edgeRows(page)).map((row) => row[2]).sort()).toEqual(['located_in', 'works_at']);
    await page.getByLabel('Hops').focus();
    await page.keyboard.press('ArrowUp');
    await expect.poll(async () => (await page.getByLabel('Hops').inputValue()), { timeout: 60_000 }).toBe('1');
    await page.close();
  });

  it('hides with the as-of control the edges not valid then, and shows retired edges on request', async () => {
    const page = await signedIn();
    await page.goto(`${browser.origin}/console/#/graph/${ana}`);
    await page.getByRole('table', { name: 'Edges' }).waitFor();
    expect((await edgeRows(page)).map((row) => row[2])).toEqual(['works_at', 'located_in']);
    await page.getByLabel('As of').fill('2023-06-01T12:00');
    await expect.poll(() => edgeRows(page), { timeout: 60_000 }).toEqual([['1', 'Ana Silva', 'lives_in', 'Porto']]);
    await page.getByLabel('As of').fill('');
    await expect.poll(async () => (await edgeRows(page)).map((row) => row[2]), { timeout: 60_000 }).toEqual(['works_at', 'located_in']);
    await page.getByLabel('Show retired edges').check();
    const retired = page.locator('tr.retired');
    await retired.waitFor();
    expect(await retired.innerText()).toMatch(/lives_in\s+Porto[\s\S]*ended /);
    await page.screenshot({ path: join(SHOTS, 'graph-retired.png'), fullPage: true });
    await page.close();
  });

  it("shows a memory's provenance: the insight built on it and its graph entities", async () => {
    const page = await signedIn();
    await page.goto(`${browser.origin}/console/#/memories/${note}`);
    await page.getByRole('heading', { name: 'Ana Silva works at Acme as a buyer' }).waitFor();
    const builtOn = page.getByRole('list', { name: 'Built on it' });
    await builtOn.getByRole('link', { name: 'Acme buys through Ana' }).waitFor();
    expect(await builtOn.getByRole('link').getAttribute('href')).toBe(`#/memories/${insight}`);
    const entities = page.getByRole('region', { name: 'Graph entities' });
    await entities.getByRole('link', { name: 'Ana Silva' }).waitFor();
    expect((await entities.getByRole('link').allTextContents()).sort()).toEqual(['Acme', 'Ana Silva']);
    expect(await entities.getByRole('link', { name: 'Ana Silva' }).getAttribute('href')).toBe(`#/graph/${ana}`);
    await page.screenshot({ path: join(SHOTS, 'memory-provenance.png'), fullPage: true });
    await page.close();
  });

  it("shows a subject's decisions with the outcomes that followed", async () => {
    const subject = { kind: 'customer', externalId: 'c-dec' };
    const offered = await post('/lattice/decisions', { subject, decisionType: 'retention', actionType: 'send_offer', policy: 'v2', occurredAt: new Date(Date.now() - 3 * DAY).toISOString() });
    await post('/lattice/outcomes', { decisionId: offered.decisionId, result: 'success', reward: 12.5, realizedAt: new Date(Date.now() - DAY).toISOString() });
    await post('/lattice/decisions', { subject, decisionType: 'retention', actionType: 'call' });
    const page = await signedIn();
    await page.goto(`${browser.origin}/console/#/subjects/customer/c-dec`);
    const decisions = page.getByRole('table', { name: 'Decisions' });
    await decisions.waitFor();
    const row = (action: string) => decisions.getByRole('row').filter({ has: page.getByRole('cell', { name: action, exact: true }) });
    expect(await row('send_offer').innerText()).toMatch(/retention\s+send_offer\s+v2\s+executed\s+success \(reward 12\.5\)/);
    expect(await row('call').innerText()).toMatch(/none yet/);
    await page.getByRole('region', { name: 'Decisions and outcomes' }).screenshot({ path: join(SHOTS, 'subject-decisions.png') });
    await page.close();
  });

  it('discovers behaviors and finds a cohort, as the API answers them', async () => {
    // A second project: six weekly big spenders and six lapsed small buyers, mined, features kept.
    const other = await h.project();
    const otherReader = await h.key(other.projectId, ['READ_MEMORY']);
    await h.call('POST', other.projectId, '/memory-typed/attributes', { body: { attributeKey: 'purchase', dataType: 'numeric', unit: 'USD' } });
    const now = Date.now();
    const observations = [];
    for (let s = 0; s < 6; s++) {
      for (let i = 0; i < 20; i++) observations.push({ attributeKey: 'purchase', subjectKind: 'customer', subjectExternalId: `w${s}`, valueNumeric: 80, observedAt: new Date(now - (i * 7 + 1) * DAY + s * 3_600_000).toISOString() });
      for (let i = 0; i < 4; i++) observations.push({ attributeKey: 'purchase', subjectKind: 'customer', subjectExternalId: `l${s}`, valueNumeric: 10, observedAt: new Date(now - (i * 29 + 150 + s) * DAY).toISOString() });
    }
    expect((await h.call('POST', other.projectId, '/memory-typed/observations', { body: { observations } })).json().accepted).toBe(observations.length);
    expect((await h.call('POST', other.projectId, '/lattice/patterns/extract', { body: { windowDays: 365 } })).json().contactsProcessed).toBe(12);
    await expect.poll(async () => (await h.apis.discovery.all(other.projectId)).length, { timeout: 30_000 }).toBe(12);
    const expected = (await h.call('POST', other.projectId, '/lattice/discover', { body: {} })).json();
    expect(expected.behaviors.length).toBeGreaterThan(0);

    const page = await browser.open();
    await browser.signIn(page, otherReader, other.projectId);
    await page.getByRole('link', { name: 'Learning' }).click();
    await page.getByRole('button', { name: 'Discover behaviors' }).click();
    const behaviors = page.getByRole('table', { name: 'Behaviors' });
    await behaviors.waitFor({ timeout: 30_000 });
    expect(await behaviors.locator('tbody tr td:first-child').allTextContents()).toEqual(expected.behaviors.map((b: { label: string }) => b.label));
    expect(await behaviors.locator('tbody tr td:nth-child(2)').allTextContents()).toEqual(expected.behaviors.map((b: { size: number }) => String(b.size)));

    const cohort = (await h.call('POST', other.projectId, '/lattice/cohort', { body: { subject: { kind: 'customer', externalId: 'w0' }, k: 10 } })).json();
    const section = page.getByRole('region', { name: 'Cohort' });
    await section.getByLabel('External id').fill('w0');
    await section.getByRole('button', { name: 'Find similar subjects' }).click();
    const members = page.getByRole('table', { name: 'Cohort members' });
    await members.waitFor();
    expect(await members.locator('tbody tr td:first-child').allTextContents()).toEqual(cohort.members.map((m: { subject: { kind: string; externalId: string } }) => `${m.subject.kind}:${m.subject.externalId}`));
    // The nearest are the other weekly buyers.
    expect(cohort.members[0].subject.externalId).toMatch(/^w/);
    await page.screenshot({ path: join(SHOTS, 'learning-discovery.png'), fullPage: true });
    await page.close();
  });

  it("shows the project's usage against its plan, its entitlements, and its work and jobs in flight", async () => {
    // A job that starts later, so that it is in flight while the page is read.
    await h.lattice.runtime.queue.enqueue('memory.consolidate', { projectId: project.projectId }, { delayMs: 3_600_000 });
    // The seeded memories embedded, so that the figures hold still while the page is read.
    const read = async () => (await h.call('GET', project.projectId, '/project', { apiKey: readKey })).json();
    await expect.poll(async () => (await read()).work.find((w: { name: string }) => w.name === 'embeddings').pending, { timeout: 30_000 }).toBe(0);
    const expected = await read();
    const page = await signedIn();
    await page.getByRole('link', { name: 'Project' }).click();
    await page.getByRole('heading', { name: `Project ${expected.project.name}` }).waitFor();
    expect(await page.getByText(`plan ${expected.project.plan}`).isVisible()).toBe(true);
    const usage = page.getByRole('region', { name: 'Usage' });
    for (const m of expected.usage.meters) {
      const row = usage.getByRole('listitem').filter({ hasText: m.meter });
      expect(await row.innerText(), m.meter).toContain(m.limit === null ? `${m.used.toLocaleString('en-US')} used` : `${m.used.toLocaleString('en-US')} of ${m.limit.toLocaleString('en-US')}`);
    }
    const features = page.getByRole('region', { name: 'Entitlements' }).getByRole('listitem');
    expect(await features.count()).toBe(Object.keys(expected.entitlements.features).length);
    const backlogs = page.getByRole('table', { name: 'Backlogs' });
    const embeddings = expected.work.find((w: { module: string; name: string }) => w.module === 'memory' && w.name === 'embeddings');
    expect(await backlogs.getByRole('row').filter({ hasText: 'memory embeddings' }).innerText()).toContain(`${embeddings.done} / ${embeddings.total}`);
    const jobs = page.getByRole('table', { name: 'Jobs' });
    expect(await jobs.getByRole('row').filter({ hasText: 'memory.consolidate' }).innerText()).toMatch(/memory\.consolidate\s+delayed\s+1/);
    await page.screenshot({ path: join(SHOTS, 'project.png'), fullPage: true });
    await page.close();
  });

  it('answers every page of an empty project with how to put data in', async () => {
    const empty = await h.project();
    const emptyReader = await h.key(empty.projectId, ['READ_MEMORY']);
    const page = await browser.open();
    await browser.signIn(page, emptyReader, empty.projectId);
    for (const [hash, headings] of [
      ['#/memories', ['No memories yet']],
      ['#/review', ['Nothing to review']],
      ['#/subjects/customer/nobody', ['No activity in the last year']],
      ['#/graph', ['No entities yet']],
      ['#/events', ['No events since then', 'No alert rules']],
      ['#/learning', ['No prediction has been scored yet', 'No outcomes yet']],
    ] as const) {
      await page.goto(`${browser.origin}/console/${hash}`);
      for (const name of headings) await page.getByRole('heading', { name }).waitFor();
      // Each says how, with the call to make.
      expect(await page.locator('.empty .code').count(), hash).toBeGreaterThan(0);
      expect(await page.getByRole('alert').count(), hash).toBe(0);
      await page.screenshot({ path: join(SHOTS, `empty-${hash.split('/')[1]}.png`), fullPage: true });
    }
    await page.close();
  });

  it('fits every page on a phone-sized screen', async () => {
    const page = await signedIn({ width: 390, height: 844 });
    for (const [hash, ready] of [
      ['#/memories', () => page.getByRole('table').first()],
      [`#/graph/${ana}`, () => page.getByRole('table', { name: 'Edges' })],
      ['#/subjects/customer/c-dec', () => page.getByRole('region', { name: 'Decisions and outcomes' }).getByText(/No decision|retention/).first()],
      ['#/review', () => page.getByRole('heading', { name: 'Nothing to review' })],
      ['#/events', () => page.getByRole('heading', { name: 'No alert rules' })],
      ['#/learning', () => page.getByRole('heading', { name: 'No prediction has been scored yet' })],
      ['#/project', () => page.getByRole('table', { name: 'Backlogs' })],
    ] as const) {
      await page.goto(`${browser.origin}/console/${hash}`);
      await ready().waitFor();
      // Nothing wider than the screen but the tables, which scroll in their own boxes.
      expect(await page.evaluate(() => document.documentElement.scrollWidth), hash).toBeLessThanOrEqual(390);
      await page.screenshot({ path: join(SHOTS, `phone-${hash.split('/')[1]}.png`), fullPage: true });
    }
    await page.close();
  });
});
