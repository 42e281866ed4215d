// src/contract: the public API's definitions, what Parley promises its clients, at the bottom of the server. The API's resources (resources.ts,
// docs/api.md), the events with their names, channel kinds and payloads (events.ts, docs/events.md), the chat's
// channel names (channels.ts), and the API's error codes with their HTTP statuses and the error that carries one
// (api-errors.ts). Resources and payloads are TypeBox schemas: one definition gives the server's types, the HTTP
// serialization, docs/openapi.json and the web client's types (scripts/web-types.ts writes
// web/src/contract.generated.ts).
// It imports nothing from the project (only typebox): store, events, chat, http and realtime import it downward.
export * from './resources.js';
export * from './events.js';
export * from './channels.js';
export * from './api-errors.js';
