// The one error handler: every failure leaves in the same body, `{ statusCode, code, message,
// params? }` (WIRE.md), with the status its code maps to. 5xx answers never carry internals.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Type, type Static } from 'typebox';
import { asAppError } from './db.js';
import { AppError } from './errors.js';

export const ErrorBodySchema = Type.Object(
  {
    statusCode: Type.Integer(),
    code: Type.String({ description: 'Stable machine-readable code, e.g. VALIDATION_ERROR, FEATURE_DISABLED' }),
    message: Type.String({ description: 'Human-readable reason; for FEATURE_DISABLED, the upgrade prompt' }),
    params: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Details, e.g. the failing fields' })),
  },
  { $id: 'ErrorBody', title: 'Error' },
);
export type ErrorBody = Static<typeof ErrorBodySchema>;

/** Response schemas every project route shares, by status. */
export const errorResponses = Object.fromEntries(
  [400, 401, 403, 404, 409, 413, 415, 429, 500, 503].map((status) => [status, Type.Ref('ErrorBody')]),
);

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function describeValidation(error: FastifyError): ErrorBody {
  const context = error.validationContext ?? 'body';
  const issues = (error.validation ?? []) as ValidationIssue[];
  const errors = issues.map((issue) => {
    const extra = issue.params?.additionalProperty;
    const missing = issue.params?.missingProperty;
    const field = extra ?? missing;
    const path = `${context}${(issue.instancePath ?? '').replace(/\//g, '.')}${field ? `.${String(field)}` : ''}`;
    const message = extra ? 'is not a known field' : missing ? 'is required' : (issue.message ?? 'is invalid');
    return { path, message };
  });
  const first = errors[0];
  return {
    statusCode: 400,
    code: 'VALIDATION_ERROR',
    message: first ? `${first.path} ${first.message}` : `invalid ${context}`,
    params: { errors },
  };
}

/** Maps Fastify's own errors (body parsing, limits, timeouts) to our codes. */
const FASTIFY_CODES: Record<string, { statusCode: number; code: string; message?: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { statusCode: 413, code: 'PAYLOAD_TOO_LARGE', message: 'the request body exceeds the size limit' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'send the body as application/json' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { statusCode: 400, code: 'VALIDATION_ERROR', message: 'the JSON body is empty' },
  FST_ERR_CTP_INVALID_JSON_BODY: { statusCode: 400, code: 'VALIDATION_ERROR', message: 'the body is not valid JSON' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { statusCode: 400, code: 'VALIDATION_ERROR', message: 'the content length does not match the body' },
  // The router's own refusals, handed over through Fastify's `frameworkErrors` (src/app.ts).
  FST_ERR_BAD_URL: { statusCode: 400, code: 'VALIDATION_ERROR', message: 'the URL is not valid: a percent-escape does not decode' },
  FST_ERR_MAX_PARAM_LENGTH: { statusCode: 400, code: 'VALIDATION_ERROR', message: 'a path parameter is too long' },
};

export function toErrorBody(thrown: unknown, request: FastifyRequest): { body: ErrorBody; retryAfter?: number } {
  const error = asAppError(thrown) ?? thrown;
  if (error instanceof AppError) {
    return {
      body: {
        statusCode: error.statusCode,
        code: error.code,
        message: error.message,
        ...(error.params === undefined ? {} : { params: error.params }),
      },
      retryAfter: error.retryAfterSeconds,
    };
  }
  const fastifyError = error as FastifyError;
  if (fastifyError?.validation) return { body: describeValidation(fastifyError) };
  const mapped = fastifyError?.code ? FASTIFY_CODES[fastifyError.code] : undefined;
  if (mapped) return { body: { statusCode: mapped.statusCode, code: mapped.code, message: mapped.message ?? fastifyError.message } };
  if (fastifyError instanceof SyntaxError && fastifyError.statusCode === 400) {
    return { body: { statusCode: 400, code: 'VALIDATION_ERROR', message: 'the body is not valid JSON' } };
  }
  const status = fastifyError?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { body: { statusCode: status, code: 'BAD_REQUEST', message: fastifyError.message } };
  }
  return { body: { statusCode: 500, code: 'INTERNAL_ERROR', message: `internal error (request ${request.id})` } };
}

export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { body, retryAfter } = toErrorBody(error, request);
  if (body.statusCode >= 500) request.log.error({ err: error }, 'request failed');
  else request.log.info({ code: body.code, status: body.statusCode }, body.message);
  if (retryAfter !== undefined) reply.header('retry-after', String(Math.max(1, Math.ceil(retryAfter))));
  return reply.code(body.statusCode).type('application/json').send(body);
}

/** What Node refuses before a request reaches Fastify, in our codes. */
const CLIENT_ERRORS: Record<string, Omit<ErrorBody, 'params'>> = {
  ERR_HTTP_REQUEST_TIMEOUT: { statusCode: 408, code: 'REQUEST_TIMEOUT', message: 'the request was not received within the request timeout' },
  HPE_HEADER_OVERFLOW: { statusCode: 431, code: 'HEADERS_TOO_LARGE', message: 'the request headers exceed the size limit' },
};

/**
 * The server's clientError handler (Fastify's `clientErrorHandler`): a request not received within
 * REQUEST_TIMEOUT_MS, oversized headers or bytes that are not HTTP get the same body as every other
 * failure (Fastify's default writes `{ error, message, statusCode }`), then the socket is closed.
 */
export function clientErrorHandler(error: ConnectionError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const body = CLIENT_ERRORS[error.code] ?? { statusCode: 400, code: 'BAD_REQUEST', message: 'the request is not valid HTTP' };
  // As Node's own handler does: never write into a response that has begun on this socket.
  const response = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && response?.headersSent !== true) {
    const text = JSON.stringify(body);
    socket.write(
      `HTTP/1.1 ${body.statusCode} ${STATUS_CODES[body.statusCode]}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
    );
  }
  socket.destroy(error);
}

async function errorHandlerPlugin(app: FastifyInstance): Promise<void> {
  app.addSchema(ErrorBodySchema);
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply));
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ statusCode: 404, code: 'NOT_FOUND', message: `no route ${request.method} ${request.url.split('?')[0]}` }),
  );
}

export default fp(errorHandlerPlugin, { name: 'error-handler' });
