// The input guard's rules, by example and by property, and the error handler's backstop.
import fc from 'fast-check';
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { toErrorBody } from '../../src/platform/error-handler.js';
import { findInputProblem, isStorableTimestamp, MAX_NESTING } from '../../src/platform/input-guard.js';
import { createPgliteDb } from '../../src/platform/db-pglite.js';

const nested = (depth: number): unknown => {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
};

describe('findInputProblem', () => {
  it('names the field that holds a NUL, an unpaired surrogate, or a bad key', () => {
    expect(findInputProblem({ content: 'ok', metadata: { note: 'a\u0000b' } }, 'body')).toEqual({ path: 'body.metadata.note', message: expect.stringMatching(/NUL/) });
    expect(findInputProblem({ tags: ['fine', 'x\uD800'] }, 'body')).toEqual({ path: 'body.tags[1]', message: expect.stringMatching(/unpaired/) });
    expect(findInputProblem({ metadata: { 'bad\uDC00key': 1 } }, 'body')?.message).toMatch(/key that contains an unpaired/);
    expect(findInputProblem({ 'odd key': 'a\u0000' }, 'query')?.path).toBe('query["odd key"]');
    expect(findInputProblem({ emoji: '😀 paired surrogates are fine', n: 1, b: true, z: null }, 'body')).toBeUndefined();
    expect(findInputProblem(undefined, 'body')).toBeUndefined();
  });

  it(`refuses nesting deeper than ${MAX_NESTING}, at any depth, without recursion`, () => {
    expect(findInputProblem(nested(MAX_NESTING), 'body')).toBeUndefined();
    expect(findInputProblem(nested(MAX_NESTING + 1), 'body')?.message).toMatch(/nests deeper than 32/);
    expect(findInputProblem(nested(200_000), 'body')?.message).toMatch(/nests deeper/);
  });

  it('finds a NUL wherever it is put in any JSON value, and accepts any well-formed value without one', () => {
    const clean = fc.json({ depthSize: 'small' }).map((text) => JSON.parse(text) as unknown);
    fc.assert(
      fc.property(clean, (value) => {
        const text = JSON.stringify(value);
        const wellFormed = !/[\uD800-\uDFFF]/.test(text) && !text.includes('\\u0000');
        fc.pre(wellFormed && !/"[^"]*\\u0000/.test(text));
        expect(findInputProblem(value, 'body')).toBeUndefined();
      }),
    );
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 1, maxLength: 5 }), fc.nat(), fc.string(), (path, at, text) => {
        const poisoned = text.slice(0, at % (text.length + 1)) + '\u0000' + text.slice(at % (text.length + 1));
        let value: unknown = poisoned;
        for (const key of [...path].reverse()) value = { [key.replace(/[\u0000\uD800-\uDFFF]/g, '') || 'k']: value };
        expect(findInputProblem(value, 'body')?.message).toMatch(/NUL/);
      }),
    );
  });
});

describe('isStorableTimestamp', () => {
  it('accepts RFC 3339 instants of years 0001 to 9999', () => {
    for (const ok of ['2026-11-23T10:00:00Z', '2024-02-29T23:59:59.123456+05:30', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '2026-11-23t10:00:00z']) {
      expect(isStorableTimestamp(ok), ok).toBe(true);
    }
  });

  it('refuses what Postgres or JS cannot hold, and what is not a calendar date', () => {
    for (const bad of [
      '2016-12-31T23:59:60Z', // leap second: JS has none
      '0000-01-01T00:00:00Z', // year 0
      '0001-01-01T00:00:00+01:00', // year 0 in UTC
      '2023-02-29T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-11-23T24:00:00Z',
      '2026-11-23T10:00:00+24:00',
      '2026-11-23',
      '+275760-09-13T00:00:00Z',
      'yesterday',
    ]) {
      expect(isStorableTimestamp(bad), bad).toBe(false);
    }
  });

  it('agrees with Date on every instant it accepts', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }), (date) => {
        expect(isStorableTimestamp(date.toISOString())).toBe(true);
      }),
    );
  });
});

describe('the error backstop', () => {
  const request = { id: 'req-1' } as FastifyRequest;

  it('answers 400 for a Postgres data exception (SQLSTATE class 22), from a real one', async () => {
    const db = await createPgliteDb({});
    try {
      const error = await db.query("SELECT 'not a number'::int").catch((e: unknown) => e);
      expect((error as { code: string }).code).toBe('22P02');
      expect(toErrorBody(error, request).body).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR', message: expect.stringMatching(/cannot be stored/) });
    } finally {
      await db.close();
    }
  });

  it('answers 503 with Retry-After for connection failures that carry no code', () => {
    for (const message of ['Connection terminated unexpectedly', 'Connection terminated due to connection timeout', 'timeout exceeded when trying to connect', 'Connection is closed.']) {
      const { body, retryAfter } = toErrorBody(new Error(message), request);
      expect(body, message).toMatchObject({ statusCode: 503, code: 'SERVICE_UNAVAILABLE' });
      expect(retryAfter).toBeGreaterThan(0);
    }
    expect(toErrorBody(new Error('something else'), request).body.statusCode).toBe(500);
  });
});
