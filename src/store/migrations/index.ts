// Forward-only migrations, in order. Add a file, then list it here.
import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './001_initial.js';

const migrations: Record<string, Migration> = {
  '001_initial': initial,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
