// npm run docs:config: writes the README's configuration table from the settings table (src/config/settings.ts),
// between its two markers. `--check` only compares, exit code 1 when the README differs (test/config/settings.test.ts
// checks the same on every test run, so the README cannot drift from the code).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { settingsTable } from '../src/config/settings.js';

export const README = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'README.md');
export const BEGIN = '<!-- settings:begin (generated from src/config/settings.ts by npm run docs:config; edit the rows there) -->';
export const END = '<!-- settings:end -->';

/** The README's text with the table between the markers replaced by the generated one. */
export function withGeneratedTable(readme: string): string {
  const begin = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`README.md needs the markers ${BEGIN} and ${END}`);
  return `${readme.slice(0, begin + BEGIN.length)}\n${settingsTable()}\n${readme.slice(end)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const readme = readFileSync(README, 'utf8');
  const generated = withGeneratedTable(readme);
  if (process.argv.includes('--check')) {
    if (generated !== readme) {
      console.error('README.md: the configuration table differs from src/config/settings.ts. Run npm run docs:config.');
      process.exit(1);
    }
  } else if (generated !== readme) {
    writeFileSync(README, generated);
    console.log('README.md: configuration table written.');
  }
}
