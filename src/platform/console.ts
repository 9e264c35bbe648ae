// The web console (console/, built by `npm run build` into dist/console) at /console/. Static files
// only: the console signs in with a key the person pastes and talks to the public REST API like any
// client, so nothing here is authenticated. Hashed assets are cached for a year; index.html never,
// so a new build is picked up at once.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { NotFoundError } from './errors.js';
import { projectRoot } from './project-root.js';

export const CONSOLE_PATH = '/console/';

export function consoleRoot(): string {
  return join(projectRoot(), 'dist', 'console');
}

export default fp(async function consolePlugin(app: FastifyInstance, options: { root?: string }) {
  const root = options.root ?? consoleRoot();
  app.get('/console', { schema: { hide: true } }, async (_request, reply) => reply.redirect(CONSOLE_PATH, 301));
  if (!existsSync(join(root, 'index.html'))) {
    app.get('/console/*', { schema: { hide: true } }, async () => {
      throw new NotFoundError('the console is not built: run npm run build');
    });
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: CONSOLE_PATH,
    index: 'index.html',
    wildcard: true,
    setHeaders: (reply, path) => {
      reply.header('cache-control', path.endsWith('index.html') ? 'no-cache' : 'public, max-age=31536000, immutable');
    },
  });
});
