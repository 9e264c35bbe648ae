// A real browser on the console, for the end-to-end tests: the harness's app listening on a local
// port, Debian's chromium driven by playwright-core, and the two steps every test takes (open a
// page, sign in with a pasted key). Screenshots go to test-results/console/ (ignored by git).
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { consoleRoot } from '../../src/platform/console.js';
import { projectRoot } from '../../src/platform/project-root.js';
import type { Harness } from '../helpers/harness.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SHOTS = join(projectRoot(), 'test-results', 'console');
/** Whether `npm run build` has built the console. */
export const built = existsSync(join(consoleRoot(), 'index.html'));
/** Whether a browser test can run here: the console built and chromium installed. */
export const browserReady = built && existsSync(CHROMIUM);

export interface ConsoleBrowser {
  origin: string;
  open(viewport?: { width: number; height: number }): Promise<Page>;
  signIn(page: Page, key: string, projectId: string): Promise<void>;
  close(): Promise<void>;
}

export async function startConsoleBrowser(h: Harness): Promise<ConsoleBrowser> {
  const origin = await h.app.listen({ host: '127.0.0.1', port: 0 });
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  mkdirSync(SHOTS, { recursive: true });
  return {
    origin,
    async open(viewport = { width: 1280, height: 800 }) {
      const page = await browser.newPage({ viewport });
      await page.goto(`${origin}/console/`);
      return page;
    },
    async signIn(page, key, projectId) {
      await page.getByLabel('Project id').fill(projectId);
      await page.getByLabel('API key').fill(key);
      await page.getByRole('button', { name: 'Sign in' }).click();
    },
    close: () => browser.close(),
  };
}
