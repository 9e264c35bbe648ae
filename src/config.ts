// The one reader of process.env. Validates every setting once, applies defaults, and fails the
// boot with a message that names every bad key. The result is frozen and passed down.
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { isProjectId } from './platform/project-id.js';
import { NO_ALLOWANCE, parseTargetAllowance, type TargetAllowance } from './platform/targets.js';

/** The vertical packs a deployment can load (LATTICE_PACKS; all of them by default). */
export const PACKS = ['healthcare', 'financial'] as const;

export type EmbeddingProvider = 'local' | 'gateway';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  /** Unset: the embedded PGlite database under `dataDir`. */
  readonly databaseUrl: string | undefined;
  /** Unset: the in-process job runner. */
  readonly redisUrl: string | undefined;
  readonly queuePrefix: string;
  /** With Redis, whether `serve` also consumes jobs (without Redis it always does). */
  readonly serveRunsJobs: boolean;
  readonly workerConcurrency: number;
  readonly jobTimeoutMs: number;
  readonly bootstrapProject: string | undefined;
  readonly bootstrapApiKey: string | undefined;
  /** Create a `demo` project and print a key on first start when the database has no project. */
  readonly createDemoProject: boolean;
  readonly logLevel: LogLevel;
  readonly bodyLimitBytes: number;
  readonly requestTimeoutMs: number;
  /** How long a call to Redis from a request (enqueue, readiness) may wait before it answers 503. */
  readonly queueCommandTimeoutMs: number;
  /** Postgres: how long making a connection, and /readyz's `SELECT 1`, may take before a 503. */
  readonly dbConnectTimeoutMs: number;
  /** Postgres: how long a request may wait for a free connection of a busy pool before a 503. */
  readonly dbAcquireTimeoutMs: number;
  /** Postgres: connections for write transactions. */
  readonly dbPoolMax: number;
  /** Postgres: connections for lone statements and read-only transactions (searches, reads). */
  readonly dbStatementPoolMax: number;
  /** SIGTERM: how long in-flight requests and active jobs get to finish before the process exits. */
  readonly shutdownTimeoutMs: number;
  readonly rateLimitPerMinute: number;
  /** How long a resolved API key is reused without a query; a revocation by another process takes effect within it. 0: off. */
  readonly apiKeyCacheMs: number;
  readonly poolMaxThreads: number;
  readonly poolMaxQueue: number;
  readonly poolTaskTimeoutMs: number;
  /** How long a pool thread may sit idle before it is stopped (and its copy of the encoder freed). */
  readonly poolIdleTimeoutMs: number;
  /** The nice value of the background pool's threads (embedding behind writes); 0 to 19. */
  readonly poolBackgroundNiceness: number;
  /** Threads of the background pool (default POOL_MAX_THREADS); each holds its own copy of the encoder. */
  readonly poolBackgroundThreads: number;
  readonly embeddingProvider: EmbeddingProvider;
  readonly embeddingDimensions: number;
  readonly embeddingModel: string;
  readonly modelGatewayUrl: string | undefined;
  readonly modelGatewayApiKey: string | undefined;
  readonly modelGatewayTimeoutMs: number;
  /** Model names sent to the gateway. */
  readonly modelGatewayChatModel: string;
  readonly modelGatewayVisionModel: string;
  readonly modelGatewayTranscriptionModel: string;
  /** Tries of one gateway call in all (429, 5xx and failed connections are tried again). */
  readonly modelGatewayMaxAttempts: number;
  readonly modelGatewayRetryBaseMs: number;
  /** BLOB_DIR: where uploaded files are kept; unset, blobs/ under DATA_DIR. */
  readonly blobDir: string | undefined;
  /** BLOB_S3_*: an S3-compatible bucket for uploaded files instead of BLOB_DIR (all of endpoint, bucket and keys, or none). */
  readonly blobS3: { endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string } | undefined;
  /** MEDIA_MAX_BYTES: the largest file an attachment or media upload may carry, decoded. */
  readonly mediaMaxBytes: number;
  /** MEMORY_LLM_MEMORY_EXTRACTION_ENABLED: observe adds a model-based pass (with the FEATURE_MEMORY_INTELLIGENCE entitlement). */
  readonly llmExtraction: boolean;
  /** MEMORY_MULTIMODAL_ENABLED: POST /memory/media reads images, audio and documents into memories. */
  readonly multimodal: boolean;
  /** MEMORY_REFLECTION_ENABLED: POST /admin/memory/reflect synthesises insights with the gateway. */
  readonly reflection: boolean;
  /** A project with at most this many embedded memories is searched by exact scan, above by HNSW once the memory.project-indexes job has put its rows in the graph (exact scan until then). */
  readonly searchExactScanMaxRows: number;
  /** HNSW's candidate list on the approximate path (hnsw.ef_search): recall of the vector list against its cost. */
  readonly searchHnswEfSearch: number;
  /** SEARCH_HNSW_BUILD_MEMORY_MB: maintenance_work_mem of an HNSW build on Postgres (at boot, when the index is missing or was built with other settings), and of a project's IVFFlat build. */
  readonly searchHnswBuildMemoryMb: number;
  /** SEARCH_IVF_MIN_ROWS: a project with this many embedded memories gets an IVFFlat index of its own (Postgres). */
  readonly searchIvfMinRows: number;
  /** SEARCH_IVF_PROBES: the lists such an index probes per search (ivfflat.probes). */
  readonly searchIvfProbes: number;
  /** SEARCH_IVF_EVERY_MS: how often the memory.project-indexes job looks at the projects' sizes (admits those past SEARCH_EXACT_SCAN_MAX_ROWS to the HNSW graph, builds IVFFlat indexes). */
  readonly searchIvfEveryMs: number;
  /** MEMORY_ASSOCIATIVE_RECALL_ENABLED: fold the graph bonus into ranked search. */
  readonly associativeRecall: boolean;
  /** GRAPH_EXTRACTION_ENABLED: whether this deployment extracts entities from memories at all (projects still opt in). */
  readonly graphExtraction: boolean;
  /** AP_MEMORY_OBSERVE_ASYNC_ENABLED: with Redis, observe enqueues the raw turn and extracts in a job. */
  readonly observeAsync: boolean;
  /** COMPLIANCE_AUDIT_ENABLED: keep the audit log of calls that touch a subject's data (on by default). */
  readonly auditLog: boolean;
  /** COMPLIANCE_AUDIT_RETENTION_DAYS: audit rows older than this are pruned nightly (tombstones are kept). */
  readonly auditRetentionDays: number;
  /** Pattern mining after new activity waits until a subject has been quiet this long ... */
  readonly miningDebounceMs: number;
  /** ... or its first unmined activity is this old. */
  readonly miningMaxWaitMs: number;
  /** How often the pattern monitor ticks every project with an overdue pattern (src/behavior/monitor/). */
  readonly monitorTickIntervalMs: number;
  /** POST /lattice/patterns/extract calls per minute per key (SDK-WIRE 4.4: 5). */
  readonly patternExtractPerMinute: number;
  /**
   * WEBHOOK_ALLOW_PRIVATE_TARGETS: allow webhook targets on loopback, private, unique-local and CGNAT
   * addresses. Link-local and cloud metadata addresses stay refused (platform/targets.ts).
   */
  readonly webhookAllowPrivateTargets: boolean;
  /** WEBHOOK_ALLOWED_TARGETS: the networks (CIDRs, addresses) and host names webhooks may reach beyond public addresses. */
  readonly webhookAllowedTargets: TargetAllowance;
  /** One webhook attempt, connect to response. */
  readonly webhookTimeoutMs: number;
  /** Attempts per webhook delivery in all, the synchronous one included. */
  readonly webhookMaxAttempts: number;
  /** Backoff before the second attempt; doubles each time (with jitter, capped at an hour). */
  readonly webhookRetryBaseMs: number;
  /** Vertical packs loaded (LATTICE_PACKS): `healthcare` and `financial`. */
  readonly packs: readonly string[];
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Collects problems instead of throwing on the first, so one boot names every bad key. */
class Reader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  raw(key: string): string | undefined {
    const value = this.env[key]?.trim();
    return value === undefined || value === '' ? undefined : value;
  }

  string(key: string, fallback: string): string {
    return this.raw(key) ?? fallback;
  }

  int(key: string, fallback: number, min: number, max: number): number {
    const value = this.raw(key);
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) {
      this.problems.push(`${key}=${JSON.stringify(value)}: expected an integer from ${min} to ${max}`);
      return fallback;
    }
    return n;
  }

  bool(key: string, fallback: boolean): boolean {
    const value = this.raw(key)?.toLowerCase();
    if (value === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(value)) return true;
    if (['0', 'false', 'no', 'off'].includes(value)) return false;
    this.problems.push(`${key}=${JSON.stringify(value)}: expected true or false`);
    return fallback;
  }

  oneOf<T extends string>(key: string, allowed: readonly T[], fallback: T): T {
    const value = this.raw(key);
    if (value === undefined) return fallback;
    if ((allowed as readonly string[]).includes(value)) return value as T;
    this.problems.push(`${key}=${JSON.stringify(value)}: expected one of ${allowed.join(', ')}`);
    return fallback;
  }

  /** A comma-separated list of CIDRs, addresses and host names (platform/targets.ts). */
  targets(key: string): TargetAllowance {
    const value = this.raw(key);
    if (value === undefined) return NO_ALLOWANCE;
    const { allowance, problems } = parseTargetAllowance(value.split(','));
    for (const problem of problems) this.problems.push(`${key}: ${problem}`);
    return allowance;
  }

  url(key: string, protocols: readonly string[]): string | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      this.problems.push(`${key}: not a valid URL`);
      return undefined;
    }
    if (!protocols.includes(parsed.protocol)) {
      this.problems.push(`${key}: expected a ${protocols.join(' or ')} URL, got ${parsed.protocol}`);
      return undefined;
    }
    return value;
  }
}

/** The S3-compatible blob store: all of its settings, or none (a partial set is a problem). */
function blobS3(r: Reader): Config['blobS3'] {
  const endpoint = r.url('BLOB_S3_ENDPOINT', ['http:', 'https:']);
  const bucket = r.raw('BLOB_S3_BUCKET');
  const accessKeyId = r.raw('BLOB_S3_ACCESS_KEY_ID');
  const secretAccessKey = r.raw('BLOB_S3_SECRET_ACCESS_KEY');
  const given = [endpoint, bucket, accessKeyId, secretAccessKey].filter((v) => v !== undefined).length;
  if (given === 0) return undefined;
  if (given < 4) {
    r.problems.push('BLOB_S3_ENDPOINT, BLOB_S3_BUCKET, BLOB_S3_ACCESS_KEY_ID and BLOB_S3_SECRET_ACCESS_KEY go together: set all four or none');
    return undefined;
  }
  return { endpoint: endpoint!, bucket: bucket!, region: r.raw('BLOB_S3_REGION') ?? 'us-east-1', accessKeyId: accessKeyId!, secretAccessKey: secretAccessKey! };
}

export function loadConfig(env: Env = process.env): Readonly<Config> {
  const r = new Reader(env);
  const cores = availableParallelism();
  // Each database pool's default size: two connections a core, and one. On two cores, 5 and 5
  // answered 64 clients of one project at 135 req/s (p99 0.8 s), 10 and 10 at 117 (p99 1.0 s):
  // more connections than the cores can run only hold transactions open while their process waits
  // its turn (bench/concurrency.ts, docs/operations.md, "Many writers at once"). A Postgres on a larger machine
  // of its own takes DB_POOL_MAX and DB_STATEMENT_POOL_MAX.
  const poolDefault = 2 * cores + 1;

  const bootstrapProject = r.raw('LATTICE_BOOTSTRAP_PROJECT');
  const bootstrapApiKey = r.raw('LATTICE_BOOTSTRAP_API_KEY');
  if (bootstrapProject !== undefined && !isProjectId(bootstrapProject)) {
    r.problems.push('LATTICE_BOOTSTRAP_PROJECT: expected 2 to 63 characters of a-z, 0-9, _ and -');
  }
  if (bootstrapApiKey !== undefined && bootstrapProject === undefined) {
    r.problems.push('LATTICE_BOOTSTRAP_API_KEY is set without LATTICE_BOOTSTRAP_PROJECT');
  }
  if (bootstrapApiKey !== undefined && bootstrapApiKey.length < 24) {
    r.problems.push('LATTICE_BOOTSTRAP_API_KEY: must be at least 24 characters');
  }

  const redisUrl = r.url('REDIS_URL', ['redis:', 'rediss:']);
  const packs = r
    .string('LATTICE_PACKS', PACKS.join(','))
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .filter((p) => p !== '' && p !== 'none');
  for (const p of packs) if (!(PACKS as readonly string[]).includes(p)) r.problems.push(`LATTICE_PACKS: unknown pack ${JSON.stringify(p)} (known: ${PACKS.join(', ')}; none for no pack)`);
  const embeddingProvider = r.oneOf('EMBEDDING_PROVIDER', ['local', 'gateway'] as const, 'local');
  const poolMaxThreads = r.int('POOL_MAX_THREADS', cores, 1, 256);
  const modelGatewayUrl = r.url('MODEL_GATEWAY_URL', ['http:', 'https:']);
  const embeddingDimensions = r.int('EMBEDDING_DIMENSIONS', 512, 1, 16000);
  if (embeddingProvider === 'gateway' && modelGatewayUrl === undefined) {
    r.problems.push('EMBEDDING_PROVIDER=gateway needs MODEL_GATEWAY_URL');
  }
  if (embeddingProvider === 'local' && embeddingDimensions !== 512) {
    r.problems.push('EMBEDDING_DIMENSIONS: the local embedder produces 512 dimensions');
  }

  const config: Config = {
    port: r.int('PORT', 8080, 0, 65535),
    host: r.string('HOST', '127.0.0.1'),
    dataDir: resolve(r.string('DATA_DIR', './data')),
    databaseUrl: r.url('DATABASE_URL', ['postgres:', 'postgresql:']),
    redisUrl,
    queuePrefix: r.string('QUEUE_PREFIX', 'lattice'),
    serveRunsJobs: redisUrl === undefined ? true : r.bool('SERVE_RUNS_JOBS', false),
    workerConcurrency: r.int('WORKER_CONCURRENCY', 4, 1, 256),
    jobTimeoutMs: r.int('JOB_TIMEOUT_MS', 30_000, 100, 600_000),
    bootstrapProject,
    bootstrapApiKey,
    createDemoProject: r.bool('LATTICE_CREATE_DEMO', true),
    logLevel: r.oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    bodyLimitBytes: r.int('BODY_LIMIT_BYTES', 16 * 1024 * 1024, 1024, 256 * 1024 * 1024),
    requestTimeoutMs: r.int('REQUEST_TIMEOUT_MS', 60_000, 1000, 600_000),
    shutdownTimeoutMs: r.int('SHUTDOWN_TIMEOUT_MS', 10_000, 100, 600_000),
    queueCommandTimeoutMs: r.int('QUEUE_COMMAND_TIMEOUT_MS', 1000, 50, 60_000),
    dbConnectTimeoutMs: r.int('DB_CONNECT_TIMEOUT_MS', 1000, 50, 60_000),
    dbAcquireTimeoutMs: r.int('DB_ACQUIRE_TIMEOUT_MS', 10_000, 50, 600_000),
    dbPoolMax: r.int('DB_POOL_MAX', poolDefault, 1, 1000),
    dbStatementPoolMax: r.int('DB_STATEMENT_POOL_MAX', poolDefault, 1, 1000),
    rateLimitPerMinute: r.int('RATE_LIMIT_PER_MINUTE', 6000, 1, 10_000_000),
    apiKeyCacheMs: r.int('API_KEY_CACHE_MS', 5000, 0, 300_000),
    poolMaxThreads,
    poolMaxQueue: r.int('POOL_MAX_QUEUE', 256, 1, 100_000),
    poolTaskTimeoutMs: r.int('POOL_TASK_TIMEOUT_MS', 60_000, 100, 600_000),
    poolIdleTimeoutMs: r.int('POOL_IDLE_TIMEOUT_MS', 600_000, 1000, 86_400_000),
    poolBackgroundNiceness: r.int('POOL_BACKGROUND_NICENESS', 10, 0, 19),
    poolBackgroundThreads: r.int('POOL_BACKGROUND_THREADS', poolMaxThreads, 1, 256),
    embeddingProvider,
    embeddingDimensions,
    embeddingModel: r.string('EMBEDDING_MODEL', embeddingProvider === 'local' ? 'use-lite-512' : 'text-embedding-3-small'),
    modelGatewayUrl,
    modelGatewayApiKey: r.raw('MODEL_GATEWAY_API_KEY'),
    modelGatewayTimeoutMs: r.int('MODEL_GATEWAY_TIMEOUT_MS', 30_000, 100, 600_000),
    modelGatewayChatModel: r.raw('MODEL_GATEWAY_CHAT_MODEL') ?? 'gpt-4o-mini',
    modelGatewayVisionModel: r.raw('MODEL_GATEWAY_VISION_MODEL') ?? r.raw('MODEL_GATEWAY_CHAT_MODEL') ?? 'gpt-4o-mini',
    modelGatewayTranscriptionModel: r.raw('MODEL_GATEWAY_TRANSCRIPTION_MODEL') ?? 'whisper-1',
    modelGatewayMaxAttempts: r.int('MODEL_GATEWAY_MAX_ATTEMPTS', 3, 1, 10),
    modelGatewayRetryBaseMs: r.int('MODEL_GATEWAY_RETRY_BASE_MS', 500, 0, 60_000),
    reflection: r.bool('MEMORY_REFLECTION_ENABLED', false),
    multimodal: r.bool('MEMORY_MULTIMODAL_ENABLED', false),
    llmExtraction: r.bool('MEMORY_LLM_MEMORY_EXTRACTION_ENABLED', false),
    blobDir: r.raw('BLOB_DIR') === undefined ? undefined : resolve(r.raw('BLOB_DIR')!),
    blobS3: blobS3(r),
    mediaMaxBytes: r.int('MEDIA_MAX_BYTES', 10 * 1024 * 1024, 1024, 256 * 1024 * 1024),
    searchExactScanMaxRows: r.int('SEARCH_EXACT_SCAN_MAX_ROWS', 10_000, 0, 10_000_000),
    searchHnswEfSearch: r.int('SEARCH_HNSW_EF_SEARCH', 400, 10, 1000),
    searchHnswBuildMemoryMb: r.int('SEARCH_HNSW_BUILD_MEMORY_MB', 2048, 64, 1024 * 1024),
    searchIvfMinRows: r.int('SEARCH_IVF_MIN_ROWS', 200_000, 100, 1_000_000_000),
    searchIvfProbes: r.int('SEARCH_IVF_PROBES', 10, 1, 10_000),
    searchIvfEveryMs: r.int('SEARCH_IVF_EVERY_MS', 600_000, 10_000, 7 * 86_400_000),
    associativeRecall: r.bool('MEMORY_ASSOCIATIVE_RECALL_ENABLED', false),
    graphExtraction: r.bool('GRAPH_EXTRACTION_ENABLED', true),
    observeAsync: r.bool('AP_MEMORY_OBSERVE_ASYNC_ENABLED', false),
    auditLog: r.bool('COMPLIANCE_AUDIT_ENABLED', true),
    auditRetentionDays: r.int('COMPLIANCE_AUDIT_RETENTION_DAYS', 400, 1, 36_500),
    miningDebounceMs: r.int('BEHAVIOR_MINING_DEBOUNCE_MS', 30_000, 0, 86_400_000),
    miningMaxWaitMs: r.int('BEHAVIOR_MINING_MAX_WAIT_MS', 300_000, 0, 86_400_000),
    monitorTickIntervalMs: r.int('MONITOR_TICK_INTERVAL_MS', 900_000, 10_000, 86_400_000),
    patternExtractPerMinute: r.int('PATTERN_EXTRACT_PER_MINUTE', 5, 1, 10_000_000),
    webhookAllowPrivateTargets: r.bool('WEBHOOK_ALLOW_PRIVATE_TARGETS', false),
    webhookAllowedTargets: r.targets('WEBHOOK_ALLOWED_TARGETS'),
    webhookTimeoutMs: r.int('WEBHOOK_TIMEOUT_MS', 3000, 100, 60_000),
    webhookMaxAttempts: r.int('WEBHOOK_MAX_ATTEMPTS', 8, 1, 50),
    webhookRetryBaseMs: r.int('WEBHOOK_RETRY_BASE_MS', 10_000, 10, 3_600_000),
    packs,
  };

  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return Object.freeze(config);
}
