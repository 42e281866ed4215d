// One error handler: every failure becomes {message, code, errors?} with the right status; 5xx hide details.
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { ChatError, ERRORS, type ErrorCode } from '../contract/api-errors.js';

const STATUS_CODES: Partial<Record<number, ErrorCode>> = {
  400: 'bad_request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_failed',
  429: 'rate_limited',
  503: 'service_unavailable',
};

interface ValidationIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Ajv's issues → {field: [messages]}, naming fields the way clients sent them. */
function fieldErrors(issues: readonly ValidationIssue[], context: string | undefined): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const issue of issues) {
    // A nullable field's failure also reports its null branch and the anyOf itself: keep the useful line.
    if (issue.keyword === 'anyOf' || (issue.keyword === 'type' && issue.params.type === 'null')) continue;
    const path = issue.instancePath.split('/').filter(Boolean);
    if (typeof issue.params.missingProperty === 'string') path.push(issue.params.missingProperty);
    const field = path.join('.') || context || 'body';
    (errors[field] ??= []).push(issue.message ?? 'is invalid');
  }
  return errors;
}

/** Errors a dependency raises when it is down: the client should retry, not give up. */
function isUnavailable(err: unknown): boolean {
  const { code, name, message } = err as { code?: unknown; name?: unknown; message?: unknown };
  // ioredis, while Redis is away: the offline queue is off, so commands fail at once.
  if (name === 'MaxRetriesPerRequestError') return true;
  if (typeof message === 'string' && /enableOfflineQueue|Connection is closed/.test(message)) return true;
  // pg, when the server goes away under a query or a pooled connection.
  if (typeof message === 'string' && /Connection terminated|timeout exceeded when trying to connect|is not queryable/.test(message)) return true;
  // Class 08 is a lost connection, except 08P01 (protocol violation): a statement PostgreSQL refused (e.g. more
  // than 65,535 parameters) fails the same way on every retry, so it is a fault of ours (500), not an outage.
  return (
    typeof code === 'string' &&
    (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P03', '53300'].includes(code) || (code.startsWith('08') && code !== '08P01'))
  );
}

/** Paths (dotted, as in `errors`) of the strings in a parsed JSON body that hold U+0000. Iterative: any depth. */
function nulFields(body: unknown): string[] {
  const found: string[] = [];
  const stack: [unknown, string][] = [[body, '']];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) found.push(path || 'body');
    } else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) stack.push([child, path ? `${path}.${key}` : key]);
    }
  }
  return found.sort();
}

/** A preValidation hook: PostgreSQL text cannot hold U+0000, so a string carrying one is invalid input. */
export async function refuseNulCharacters(request: FastifyRequest): Promise<void> {
  const fields = nulFields(request.body);
  if (fields.length > 0) {
    const message = 'Text may not contain the NUL character.';
    throw new ChatError('validation_failed', message, { errors: Object.fromEntries(fields.map((f) => [f, [message]])) });
  }
}

/**
 * A preValidation hook: a route that takes a JSON object refuses a body of another type with 415 naming the
 * type sent. (Fastify reads text/plain as a string, which would otherwise fail validation as "body must be
 * object", as if a field named body were wrong.)
 */
export async function refuseNonJsonBodies(request: FastifyRequest): Promise<void> {
  if (typeof request.body !== 'string' || !request.routeOptions.schema?.body) return;
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim() || 'none';
  throw new ChatError('unsupported_media_type', `The request body must be JSON (Content-Type: application/json), not ${type}.`);
}

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | ChatError | Error, request, reply) => {
    if (err instanceof ChatError) {
      if (err.details.retryAfterSeconds) reply.header('Retry-After', String(err.details.retryAfterSeconds));
      return reply.status(err.status).send({ message: err.message, code: err.code, ...(err.details.errors ? { errors: err.details.errors } : {}) });
    }
    const fastifyErr = err as FastifyError;
    if (fastifyErr.validation) {
      const errors = fieldErrors(fastifyErr.validation as ValidationIssue[], fastifyErr.validationContext);
      const status = fastifyErr.validationContext === 'params' ? 404 : 422;
      if (status === 404) return reply.status(404).send({ message: 'Not found.', code: 'not_found' });
      return reply.status(422).send({ message: 'The given data was invalid.', code: 'validation_failed', errors });
    }
    if (request.raw.socket?.destroyed) {
      // The client went away mid-request (a cancelled upload): nobody reads the answer, and nothing is down.
      request.log.info({ code: (err as { code?: unknown }).code }, 'client closed the connection before the request was read');
      return reply.status(400).send({ message: 'The request was not completely received.', code: 'bad_request' });
    }
    if (isUnavailable(err)) {
      request.log.warn({ err }, 'dependency unavailable');
      return reply.status(503).header('Retry-After', '5').send({ message: 'A dependency is unavailable; retry shortly.', code: 'service_unavailable' });
    }
    const status = fastifyErr.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const code = STATUS_CODES[status] ?? 'bad_request';
      return reply.status(ERRORS[code] === status ? status : 400).send({ message: err.message, code });
    }
    request.log.error({ err }, 'unhandled error');
    return reply.status(500).send({ message: 'Internal server error.', code: 'internal_error' });
  });

  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send({ message: `No route ${request.method} ${request.url.split('?')[0]}.`, code: 'not_found' });
  });
}
