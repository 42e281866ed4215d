// Typing indication: relayed at once; a start not renewed within the timeout is ended by the server itself.
import { event } from '../events/catalog.js';
import { requireParticipant } from './access.js';
import type { Actor, ChatContext } from './context.js';

export interface TypingTracker {
  signal(ctx: ChatContext, actor: Actor, conversationId: number, isTyping: boolean): Promise<void>;
  /** Cancel every pending expiry (shutdown). */
  stop(): void;
}

export function createTypingTracker(timeoutMs: number): TypingTracker {
  const expiries = new Map<string, NodeJS.Timeout>();

  function clear(key: string): void {
    const timer = expiries.get(key);
    if (timer) clearTimeout(timer);
    expiries.delete(key);
  }

  return {
    async signal(ctx, actor, conversationId, isTyping) {
      ctx.rateLimiter.consume('typing', actor.userId);
      await requireParticipant(ctx.db, conversationId, actor.userId);
      const key = `${conversationId}:${actor.userId}`;
      clear(key);
      const payload = { conversation_id: conversationId, user_id: actor.userId, is_typing: isTyping };
      if (isTyping) {
        const timer = setTimeout(() => {
          expiries.delete(key);
          void ctx.broadcaster.dispatch([event('UserTyping', conversationId, { ...payload, is_typing: false })]);
        }, timeoutMs);
        timer.unref();
        expiries.set(key, timer);
      }
      await ctx.broadcaster.dispatch([event('UserTyping', conversationId, payload)], actor.socketId);
    },
    stop() {
      for (const timer of expiries.values()) clearTimeout(timer);
      expiries.clear();
    },
  };
}
