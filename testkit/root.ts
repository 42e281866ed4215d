// The repository's root folder, for processes started from it (`node --import tsx src/main.ts`) and files
// written under it.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
