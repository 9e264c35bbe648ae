// Domain errors carry a stable code and an HTTP status. Services throw these (never HTTP errors);
// the one error handler and the MCP adapter map them. Internals (stack, SQL) never reach a client.

export type ErrorParams = Record<string, unknown>;

export abstract class AppError extends Error {
  abstract readonly code: string;
  abstract readonly statusCode: number;
  /** Seconds a client should wait before retrying (429 and 503). */
  retryAfterSeconds?: number;

  constructor(
    message: string,
    readonly params?: ErrorParams,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class ValidationError extends AppError {
  readonly code = 'VALIDATION_ERROR';
  readonly statusCode = 400;
}

export class AuthenticationError extends AppError {
  readonly code = 'AUTHENTICATION_ERROR';
  readonly statusCode = 401;
}

export class PermissionError extends AppError {
  readonly code = 'AUTHORIZATION_ERROR';
  readonly statusCode = 403;
}

export class FeatureDisabledError extends AppError {
  readonly code = 'FEATURE_DISABLED';
  readonly statusCode = 403;
  constructor(feature: string, plan: string, upgradeTo: string | undefined) {
    super(
      upgradeTo === undefined
        ? `The ${feature} feature is not enabled for this project (plan ${plan}). Contact your administrator to enable it.`
        : `The ${feature} feature is not included in the ${plan} plan. Upgrade to ${upgradeTo} to use it.`,
      { feature, plan, ...(upgradeTo === undefined ? {} : { upgradeTo }) },
    );
  }
}

/** A pack of the deployment turned off for the project (POST /memory-compliance-packs turns it back on). */
export class PackDisabledError extends AppError {
  readonly code = 'FEATURE_DISABLED';
  readonly statusCode = 403;
  constructor(pack: string) {
    super(`the ${pack} pack is turned off for this project: POST /memory-compliance-packs { "packId": "${pack}", "enabled": true } turns it on`, { pack });
  }
}

export class NotFoundError extends AppError {
  readonly code = 'NOT_FOUND';
  readonly statusCode = 404;
}

export class ConflictError extends AppError {
  readonly code = 'CONFLICT';
  readonly statusCode = 409;
}

export class PayloadTooLargeError extends AppError {
  readonly code = 'PAYLOAD_TOO_LARGE';
  readonly statusCode = 413;
}

export class RateLimitError extends AppError {
  readonly code = 'RATE_LIMIT';
  readonly statusCode = 429;
  constructor(message: string, retryAfterSeconds: number) {
    super(message, { retryAfterSeconds });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class QuotaExceededError extends AppError {
  readonly code = 'QUOTA_EXCEEDED';
  readonly statusCode = 429;
  constructor(meter: string, limit: number, used: number, requested: number, retryAfterSeconds: number) {
    super(
      `The ${meter} quota of ${limit} for this period is exhausted (${used} used, ${requested} requested). Upgrade the plan or wait for the next period.`,
      { meter, limit, used, requested },
    );
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class DependencyUnavailableError extends AppError {
  readonly code: string = 'SERVICE_UNAVAILABLE';
  readonly statusCode = 503;
  constructor(message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, undefined, options);
    this.retryAfterSeconds = options?.retryAfterSeconds ?? 5;
  }
}

/** The worker pool's queue is full: the caller should back off and retry. */
export class PoolOverloadedError extends DependencyUnavailableError {
  override readonly code = 'OVERLOADED';
}

/** A job awaited by an interactive route did not finish in time; it may still complete. */
/**
 * Concurrent writes met and Postgres aborted this one (a deadlock victim, a serialization failure)
 * every time it was tried: the request changed nothing and may be sent again.
 */
export class WriteConflictError extends DependencyUnavailableError {
  override readonly code = 'WRITE_CONFLICT';
  constructor(options?: { cause?: unknown }) {
    super('concurrent writes conflicted and this one was not applied; send it again', { ...options, retryAfterSeconds: 1 });
  }
}

export class JobTimeoutError extends DependencyUnavailableError {
  override readonly code = 'JOB_TIMEOUT';
}

/** A feature needs a deployment setting that is not configured (e.g. the model gateway). */
export class NotConfiguredError extends AppError {
  readonly code = 'NOT_CONFIGURED';
  readonly statusCode = 503;
}

/** Not an HTTP error: raised at boot or by the CLI when the embedded data directory is in use. */
export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `The data directory ${dataDir} is in use by another Lattice process${pid > 0 ? ` (pid ${pid})` : ''}. ` +
        'The embedded database admits one process at a time: stop the server (lattice serve) and run the command again, ' +
        'or use Postgres (DATABASE_URL) to run commands while the server runs.',
    );
    this.name = 'DataDirLockedError';
  }
}

/** An AppError raised by a job handler in another process, rebuilt on the side that awaited it. */
export class RemoteAppError extends AppError {
  constructor(
    readonly code: string,
    readonly statusCode: number,
    message: string,
    params?: ErrorParams,
  ) {
    super(message, params);
  }
}
