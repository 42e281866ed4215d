// The events of docs/events.md by the name they are broadcast as (what `chat.on` takes: `MessageSent`,
// `InboxUpdated`, ...), each with its payload type, generated from the server's contract (generated/contract.ts).
import type { EventBroadcasts, EventPayloads } from './generated/contract.js';

/** Every event a client can receive, by broadcast name, with its payload. */
export type ParleyEvents = { [N in keyof EventPayloads as EventBroadcasts[N]['broadcastAs']]: EventPayloads[N] };
export type ParleyEventName = keyof ParleyEvents;

/** Where a change came from. */
export interface EventMeta {
  /** 'live': over the socket; 'sync': caught up over GET /sync (it was missed live). */
  readonly source: 'live' | 'sync';
  /** The Pusher channel it arrived on (live), or null (sync). */
  readonly channel: string | null;
  /** The conversation it is about, or null (UserBlockChanged, UserPresenceChanged). */
  readonly conversationId: number | null;
  /** When the action ran (ISO 8601), for a change from GET /sync; null live. */
  readonly at: string | null;
}

export type EventHandler<N extends ParleyEventName> = (payload: ParleyEvents[N], meta: EventMeta) => void;

/** Not in the change feed (docs/api.md, Sync): what is going on now, never caught up, never deduplicated. */
export const EPHEMERAL_EVENTS: ReadonlySet<string> = new Set(['UserTyping', 'UserPresenceChanged']);

/** The conversation an event is about, from its payload (InboxUpdated carries the conversation itself). */
export function conversationOf(name: string, payload: unknown): number | null {
  const p = payload as { conversation_id?: unknown; id?: unknown };
  if (typeof p?.conversation_id === 'number') return p.conversation_id;
  return name === 'InboxUpdated' && typeof p?.id === 'number' ? p.id : null;
}

/** Handlers by event name; a throwing handler does not stop the others (its error is rethrown on its own). */
export class Emitter {
  private readonly handlers = new Map<string, Set<(payload: unknown, meta: EventMeta) => void>>();

  on(name: string, handler: (payload: unknown, meta: EventMeta) => void): () => void {
    let set = this.handlers.get(name);
    if (!set) this.handlers.set(name, (set = new Set()));
    set.add(handler);
    return () => void set.delete(handler);
  }

  emit(name: string, payload: unknown, meta: EventMeta): void {
    for (const handler of [...(this.handlers.get(name) ?? [])]) {
      try {
        handler(payload, meta);
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }
}
