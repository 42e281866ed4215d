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
}

export function event<N extends EventName>(name: N, to: number | readonly number[], payload: EventPayloads[N], json?: string): DomainEvent<N> {
  const e = { name, to: typeof to === 'number' ? [to] : to, payload };
  return json === undefined ? e : { ...e, json };
}

export function channelsOf(e: DomainEvent): string[] {
  const toChannel = EVENTS[e.name].channel === 'conversation' ? conversationChannel : userChannel;
  return e.to.map(toChannel);
}
