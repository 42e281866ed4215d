// A real S3-compatible server for tests: s3rver (the S3 REST API over a local directory), in this process, on a
// free port, with one bucket. Its credentials are s3rver's fixed pair; signatures are checked.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';

interface S3rverInstance {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;

const S3rver = createRequire(import.meta.url)('s3rver') as S3rverClass;

export class S3TestServer {
  static readonly ACCESS_KEY_ID = 'S3RVER';
  static readonly SECRET_ACCESS_KEY = 'S3RVER';

  /** A client of this server, to look into the bucket as a test. */
  private readonly client: S3Client;

  private constructor(private readonly server: S3rverInstance, private readonly directory: string, readonly endpoint: string, readonly bucket: string) {
    this.client = new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: S3TestServer.ACCESS_KEY_ID, secretAccessKey: S3TestServer.SECRET_ACCESS_KEY },
    });
  }

  /** The objects in the bucket (up to 1,000): their keys and sizes. */
  async objects(): Promise<{ key: string; size: number }[]> {
    const out = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket }));
    return (out.Contents ?? []).map((o) => ({ key: o.Key!, size: o.Size! }));
  }

  static async start(bucket = 'parley-test'): Promise<S3TestServer> {
    const directory = mkdtempSync(join(tmpdir(), 'parley-s3rver-'));
    const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
    const { port } = await server.run();
    return new S3TestServer(server, directory, `http://127.0.0.1:${port}`, bucket);
  }

  /** The environment of a Parley node storing its attachments in this server's bucket. */
  env(): Record<string, string> {
    return {
      CHAT_STORAGE: 's3',
      S3_BUCKET: this.bucket,
      S3_ENDPOINT: this.endpoint,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: S3TestServer.ACCESS_KEY_ID,
      S3_SECRET_ACCESS_KEY: S3TestServer.SECRET_ACCESS_KEY,
      S3_FORCE_PATH_STYLE: 'on',
    };
  }

  async close(): Promise<void> {
    this.client.destroy();
    await this.server.close().catch(() => undefined);
    rmSync(this.directory, { recursive: true, force: true });
  }
}
