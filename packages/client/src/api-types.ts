// The HTTP API's requests and answers by path, from docs/openapi.json (generated/openapi.ts), for the calls the
// client has no named method for: `chat.request<ApiAnswer<'/blocks', 'get'>>('GET', '/blocks')`.
import type { paths } from './generated/openapi.js';

type Below<P> = P extends `/api/chat/v1${infer Rest}` ? Rest : never;
type Paths = { [P in keyof paths as Below<P>]: paths[P] };
type Json<T> = T extends { content: { 'application/json': infer Body } } ? Body : undefined;

/** A path below /api/chat/v1 as docs/openapi.json names it: `/conversations/{id}/reads`. */
export type ApiPath = keyof Paths;
export type ApiMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The JSON body of a successful answer (200, 201 or 202; undefined for 204). */
export type ApiAnswer<P extends ApiPath, M extends ApiMethod> = Paths[P][M] extends { responses: infer R }
  ? R extends { 200: infer A } ? Json<A> : R extends { 201: infer A } ? Json<A> : R extends { 202: infer A } ? Json<A> : undefined
  : never;

/** The JSON body a request takes. */
export type ApiBody<P extends ApiPath, M extends ApiMethod> = Paths[P][M] extends { requestBody?: infer B } ? Json<NonNullable<B>> : never;
