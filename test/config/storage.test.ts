// CHAT_STORAGE and S3_*: the attachment store's configuration, and the errors that name what to fix.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { SECRETS } from '../../testkit/secrets.js';

test('by default: local disk, a 1 GiB quota and a day for unsent uploads', () => {
  const config = loadConfig({ ...SECRETS });
  assert.deepEqual(config.storage, { driver: 'local', unsentUploadTtlSeconds: 86_400 });
  assert.equal(config.limits.uploadQuotaBytes, 1024 ** 3);
});

test('CHAT_STORAGE=s3 with its settings', () => {
  const config = loadConfig({
    ...SECRETS, CHAT_STORAGE: 's3', S3_BUCKET: 'files', S3_ENDPOINT: 'http://127.0.0.1:9000', S3_FORCE_PATH_STYLE: 'on',
    S3_ACCESS_KEY_ID: 'id', S3_SECRET_ACCESS_KEY: 'secret', CHAT_UPLOAD_QUOTA_BYTES: '1000', CHAT_UNSENT_UPLOAD_TTL_S: '60',
  });
  assert.deepEqual(config.storage, {
    driver: 's3',
    unsentUploadTtlSeconds: 60,
    s3: { bucket: 'files', endpoint: 'http://127.0.0.1:9000', region: 'us-east-1', credentials: { accessKeyId: 'id', secretAccessKey: 'secret' }, forcePathStyle: true },
  });
  assert.equal(config.limits.uploadQuotaBytes, 1000);
  const chain = loadConfig({ ...SECRETS, CHAT_STORAGE: 's3', S3_BUCKET: 'files' });
  assert.equal(chain.storage.driver === 's3' && chain.storage.s3.credentials, null, "no keys: the SDK's own chain");
});

test('errors name the setting and the fix', () => {
  assert.throws(() => loadConfig({ ...SECRETS, CHAT_STORAGE: 's3' }), (err: Error) => err instanceof ConfigError && /needs S3_BUCKET/.test(err.message));
  assert.throws(
    () => loadConfig({ ...SECRETS, CHAT_STORAGE: 's3', S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'id' }),
    (err: Error) => err instanceof ConfigError && /go together/.test(err.message) && !err.message.includes('id'.repeat(3)),
  );
  assert.throws(() => loadConfig({ ...SECRETS, CHAT_STORAGE: 'gcs' }), (err: Error) => err instanceof ConfigError && /CHAT_STORAGE/.test(err.message));
  assert.throws(() => loadConfig({ ...SECRETS, CHAT_STORAGE: 's3', S3_BUCKET: 'b', S3_ENDPOINT: 'minio:9000' }), (err: Error) => err instanceof ConfigError && /S3_ENDPOINT/.test(err.message));
  assert.throws(() => loadConfig({ ...SECRETS, CHAT_UPLOAD_QUOTA_BYTES: '0' }), (err: Error) => err instanceof ConfigError && /CHAT_UPLOAD_QUOTA_BYTES/.test(err.message));
});
