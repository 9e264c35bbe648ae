// Per-key rate limiting of project routes: counted in Redis when the deployment has it (shared by
// every API process), in process memory otherwise. A request without a key counts against its IP.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { RateLimitError } from '../platform/errors.js';
import { failFastRedis } from '../platform/redis.js';
import { bearerToken } from './auth.js';
import { hashKey } from './keys.js';

type RateLimitConfig = Pick<Config, 'redisUrl' | 'rateLimitPerMinute' | 'queuePrefix' | 'queueCommandTimeoutMs'>;

async function keyRateLimit(app: FastifyInstance, { config }: { config: RateLimitConfig }): Promise<void> {
  // While Redis is down a count fails at once (no offline queue, a command timeout) and the request
  // goes through uncounted (skipOnError), rather than waiting on Redis.
  const redis = config.redisUrl === undefined ? undefined : failFastRedis(config.redisUrl, config.queueCommandTimeoutMs);
  if (redis) {
    app.addHook('onClose', async () => redis.disconnect());
    // Without an offline queue, a count sent before the connection is up fails and goes uncounted:
    // a process waits (briefly, never failing its start) for Redis before it takes requests.
    app.addHook('onReady', () => untilReady(redis, Math.max(config.queueCommandTimeoutMs, 1000)));
  }
  await app.register(rateLimit, {
    max: config.rateLimitPerMinute,
    timeWindow: 60_000,
    redis,
    nameSpace: `${config.queuePrefix}:rate:`,
    skipOnError: true,
    keyGenerator: (request) => {
      const token = bearerToken(request);
      return token === undefined ? `ip:${request.ip}` : `key:${hashKey(token).slice(0, 32)}`;
    },
    errorResponseBuilder: (_request, context) =>
      new RateLimitError(`rate limit of ${context.max} requests per minute exceeded; retry in ${Math.ceil(context.ttl / 1000)} s`, Math.ceil(context.ttl / 1000)),
  });
}

async function untilReady(redis: ReturnType<typeof failFastRedis>, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    redis.once('ready', done);
  });
}

export default fp(keyRateLimit, { name: 'key-rate-limit' });
