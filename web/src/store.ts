// The signed-in user's shared state: conversations (the inbox: pinned first, then newest activity), who is online, blocks,
// and which conversation is open. Views read it and subscribe to its change events; they change it only
// through its methods (usually with an HTTP answer). It knows no view: the app shell and every view import it,
// it imports none of them.
import { describeError, type Api, type ApiError } from './api.js';
import { toast } from './dom.js';
import type { Realtime } from './realtime.js';
import type { Conversation, ConversationStateChangedEvent, GroupParticipantsChangedEvent, InboxPage, Message, Presence, Role, User } from './types.js';

const INBOX_PAGE = 30;

export type Change =
  /** One conversation was added or changed, or (null) went away: removed, left, deleted, not found. */
  | { kind: 'conversation'; id: number; conversation: Conversation | null; notice?: string }
  /** The inbox as a whole: a page of it arrived. */
  | { kind: 'inbox' }
  /** Someone went online or offline. */
  | { kind: 'presence' }
  /** Who I blocked, or who I cannot message, changed. */
  | { kind: 'blocks' }
  /** A group's members changed by this tab's own request (no event comes to it): as GroupParticipantsChanged. */
  | { kind: 'participants'; id: number; event: GroupParticipantsChangedEvent }
  /** A message I deleted for me alone (here, or MessageHidden from another tab). */
  | { kind: 'hidden'; id: number; messageId: number }
  /** Another conversation (or none) is to be shown; `messageId`: scrolled to that message; `thread`: with the
   * thread of this root open; `notice`: why the open one closed (it went away). */
  | { kind: 'open'; id: number | null; messageId?: number; thread?: Message; notice?: string };

export class ChatStore {
  private readonly byId = new Map<number, Conversation>();
  /** Latest activity per conversation (ms): the inbox order, newest first. */
  private readonly activity = new Map<number, number>();
  private inboxCursor: string | null = null;
  private inboxLoaded = false;
  private readonly online = new Map<number, boolean>();
  /** GET /presence's last_seen_at: the last heartbeat or offline signal. */
  private readonly seen = new Map<number, string | null>();
  private readonly blockedByMe = new Set<number>();
  /** Everyone I cannot message directly, blocked either way. */
  private messagingBlocked = new Set<number>();
  private openId: number | null = null;
  /** Conversations shown with their history loaded: their changes caught up go to their views too. */
  private readonly watching = new Set<number>();
  private readonly listeners = new Set<(change: Change) => void>();

  constructor(
    readonly api: Api,
    readonly realtime: Realtime,
    readonly me: User,
  ) {
    realtime.onCaughtUp((type, id, data) => this.caughtUp(type, id, data));
  }

  subscribe(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(change: Change): void {
    for (const listener of [...this.listeners]) listener(change);
  }

  // ---- reading ---------------------------------------------------------------------------------------------

  conversation(id: number): Conversation | undefined {
    return this.byId.get(id);
  }

  /**
   * The inbox: the pinned conversations first (most recently pinned first), then newest activity first; without
   * the archived ones (and those whose state is not known yet), nor a cleared one until a new message arrives.
   */
  inbox(): Conversation[] {
    return [...this.byId.values()]
      .filter((c) => c.archived_at === null && !(c.cleared_at && !c.last_message))
      .sort((a, b) => (b.pinned_at ?? '').localeCompare(a.pinned_at ?? '') || (this.activity.get(b.id) ?? 0) - (this.activity.get(a.id) ?? 0) || b.id - a.id);
  }

  /** Whether the first inbox page has arrived, and whether there are more pages. */
  inboxState(): { loaded: boolean; more: boolean } {
    return { loaded: this.inboxLoaded, more: this.inboxCursor !== null };
  }

  /** null while nothing is known about the user. */
  isOnline(userId: number): boolean | null {
    return this.online.get(userId) ?? null;
  }

  /** When the user was last online (an ISO time), null when unknown. */
  lastSeenAt(userId: number): string | null {
    return this.seen.get(userId) ?? null;
  }

  hasBlocked(userId: number): boolean {
    return this.blockedByMe.has(userId);
  }

  canMessage(userId: number): boolean {
    return !this.messagingBlocked.has(userId);
  }

  openConversationId(): number | null {
    return this.openId;
  }

  /** The other person of a direct conversation. */
  partner(conversation: Conversation): User | null {
    if (conversation.type !== 'direct') return null;
    return conversation.participants_preview.find((p) => p.id !== this.me.id) ?? null;
  }

  /** My role in a conversation: a member unless the preview (owner and admins first) says otherwise. */
  myRole(conversation: Conversation | undefined): Role {
    return conversation?.participants_preview.find((p) => p.id === this.me.id)?.role ?? 'member';
  }

  displayName(user: { id: number; name: string }): string {
    return user.name.trim() || `User ${user.id}`;
  }

  title(conversation: Conversation): string {
    if (conversation.type === 'group') return conversation.name ?? 'Group';
    const partner = this.partner(conversation);
    return partner ? this.displayName(partner) : 'Direct conversation';
  }

  /** A participant's name by id, from what the previews show. */
  nameOf(userId: number, conversation?: Conversation): string {
    if (userId === this.me.id) return this.me.name;
    const sources = conversation ? [conversation, ...this.byId.values()] : [...this.byId.values()];
    for (const c of sources) {
      const found = c.participants_preview.find((p) => p.id === userId);
      if (found) return this.displayName(found);
    }
    return `User ${userId}`;
  }

  // ---- navigation ------------------------------------------------------------------------------------------

  /** Shows a conversation (null: the inbox alone), optionally scrolled to one message, or with a thread open. */
  open(id: number | null, messageId?: number, thread?: Message): void {
    if (id === this.openId && messageId === undefined && !thread) return;
    this.openId = id;
    this.emit({ kind: 'open', id, messageId, thread });
  }

  // ---- conversations ---------------------------------------------------------------------------------------

  /**
   * The first inbox page (reset: again, after the change feed could not fill a gap), or the next one. The first
   * page is read through the client's typed call: the client catches up from its sync cursor.
   */
  async loadInbox(reset = false): Promise<void> {
    const cursor = !reset && this.inboxCursor ? this.inboxCursor : undefined;
    let page: InboxPage;
    try {
      page = await this.api.chat.conversations.list({ limit: INBOX_PAGE, cursor });
    } catch (err) {
      if ((err as ApiError).status !== 401) toast(describeError(err));
      return;
    }
    const first = !this.inboxLoaded;
    if (!reset || first) this.inboxCursor = page.meta.next_cursor;
    for (const conversation of page.data) this.upsertConversation(conversation, false);
    this.inboxLoaded = true;
    if (first) {
      if (this.me.name === `User ${this.me.id}`) {
        // The token had no name: take it from a conversation preview.
        const found = page.data.flatMap((c) => c.participants_preview).find((p) => p.id === this.me.id && p.name.trim());
        if (found) this.me.name = found.name;
      }
      void this.refreshPresence(this.inbox().map((c) => this.partner(c)?.id).filter((id): id is number => id !== undefined));
    }
    this.emit({ kind: 'inbox' });
  }

  /** A conversation from an event or an HTTP answer (`announce`: false while a page of the inbox is taken in). */
  upsertConversation(incoming: Conversation, announce = true): void {
    const previous = this.byId.get(incoming.id);
    // InboxUpdated carries only the v1 keys: keep the HTTP-only ones (mute, mention count, my own state) we know.
    const known = <K extends keyof Conversation>(key: K) => (incoming[key] !== undefined ? incoming[key] : previous?.[key]);
    const conversation: Conversation = {
      ...incoming,
      muted: incoming.muted ?? previous?.muted ?? false,
      muted_until: known('muted_until') ?? null,
      archived_at: known('archived_at'),
      pinned_at: known('pinned_at'),
      cleared_at: known('cleared_at'),
      slow_mode_s: known('slow_mode_s'),
      frozen: known('frozen'),
      unread_mention_count: incoming.unread_mention_count ?? (incoming.unread_count === 0 ? 0 : (previous?.unread_mention_count ?? 0)),
    };
    // A new unread message that names me (InboxUpdated has no mention count): ask for the conversation's count.
    const last = incoming.last_message;
    if (
      incoming.unread_mention_count === undefined &&
      previous &&
      incoming.unread_count > previous.unread_count &&
      last?.sender.id !== this.me.id &&
      last?.body?.includes(`@${this.displayName(this.me)}`)
    ) {
      void this.refreshConversation(incoming.id);
    }
    // InboxUpdated has no group settings: one that changes neither the last message nor the unread count tells of
    // a PATCH /groups/{id} (name, slow mode, frozen): ask for the settings.
    if (incoming.frozen === undefined && previous?.type === 'group' && last?.id === previous.last_message?.id && incoming.unread_count === previous.unread_count) {
      void this.refreshConversation(incoming.id);
    }
    // A live InboxUpdated carries the conversation's last message even when I cleared the history after it.
    const lastShown = conversation.last_message;
    if (conversation.cleared_at && lastShown && lastShown.created_at <= conversation.cleared_at) conversation.last_message = null;
    this.byId.set(conversation.id, conversation);
    // New here from an event (InboxUpdated has no archived_at): it shows once its own state is known.
    if (conversation.archived_at === undefined) void this.refreshConversation(conversation.id);
    const times = [conversation.created_at, conversation.last_message?.created_at].filter(Boolean).map((t) => Date.parse(t as string));
    // From the entry alone: a deleted newest message moves the conversation back (the server orders it so too).
    this.activity.set(conversation.id, Math.max(...times));
    if (!previous && this.inboxLoaded) {
      // A new direct partner: their online dot.
      const partner = this.partner(conversation);
      if (partner && !this.online.has(partner.id)) void this.refreshPresence([partner.id]);
    }
    if (announce) this.emit({ kind: 'conversation', id: conversation.id, conversation });
  }

  /** Changes one conversation locally (this tab gets no events for its own requests). */
  patchConversation(id: number, changes: Partial<Conversation>): void {
    const current = this.byId.get(id);
    if (current) this.upsertConversation({ ...current, ...changes });
  }

  /** Re-reads one conversation after a change whose events skipped this tab; gone (404) means removed. */
  async refreshConversation(id: number): Promise<void> {
    try {
      const { data } = await this.api.get<{ data: Conversation }>(`/conversations/${id}`);
      this.upsertConversation(data);
    } catch (err) {
      if ((err as ApiError).status === 404) this.removeConversation(id);
      else toast(describeError(err));
    }
  }

  /** The conversation went away; `notice` says why to whoever shows it. */
  removeConversation(id: number, notice?: string): void {
    this.byId.delete(id);
    this.activity.delete(id);
    this.realtime.leaveConversation(id);
    this.emit({ kind: 'conversation', id, conversation: null, notice });
    if (this.openId === id) {
      this.openId = null;
      this.emit({ kind: 'open', id: null, notice: notice ?? 'This conversation is no longer available.' });
    }
  }

  /** My own state of a conversation changed in another tab (ConversationStateChanged). */
  applyState({ conversation_id: id, ...state }: ConversationStateChangedEvent): void {
    if (this.byId.has(id)) this.patchConversation(id, state);
    else void this.refreshConversation(id); // unarchived elsewhere: not known here yet
  }

  /** A message I deleted for me alone: the views drop it; the inbox's last message is asked for (a live
   * InboxUpdated may still carry the hidden one). */
  hide(id: number, messageId: number): void {
    this.emit({ kind: 'hidden', id, messageId });
    void this.refreshConversation(id);
  }

  /** A change of a group's members this tab made: its views follow it as the other tabs follow the event. */
  ownParticipantsChange(event: GroupParticipantsChangedEvent): void {
    this.emit({ kind: 'participants', id: event.conversation_id, event });
  }

  /** A message this tab sent: the inbox entry moves up with it. */
  noteOwnMessage(message: Message): void {
    this.patchConversation(message.conversation_id, { last_message: message, updated_at: message.created_at });
  }

  // ---- catching up: GET /sync, through the client -----------------------------------------------------------

  /** A view shows this conversation with its history loaded (true) or no longer (false). */
  watch(id: number, watching: boolean): void {
    if (watching) this.watching.add(id);
    else this.watching.delete(id);
  }

  /**
   * What this tab missed (a hidden tab, a conversation it was not watching): the client's sync, whose changes
   * reach the same handlers as live events. After a reconnect the client syncs by itself.
   */
  async sync(): Promise<void> {
    await this.api.chat.sync();
  }

  /**
   * A conversation's change caught up: the store's own state first (members and the last message of a
   * conversation not shown), then the open view only once its history is loaded.
   */
  private caughtUp(type: string, id: number, data: unknown): boolean {
    if (type === 'GroupParticipantsChanged') {
      const e = data as GroupParticipantsChangedEvent;
      this.patchConversation(id, { participant_count: e.participant_count, participants_preview: e.participants_preview });
    }
    if (type === 'MessageUpdated' && this.byId.get(id)?.last_message?.id === (data as Message).id) {
      this.patchConversation(id, { last_message: data as Message });
    }
    return this.watching.has(id);
  }

  // ---- presence --------------------------------------------------------------------------------------------

  async refreshPresence(userIds: number[]): Promise<void> {
    const ids = [...new Set(userIds)];
    for (let i = 0; i < ids.length; i += 100) {
      try {
        const { data } = await this.api.get<{ data: Presence[] }>(`/presence?user_ids=${ids.slice(i, i + 100).join(',')}`);
        for (const p of data) {
          this.online.set(p.user_id, p.is_online);
          this.seen.set(p.user_id, p.last_seen_at);
        }
      } catch {
        /* someone no longer shares a conversation (403): their dot stays as it was */
      }
    }
    this.emit({ kind: 'presence' });
  }

  setOnline(userId: number, online: boolean): void {
    this.online.set(userId, online);
    // Gone now, or 70 s after the last heartbeat: the event does not say when, GET /presence does.
    if (!online) this.seen.set(userId, new Date().toISOString());
    this.emit({ kind: 'presence' });
    if (!online) void this.refreshPresence([userId]);
  }

  // ---- blocks ----------------------------------------------------------------------------------------------

  async loadBlocks(): Promise<void> {
    try {
      const result = await this.api.get<{ data: User[]; messaging_blocked_user_ids: number[] }>('/blocks');
      this.blockedByMe.clear();
      for (const user of result.data) this.blockedByMe.add(user.id);
      this.messagingBlocked = new Set(result.messaging_blocked_user_ids);
      this.emit({ kind: 'blocks' });
    } catch {
      /* shown where it matters: a send answers 403 blocked */
    }
  }

  /** After POST /blocks or DELETE /blocks/{id} (from this tab, or a UserBlockChanged from another). */
  applyBlocks(messagingBlocked: number[], change?: { userId: number; blocked: boolean }): void {
    this.messagingBlocked = new Set(messagingBlocked);
    if (change?.blocked) this.blockedByMe.add(change.userId);
    else if (change) this.blockedByMe.delete(change.userId);
    this.emit({ kind: 'blocks' });
  }
}
