// @parley/client: a typed client for Parley's HTTP API and its Pusher-protocol events (docs/client-sdk.md).
export { ParleyClient, type ConnectionState, type ParleyClientOptions } from './client.js';
export type { ApiAnswer, ApiBody, ApiMethod, ApiPath } from './api-types.js';
export { ParleyError, isNetworkError } from './errors.js';
export { newClientMessageId } from './ids.js';
export type { EventHandler, EventMeta, ParleyEventName, ParleyEvents } from './events.js';
export type { Query, RequestOptions, TokenSource } from './http.js';
export type { HistoryOptions, HistoryPage, InboxOptions, SendMessageInput } from './resources.js';
export type * from './generated/contract.js';
export type { components, operations, paths } from './generated/openapi.js';
