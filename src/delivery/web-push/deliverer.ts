// Web Push through the transactional outbox (src/store/outbox.ts, src/delivery/): a send writes one row
// of kind 'push' per MessageSent (and per ThreadReplySent: a reply in a thread) in its own transaction (src/delivery/index.ts, rowsFor), holding only
// the message's ids; the outbox worker hands each claimed row to this deliverer (registered in src/app/delivery.ts). A
// throw leaves the row to the worker's retry with backoff; 404/410 and refused endpoints are settled inside
// (the subscription deleted). Who gets a push is decided when it is delivered (message-push.ts).
import type { MessagePushJob } from './message-push.js';
import type { WebPush } from './index.js';

export const PUSH_OUTBOX_KIND = 'push';

/** The deliverer of 'push' rows: resolves when done (delivered, or nothing to deliver), throws for a retry. */
export function pushDeliverer(push: WebPush) {
  return async (row: { readonly type: string; readonly payload: unknown }): Promise<void> => {
    if (row.type !== 'MessageSent' && row.type !== 'ThreadReplySent') return; // no other event is pushed
    const payload = (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as MessagePushJob;
    const job = { conversation_id: Number(payload.conversation_id), message_id: Number(payload.message_id), sender_id: Number(payload.sender_id) };
    await push.deliverMessage(payload.thread_id === undefined ? job : { ...job, thread_id: Number(payload.thread_id) });
  };
}
