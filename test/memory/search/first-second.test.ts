// Findable from the first second: on a fresh `lattice serve` (the embedded default), the encoder
// loads at start and /readyz waits for it; then a memory observed is embedded as it is saved, and
// a search sent at once, in words the memory does not share, finds it (issue: "food allergies"
// answered [] twice before the memory was embedded three seconds later).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listeningPort, startCli, waitUntilReady, type LongRunning } from '../../helpers/processes.js';

describe('a fresh server finds a memory the moment it is written', () => {
  let dataDir: string;
  let server: LongRunning;
  let base: string;
  let apiKey: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'lattice-first-'));
    // PORT=0: the system gives a free port, which the server logs.
    server = startCli(['serve'], { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', POOL_MAX_THREADS: '1', LOG_LEVEL: 'info' });
    [, apiKey] = (await server.waitFor(/^\s+(lat_\S+)\s*$/m, 120_000)) as unknown as [string, string];
    base = `http://127.0.0.1:${await listeningPort(server)}/api/v1/projects/demo`;
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('says ready once the encoder has loaded, then finds an observed memory by meaning in the next request', async () => {
    expect(await waitUntilReady(`http://127.0.0.1:${new URL(base).port}`)).toMatchObject({ status: 'ready', encoder: 'loaded' });
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const observed = await fetch(`${base}/memory/observe`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ text: 'I am allergic to peanuts and I live in Lisbon.', userId: 'alice' }),
    });
    expect(observed.status, await observed.clone().text()).toBeLessThan(300);
    for (let attempt = 0; attempt < 2; attempt++) {
      const searched = await fetch(`${base}/memory/search`, { method: 'POST', headers, body: JSON.stringify({ query: 'food allergies', subject: { kind: 'user', externalId: 'alice' } }) });
      const body = await searched.text();
      expect(searched.status, body).toBe(200);
      const hits = JSON.parse(body) as { content: string; scoreParts: { semantic: number | null } }[];
      const allergy = hits.find((hit) => /peanut/i.test(hit.content));
      expect(allergy, `the allergy is found at once: ${body}`).toBeDefined();
      // Found by meaning: it was embedded as it was saved.
      expect(allergy!.scoreParts.semantic).not.toBeNull();
    }
  }, 60_000);
});
