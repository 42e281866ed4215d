// npm run token -- <userId> [--name Alice] [--avatar-url URL] [--ttl 86400]: prints a user token signed with
// the configured (or the embedded default's generated) CHAT_JWT_SECRET.
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { loadDevSecrets } from '../config/dev-secrets.js';
import { createTokenIssuer, parseUserId } from '../http/auth.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { name: { type: 'string' }, 'avatar-url': { type: 'string' }, ttl: { type: 'string', default: '86400' } },
});
const userId = parseUserId(positionals[0]);
const ttlSeconds = Number(values.ttl);
if (userId === null || !Number.isInteger(ttlSeconds) || ttlSeconds <= 0) {
  console.error('Usage: npm run token -- <userId> [--name Alice] [--avatar-url URL] [--ttl seconds]');
  process.exit(2);
}
const { token } = await createTokenIssuer(loadConfig(process.env, loadDevSecrets(process.env)?.secrets).jwtSecret).issue(userId, {
  name: values.name,
  avatarUrl: values['avatar-url'],
  ttlSeconds,
});
console.log(token);
