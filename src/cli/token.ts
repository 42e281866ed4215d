// npm run token -- <userId> [--name Alice] [--avatar-url URL] [--ttl 86400]: prints a user token signed with
// the configured (or the embedded default's generated) CHAT_JWT_SECRET, with CHAT_JWT_ISSUER / CHAT_JWT_AUDIENCE
// when set, and a lifetime of at most CHAT_JWT_MAX_TTL_S. A wrong invocation or setting: one line, exit code 2.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config/index.js';
import { loadDevSecrets } from '../config/dev-secrets.js';
import { ChatError } from '../contract/api-errors.js';
import { createTokenIssuer, DEFAULT_TOKEN_TTL_SECONDS, parseUserId } from '../http/auth.js';

const USAGE = 'Usage: npm run token -- <userId> [--name Alice] [--avatar-url URL] [--ttl seconds]';

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

let args;
try {
  args = parseArgs({
    allowPositionals: true,
    options: { name: { type: 'string' }, 'avatar-url': { type: 'string' }, ttl: { type: 'string' } },
  });
} catch (err) {
  // node:util's message ("Unknown option '--nme'. To specify a positional argument ...") is longer than the mistake.
  const option = /option '([^']+)'/.exec((err as Error).message)?.[1];
  fail(`${option ? `Unknown option ${option}` : (err as Error).message.split('. ')[0]}. ${USAGE}`);
}
const { values, positionals } = args;
const userId = parseUserId(positionals[0]);
if (userId === null || positionals.length > 1) fail(`The user id must be one positive integer. ${USAGE}`);

let config: Config;
try {
  config = loadConfig(process.env, loadDevSecrets(process.env)?.secrets);
} catch (err) {
  if (err instanceof ConfigError) fail(`Configuration error: ${err.message}`);
  throw err;
}
const ttlSeconds = values.ttl === undefined ? Math.min(DEFAULT_TOKEN_TTL_SECONDS, config.jwt.maxTtlSeconds) : Number(values.ttl);
if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) fail(`--ttl must be a positive number of seconds. ${USAGE}`);
try {
  const { token } = await createTokenIssuer(config.jwtSecret, config.jwt).issue(userId, {
    name: values.name,
    avatarUrl: values['avatar-url'],
    ttlSeconds,
  });
  console.log(token);
} catch (err) {
  if (err instanceof ChatError) fail(`--ttl must be at most ${config.jwt.maxTtlSeconds} seconds (CHAT_JWT_MAX_TTL_S).`);
  throw err;
}
