// Forward-only migrations, in order. Add a file, then list it here.
import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './001_initial.js';
import * as sendMessages from './002_send_messages.js';

const migrations: Record<string, Migration> = {
  '001_initial': initial,
  '002_send_messages': sendMessages,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
