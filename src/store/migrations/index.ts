// Forward-only migrations, in order. Add a file, then list it here.
import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './001_initial.js';
import * as sendMessages from './002_send_messages.js';
import * as chatFeatures from './003_chat_features.js';
import * as search from './004_search.js';
import * as outbox from './005_outbox.js';
import * as pushSubscriptions from './006_push_subscriptions.js';
import * as attachmentsAtScale from './007_attachments_at_scale.js';
import * as sendLocksAttachments from './009_send_locks_attachments.js';
import * as sendWithOutbox from './010_send_with_outbox.js';
import * as sendWithOutboxInOneQuery from './011_send_with_outbox_in_one_query.js';
import * as changeFeed from './012_change_feed.js';
import * as threadsPinsOwnState from './013_threads_pins_own_state.js';
import * as moderation from './014_moderation.js';
import * as compliance from './015_compliance.js';
import * as reactionsByUser from './016_reactions_by_user.js';
import * as participantsPreviewOrder from './017_participants_preview_order.js';
import * as participantsRoomToUpdate from './018_participants_room_to_update.js';

const migrations: Record<string, Migration> = {
  '001_initial': initial,
  '002_send_messages': sendMessages,
  '003_chat_features': chatFeatures,
  '004_search': search,
  '005_outbox': outbox,
  '006_push_subscriptions': pushSubscriptions,
  '007_attachments_at_scale': attachmentsAtScale,
  '009_send_locks_attachments': sendLocksAttachments,
  '010_send_with_outbox': sendWithOutbox,
  '011_send_with_outbox_in_one_query': sendWithOutboxInOneQuery,
  '012_change_feed': changeFeed,
  '013_threads_pins_own_state': threadsPinsOwnState,
  '014_moderation': moderation,
  '015_compliance': compliance,
  '016_reactions_by_user': reactionsByUser,
  '017_participants_preview_order': participantsPreviewOrder,
  '018_participants_room_to_update': participantsRoomToUpdate,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
