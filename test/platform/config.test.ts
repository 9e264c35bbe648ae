import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const KEY = 'k'.repeat(24);

/** The ConfigError loadConfig throws for this environment (fails the test when it does not throw). */
function problemsFor(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig defaults', () => {
  it('listens on loopback (127.0.0.1:8080) by default, with ./data resolved to an absolute path', () => {
    const config = loadConfig({});
    expect(config.port).toBe(8080);
    expect(config.host).toBe('127.0.0.1');
    expect(config.dataDir).toBe(resolve('./data'));
    expect(config.dataDir.startsWith('/')).toBe(true);
  });

  it('uses the embedded database and the in-process queue when no URL is set', () => {
    const config = loadConfig({});
    expect(config.databaseUrl).toBeUndefined();
    expect(config.redisUrl).toBeUndefined();
    expect(config.embeddingProvider).toBe('local');
    expect(config.embeddingDimensions).toBe(512);
  });

  it('reads nothing from process.env when given an explicit environment', () => {
    const saved = process.env.PORT;
    process.env.PORT = '9999';
    try {
      expect(loadConfig({}).port).toBe(8080);
    } finally {
      if (saved === undefined) delete process.env.PORT;
      else process.env.PORT = saved;
    }
  });

  it('runs jobs in serve without Redis, even when SERVE_RUNS_JOBS=false', () => {
    expect(loadConfig({}).serveRunsJobs).toBe(true);
    expect(loadConfig({ SERVE_RUNS_JOBS: 'false' }).serveRunsJobs).toBe(true);
  });

  it('does not run jobs in serve with Redis unless SERVE_RUNS_JOBS is true', () => {
    const redis = { REDIS_URL: 'redis://127.0.0.1:6379' };
    expect(loadConfig(redis).serveRunsJobs).toBe(false);
    expect(loadConfig({ ...redis, SERVE_RUNS_JOBS: 'true' }).serveRunsJobs).toBe(true);
    expect(loadConfig({ ...redis, SERVE_RUNS_JOBS: '1' }).serveRunsJobs).toBe(true);
  });

  it('accepts postgres, rediss and a gateway with its URL and dimension', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgresql://u@db:5432/lattice',
      REDIS_URL: 'rediss://cache:6380',
      EMBEDDING_PROVIDER: 'gateway',
      MODEL_GATEWAY_URL: 'https://gateway.example/v1',
      EMBEDDING_DIMENSIONS: '1536',
      PORT: ' 3000 ',
    });
    expect(config).toMatchObject({
      databaseUrl: 'postgresql://u@db:5432/lattice',
      redisUrl: 'rediss://cache:6380',
      embeddingProvider: 'gateway',
      embeddingDimensions: 1536,
      embeddingModel: 'text-embedding-3-small',
      port: 3000,
    });
  });

  it('sizes the background pool as the other unless told, at niceness 10, and the search at ef_search 400', () => {
    expect(loadConfig({ POOL_MAX_THREADS: '3' })).toMatchObject({ poolMaxThreads: 3, poolBackgroundThreads: 3, poolBackgroundNiceness: 10, searchHnswEfSearch: 400 });
    expect(loadConfig({ POOL_MAX_THREADS: '3', POOL_BACKGROUND_THREADS: '1', POOL_BACKGROUND_NICENESS: '0', SEARCH_HNSW_EF_SEARCH: '250' })).toMatchObject({
      poolBackgroundThreads: 1,
      poolBackgroundNiceness: 0,
      searchHnswEfSearch: 250,
    });
    expect(problemsFor({ POOL_BACKGROUND_NICENESS: '20', SEARCH_HNSW_EF_SEARCH: '5' }).message).toMatch(/POOL_BACKGROUND_NICENESS[\s\S]*SEARCH_HNSW_EF_SEARCH|SEARCH_HNSW_EF_SEARCH[\s\S]*POOL_BACKGROUND_NICENESS/);
  });

  it('keeps an idle pool thread ten minutes unless told, and refuses an idle timeout under a second', () => {
    expect(loadConfig({}).poolIdleTimeoutMs).toBe(600_000);
    expect(loadConfig({ POOL_IDLE_TIMEOUT_MS: '30000' }).poolIdleTimeoutMs).toBe(30_000);
    expect(problemsFor({ POOL_IDLE_TIMEOUT_MS: '999' }).message).toMatch(/POOL_IDLE_TIMEOUT_MS/);
  });

  it('returns a frozen object', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(() => {
      (config as { port: number }).port = 1;
    }).toThrow(TypeError);
    expect(config.port).toBe(8080);
  });
});

describe('loadConfig refusals', () => {
  it.each<[string, Record<string, string>, string]>([
    ['PORT=abc', { PORT: 'abc' }, 'PORT'],
    ['PORT=70000', { PORT: '70000' }, 'PORT'],
    ['PORT=80.5', { PORT: '80.5' }, 'PORT'],
    ['LOG_LEVEL=loud', { LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    ['DATABASE_URL=mysql://x', { DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    ['REDIS_URL=not a url', { REDIS_URL: 'not a url' }, 'REDIS_URL'],
    ['REDIS_URL=http://x', { REDIS_URL: 'http://x' }, 'REDIS_URL'],
    ['EMBEDDING_PROVIDER=gateway without MODEL_GATEWAY_URL', { EMBEDDING_PROVIDER: 'gateway' }, 'MODEL_GATEWAY_URL'],
    ['EMBEDDING_PROVIDER=remote', { EMBEDDING_PROVIDER: 'remote' }, 'EMBEDDING_PROVIDER'],
    ['EMBEDDING_DIMENSIONS=768 with the local provider', { EMBEDDING_DIMENSIONS: '768' }, 'EMBEDDING_DIMENSIONS'],
    ['LATTICE_BOOTSTRAP_API_KEY without LATTICE_BOOTSTRAP_PROJECT', { LATTICE_BOOTSTRAP_API_KEY: KEY }, 'LATTICE_BOOTSTRAP_PROJECT'],
    ['a bootstrap key shorter than 24 characters', { LATTICE_BOOTSTRAP_PROJECT: 'acme', LATTICE_BOOTSTRAP_API_KEY: 'short' }, 'LATTICE_BOOTSTRAP_API_KEY'],
    ['an upper-case bootstrap project id', { LATTICE_BOOTSTRAP_PROJECT: 'Acme' }, 'LATTICE_BOOTSTRAP_PROJECT'],
    ['a one-character bootstrap project id', { LATTICE_BOOTSTRAP_PROJECT: 'a' }, 'LATTICE_BOOTSTRAP_PROJECT'],
    ['a bootstrap project id with a slash', { LATTICE_BOOTSTRAP_PROJECT: 'acme/prod' }, 'LATTICE_BOOTSTRAP_PROJECT'],
    ['SERVE_RUNS_JOBS=maybe with Redis', { REDIS_URL: 'redis://x', SERVE_RUNS_JOBS: 'maybe' }, 'SERVE_RUNS_JOBS'],
  ])('refuses %s, naming %s', (_label, env, key) => {
    const error = problemsFor(env);
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toContain(key);
    expect(error.message).toContain(key);
  });

  it('accepts a valid bootstrap project with a long enough key', () => {
    const config = loadConfig({ LATTICE_BOOTSTRAP_PROJECT: 'acme-prod_1', LATTICE_BOOTSTRAP_API_KEY: KEY });
    expect(config.bootstrapProject).toBe('acme-prod_1');
    expect(config.bootstrapApiKey).toBe(KEY);
  });

  it('reports every bad key together in one ConfigError', () => {
    const error = problemsFor({
      PORT: 'abc',
      LOG_LEVEL: 'loud',
      DATABASE_URL: 'mysql://x',
      REDIS_URL: 'not a url',
      EMBEDDING_DIMENSIONS: '768',
    });
    expect(error.problems).toHaveLength(5);
    for (const key of ['PORT', 'LOG_LEVEL', 'DATABASE_URL', 'REDIS_URL', 'EMBEDDING_DIMENSIONS']) {
      expect(error.problems.some((p) => p.startsWith(key))).toBe(true);
      expect(error.message).toContain(key);
    }
  });

  it('does not echo the value of a URL it refuses (it may hold a password)', () => {
    const error = problemsFor({ DATABASE_URL: 'mysql://root:hunter2@db/x' });
    expect(error.message).not.toContain('hunter2');
  });
});
