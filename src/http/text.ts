// Text in request bodies, made what PostgreSQL will store before anything reads it (see chat/text.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { wellFormedDeep } from '../chat/text.js';

/** A preValidation hook: lone surrogates in any string of the body become U+FFFD, once, for every route. */
export function wellFormedBody(request: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  request.body = wellFormedDeep(request.body);
  done();
}
