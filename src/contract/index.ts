// src/contract: the public API's definitions, what Parley promises its clients, at the bottom of the server. The API's resources (resources.ts,
// docs/api.md), the events with their names, channel kinds and payloads (events.ts, docs/events.md), the chat's
// channel names (channels.ts), and the API's error codes with their HTTP statuses and the error that carries one
// (api-errors.ts). Resources and payloads are TypeBox schemas: one definition gives the server's types, the HTTP
// serialization, docs/openapi.json and the types of @parley/client, which the web client uses too
// (scripts/client-types.ts writes them, with the text of scripts/web-types.ts).
// It imports nothing from the project (only typebox): store, events, chat, http and realtime import it downward.
export * from './resources.js';
export * from './events.js';
export * from './channels.js';
export * from './api-errors.js';
