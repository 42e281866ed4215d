// VAPID keys: CHAT_VAPID_PUBLIC_KEY / CHAT_VAPID_PRIVATE_KEY when set, else a pair generated once into
// CHAT_DATA_DIR/vapid.json (mode 0600) and read from there on later starts, so browsers' subscriptions
// (made against the public key) stay valid across restarts.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import webpush from 'web-push';
import type { Config } from '../../config/index.js';
import { ConfigError } from '../../config/settings.js';

export interface VapidKeys {
  readonly publicKey: string;
  readonly privateKey: string;
  readonly subject: string;
}

export function vapidKeysFile(dataDir: string): string {
  return join(dataDir, 'vapid.json');
}

export function loadVapidKeys(config: Pick<Config, 'dataDir' | 'push'>): VapidKeys {
  const { vapidPublicKey, vapidPrivateKey, vapidSubject } = config.push;
  let keys: { publicKey: string; privateKey: string };
  if (vapidPublicKey !== null && vapidPrivateKey !== null) {
    keys = { publicKey: vapidPublicKey, privateKey: vapidPrivateKey };
  } else {
    const file = vapidKeysFile(config.dataDir);
    if (existsSync(file)) {
      try {
        keys = JSON.parse(readFileSync(file, 'utf8')) as { publicKey: string; privateKey: string };
      } catch (err) {
        throw new ConfigError(`${file} is not valid JSON (${(err as Error).message}). Fix: delete it to generate a new VAPID key pair (browsers then subscribe again), or set CHAT_VAPID_PUBLIC_KEY and CHAT_VAPID_PRIVATE_KEY.`);
      }
    } else {
      keys = webpush.generateVAPIDKeys();
      mkdirSync(config.dataDir, { recursive: true });
      writeFileSync(file, JSON.stringify(keys, null, 2) + '\n', { mode: 0o600 });
    }
  }
  try {
    // Checks the keys' lengths and the subject's form (mailto: or https:).
    webpush.getVapidHeaders('https://push.example', vapidSubject, keys.publicKey, keys.privateKey, 'aes128gcm');
  } catch (err) {
    throw new ConfigError(`The VAPID settings are not valid: ${(err as Error).message} Fix: set CHAT_VAPID_PUBLIC_KEY and CHAT_VAPID_PRIVATE_KEY to a pair from npx web-push generate-vapid-keys, and CHAT_VAPID_SUBJECT to a mailto: or https: URL.`);
  }
  return { ...keys, subject: vapidSubject };
}
