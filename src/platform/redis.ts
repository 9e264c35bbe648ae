// A Redis client for calls made while a request waits (enqueue, readiness, rate counts): it never
// queues commands while disconnected and times each one out, so an outage fails the call at once
// (the caller answers 503, or goes on without Redis) instead of holding the request until Redis
// returns. It reconnects by itself. Blocking consumers (BullMQ workers, QueueEvents) need the
// opposite settings and make their own.
import { Redis } from 'ioredis';

export function failFastRedis(url: string, commandTimeoutMs: number): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: commandTimeoutMs,
    connectTimeout: Math.max(commandTimeoutMs, 1000),
  });
  client.on('error', () => {}); // surfaced by the failed calls
  return client;
}
