// Events as the chat produces them: one DomainEvent names an event of docs/events.md (its table is
// src/contract/events.ts), the ids whose channels receive it, and its payload; the broadcaster and the outbox deliver it.
import { EVENTS, type EventName, type EventPayloads, type MessageSentPayload } from '../contract/events.js';
import { conversationChannel, userChannel } from '../contract/channels.js';
import type { MessageResource } from '../contract/resources.js';

export function messageSentPayload(message: MessageResource): MessageSentPayload {
  const { edited_at: _editedAt, ...payload } = message;
  return payload;
}

/** One event to deliver: a name from the table, the ids whose channels receive it, and its payload. */
export interface DomainEvent<N extends EventName = EventName> {
  readonly name: N;
  /** Conversation ids or user ids, by the event's channel kind. */
  readonly to: readonly number[];
  readonly payload: EventPayloads[N];
  /** The payload as JSON text, when its producer encoded it already (exactly JSON.stringify(payload)). */
  readonly json?: string;
  /** Or as a part of its own between a head and tail it shares with other events (a group's InboxUpdated, one per member). */
  readonly part?: JsonPart;
}

/** An event's JSON text as `shared.head + middle + shared.tail`; the same `shared` object for every event that shares it. */
export interface JsonPart {
  readonly shared: { readonly head: string; readonly tail: string };
  readonly middle: string;
}

export function event<N extends EventName>(name: N, to: number | readonly number[], payload: EventPayloads[N], json?: string | JsonPart): DomainEvent<N> {
  const e = { name, to: typeof to === 'number' ? [to] : to, payload };
  if (json === undefined) return e;
  return typeof json === 'string' ? { ...e, json } : { ...e, part: json };
}

/** The event's payload as JSON text (exactly JSON.stringify(payload)). */
export function jsonOf(e: DomainEvent): string {
  if (e.json !== undefined) return e.json;
  if (e.part !== undefined) return `${e.part.shared.head}${e.part.middle}${e.part.shared.tail}`;
  return JSON.stringify(e.payload);
}

export function channelsOf(e: DomainEvent): string[] {
  const toChannel = EVENTS[e.name].channel === 'conversation' ? conversationChannel : userChannel;
  return e.to.map(toChannel);
}
