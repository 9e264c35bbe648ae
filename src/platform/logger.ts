// The process logger (pino, as Fastify uses). Structured JSON to stdout.
import { pino } from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import type { LogLevel } from '../config.js';

export function createLogger(level: LogLevel, name = 'lattice'): FastifyBaseLogger {
  return pino({ name, level }) as unknown as FastifyBaseLogger;
}
