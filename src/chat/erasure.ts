// A user's erasure (DELETE /users/{id}?messages=erase|keep, server key; docs/deployment.md "Erasure").
//
// The request marks the user erased at once (name "Deleted user", avatar none, erased_at: their tokens are refused
// and their sends too), starts a job and closes their sockets on every node; the rest runs in the background,
// phase by phase, in bounded batches (ERASURE_BATCH messages per transaction, each a unit of work holding the job's
// row and then the conversations it writes to), each followed by a pause of ERASURE_PAUSE_FACTOR times its own
// length, so other users' sends keep their latency and rate:
//
//   groups     leaves every group as a member leaving does (ownership handed over, events, feed) (groups.ts)
//   personal   blocks, push subscriptions, mutes, read receipts, own state, thread reads, report notes
//   reactions  their reactions deleted (MessageReactionsUpdated per message)
//   messages   erase only: every message they sent deleted for everyone and blanked (body, attachment, pin;
//              MessageDeleted per message, threads recounted, unread counts and last messages moved)
//   forwards   erase only: the same for forwards of their messages by others (they carry the user's text)
//   uploads    erase only: every file they uploaded, row and file (local disk or S3)
//   feed       the change feed's stored payloads rewritten: their name becomes "Deleted user"; with erase, any
//              text of theirs (a message, a forward of one, a reply's preview of one) becomes null
//   outbox     the same for webhook payloads still queued or kept as failed
//   done       completed; the UserErased webhook is written
//
// The job's row records the phase and the last id handled, so a crash or restart resumes where it stopped
// (each batch commits with its progress); any node picks pending jobs up, one at a time per job (the row is
// taken FOR UPDATE SKIP LOCKED). A repeated request does nothing more (from keep to erase, the job starts again
// with erase).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { event, type DomainEvent } from '../events/catalog.js';
import type { AttachmentStorage } from '../store/attachment-storage.js';
import { recordAudit } from '../store/audit.js';
import {
  ERASED_NAME,
  advanceJob,
  claimJob,
  deletePersonalData,
  deleteReactions,
  deleteUploads,
  eraseMessages,
  feedRowsNaming,
  groupsOf,
  markErased,
  messagesToErase,
  outboxRowsNaming,
  pendingErasures,
  reactedMessages,
  rewriteFeedRow,
  rewriteOutboxRow,
  type ErasureJob,
  type ErasureMode,
} from '../store/erasure.js';
import { lockConversations } from '../store/locks.js';
import { reactionSummaries } from '../store/reactions.js';
import { recountThread } from '../store/threads.js';
import { SERVER, type ChatContext } from './context.js';
import { notFound } from '../contract/api-errors.js';
import { drainFileDeletions } from './file-deletions.js';
import { announceInboxes } from './inboxes-changed.js';
import { leaveGroup } from './groups.js';
import { threadUpdated } from './threads.js';
import { unitOfWork, type Work } from './unit-of-work.js';

/** Messages (or reactions, uploads) per transaction. */
export const ERASURE_BATCH = 500;
/** After each batch an erasure pauses this many times the batch's own time (busy at most a fifth of the time). */
export const ERASURE_PAUSE_FACTOR = 4;
/** Stored payloads (change feed rows, outbox rows) looked at per transaction. */
const SCRUB_BATCH = 1000;

export const ERASURE_PHASES = ['groups', 'personal', 'reactions', 'messages', 'forwards', 'uploads', 'feed', 'outbox', 'done'] as const;
type Phase = (typeof ERASURE_PHASES)[number];
/** Phases that only `erase` runs. */
const ERASE_ONLY: ReadonlySet<Phase> = new Set(['messages', 'forwards', 'uploads']);

function nextPhase(phase: Phase, mode: ErasureMode): Phase {
  let i = ERASURE_PHASES.indexOf(phase) + 1;
  while (mode === 'keep' && ERASE_ONLY.has(ERASURE_PHASES[i]!)) i++;
  return ERASURE_PHASES[i]!;
}

/**
 * DELETE /users/{id}: marks the user erased and starts the job, in one unit of work with its audit entry (actor
 * null: the server key); their sockets close on every node after the commit. 404 when the user was never seen.
 */
export async function requestErasure(ctx: ChatContext, userId: number, mode: ErasureMode): Promise<void> {
  await unitOfWork(ctx, SERVER, async ({ trx, disconnect }) => {
    const marked = await markErased(trx, userId, mode, new Date());
    if (!marked) throw notFound('User');
    if (marked.started) await recordAudit(trx, { actor_id: null, action: 'user_erased', target_user_id: userId, details: { messages: mode } });
    disconnect(userId);
  });
}

/**
 * A stored payload with the erased user's traces removed: every user object of theirs named "Deleted user"
 * without an avatar; with `eraseText`, every message of theirs (or forward of one, or reply preview of one) with
 * no body and no attachment (a preview marked deleted). Returns undefined when nothing changed.
 */
export function scrubbed(value: unknown, userId: number, eraseText: boolean): unknown {
  let changed = false;
  const isUser = (v: unknown): boolean => typeof v === 'object' && v !== null && (v as { id?: unknown }).id === userId;
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v !== 'object' || v === null) return v;
    const o: Record<string, unknown> = Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    // A user (UserResource, a participant): not a conversation, which has a type and may share the id.
    if (o.id === userId && 'name' in o && 'avatar_url' in o && !('type' in o) && (o.name !== ERASED_NAME || o.avatar_url !== null)) {
      o.name = ERASED_NAME;
      o.avatar_url = null;
      changed = true;
    }
    const forwardedFromThem = isUser((o.forwarded_from as { sender?: unknown } | null | undefined)?.sender);
    if (eraseText && 'body' in o && 'sender' in o && (isUser(o.sender) || forwardedFromThem)) {
      // A message (or a reply's preview of one): no text, no file; a preview says the original is deleted.
      const blank: Record<string, unknown> = { body: null };
      if ('attachment' in o) blank.attachment = null;
      if ('deleted' in o) blank.deleted = true;
      for (const [key, value] of Object.entries(blank)) {
        if (o[key] === value) continue;
        o[key] = value;
        changed = true;
      }
    }
    return o;
  };
  const result = walk(value);
  return changed ? result : undefined;
}

/** One batch of the job's current phase, in the caller's unit of work: `more` false once the job is done; `leave`: a group to leave next. */
async function step(work: Work, job: ErasureJob): Promise<{ leave?: number; more: boolean }> {
  const { trx } = work;
  const userId = job.user_id;
  const phase = job.phase as Phase;
  const next = (to: { after_id?: number; after_seq?: number; erased?: number } = {}) => advanceJob(trx, userId, { phase, ...to });
  const done = () => advanceJob(trx, userId, { phase: nextPhase(phase, job.messages) });
  const now = new Date();
  switch (phase) {
    case 'groups': {
      // Left one at a time by the leave rule itself (its own unit of work, after this one).
      const [groupId] = await groupsOf(trx, userId);
      if (groupId === undefined) await done();
      return { leave: groupId, more: true };
    }
    case 'personal':
      await deletePersonalData(trx, userId);
      await done();
      return { more: true };
    case 'reactions': {
      const messages = await reactedMessages(trx, userId, job.after_id, ERASURE_BATCH);
      if (messages.length === 0) return done().then(() => ({ more: true }));
      await lockConversations(trx, messages.map((m) => m.conversation_id));
      const ids = messages.map((m) => m.id);
      await deleteReactions(trx, userId, ids);
      const summaries = await reactionSummaries(trx, ids);
      for (const m of messages) {
        work.emit(event('MessageReactionsUpdated', m.conversation_id, { conversation_id: m.conversation_id, message_id: m.id, reactions: summaries.get(m.id) ?? [] }));
      }
      await next({ after_id: ids.at(-1)! });
      return { more: true };
    }
    case 'messages':
    case 'forwards': {
      const column = phase === 'messages' ? 'sender_id' : 'forwarded_from_sender_id';
      const found = await messagesToErase(trx, column, userId, job.after_id, ERASURE_BATCH);
      if (found.length === 0) return done().then(() => ({ more: true }));
      await lockConversations(trx, found.map((m) => m.conversation_id));
      // Read again under the locks: what is visible now is what leaves history now.
      const messages = await messagesToErase(trx, column, userId, job.after_id, ERASURE_BATCH);
      announceInboxes(work, await eraseMessages(trx, messages, now));
      const events: DomainEvent[] = [];
      const threads = new Set<number>();
      for (const m of messages.filter((m) => m.visible)) {
        events.push(event('MessageDeleted', m.conversation_id, { id: m.id, conversation_id: m.conversation_id }));
        if (m.pinned) events.push(event('MessagePinned', m.conversation_id, { conversation_id: m.conversation_id, message_id: m.id, pinned: false, pinned_at: null, pinned_by: null }));
        if (m.thread_id !== null) threads.add(m.thread_id);
      }
      for (const rootId of threads) {
        const thread = await recountThread(trx, rootId);
        if (thread) events.push(threadUpdated(thread));
      }
      work.emit(...events);
      await next({ after_id: messages.at(-1)?.id ?? job.after_id, erased: messages.length });
      return { more: true };
    }
    case 'uploads': {
      const last = await deleteUploads(trx, userId, job.after_id, ERASURE_BATCH);
      await (last === null ? done() : next({ after_id: last }));
      return { more: true };
    }
    case 'feed': {
      const rows = await feedRowsNaming(trx, userId, { tx: job.after_id, seq: job.after_seq }, SCRUB_BATCH);
      if (rows.length === 0) return done().then(() => ({ more: true }));
      for (const row of rows) {
        const data = row.data === null ? undefined : scrubbed(JSON.parse(row.data), userId, job.messages === 'erase');
        if (data !== undefined) await rewriteFeedRow(trx, row, JSON.stringify(data));
      }
      await next({ after_id: rows.at(-1)!.tx, after_seq: rows.at(-1)!.seq });
      return { more: true };
    }
    case 'outbox': {
      const rows = await outboxRowsNaming(trx, userId, job.after_id, SCRUB_BATCH);
      if (rows.length === 0) return done().then(() => ({ more: true }));
      for (const row of rows) {
        const payload = row.payload === null ? undefined : scrubbed(row.payload, userId, job.messages === 'erase');
        if (payload !== undefined) await rewriteOutboxRow(trx, row.id, payload);
      }
      await next({ after_id: rows.at(-1)!.id });
      return { more: true };
    }
    case 'done':
      await advanceJob(trx, userId, { phase, completed_at: now });
      work.webhook('UserErased', { user_id: userId, messages: job.messages });
      return { more: false };
  }
}

/**
 * Runs a user's erasure from where its job stands to its end; false when another node holds it now, or when
 * `stopping` says so (the node is shutting down: the job stays where its last batch left it).
 */
export async function runErasure(
  ctx: ChatContext,
  storage: AttachmentStorage,
  userId: number,
  options: { logger?: Logger; stopping?: () => boolean; /** Pause after each batch, in multiples of its time (default ERASURE_PAUSE_FACTOR). */ pauseFactor?: number } = {},
): Promise<boolean> {
  const { logger, stopping } = options;
  for (;;) {
    if (stopping?.()) return false;
    const started = performance.now();
    const outcome = await unitOfWork(ctx, SERVER, async (work) => {
      const job = await claimJob(work.trx, userId);
      return job ? { ...(await step(work, job)), phase: job.phase } : null;
    });
    if (outcome === null) return false;
    if (outcome.leave !== undefined) {
      await leaveGroup(ctx, { userId }, outcome.leave).catch((err: unknown) => {
        // Left already (another node's pass, or the group was deleted meanwhile): the next step looks again.
        if ((err as { code?: string }).code !== 'not_found') throw err;
      });
    }
    if (outcome.phase === 'uploads') await drainFileDeletions(ctx.db, storage, logger);
    if (!outcome.more) {
      await drainFileDeletions(ctx.db, storage, logger);
      logger?.info({ user_id: userId }, 'erasure: user erased');
      return true;
    }
    // Paced: a pause of ERASURE_PAUSE_FACTOR times the batch's own time, so an erasure takes at most a share of the
    // node and the database (1 / (1 + factor)) and other users' sends keep their rate while it runs.
    await sleep((performance.now() - started) * (options.pauseFactor ?? ERASURE_PAUSE_FACTOR));
  }
}

export interface ErasureWorker {
  /** Runs every pending erasure to its end (those another node holds are left to it). */
  runPending(): Promise<void>;
  /** Looks for pending erasures at once, then every intervalMs, until stop(). */
  start(intervalMs?: number): void;
  stop(): Promise<void>;
}

export function createErasureWorker(options: { ctx: ChatContext; storage: AttachmentStorage; logger?: Logger }): ErasureWorker {
  const { ctx, storage, logger } = options;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let stopping = false;

  async function runPending(): Promise<void> {
    for (const userId of await pendingErasures(ctx.db, 10)) await runErasure(ctx, storage, userId, { logger, stopping: () => stopping });
  }
  const tick = () => {
    running ??= runPending()
      .catch((err: unknown) => logger?.warn({ err }, 'erasure failed; the next pass resumes it'))
      .finally(() => (running = null));
  };
  return {
    runPending,
    start(intervalMs = 1000) {
      if (timer) return;
      tick();
      timer = setInterval(tick, intervalMs).unref();
    },
    async stop() {
      stopping = true;
      if (timer) clearInterval(timer);
      timer = null;
      await running;
      stopping = false;
    },
  };
}
