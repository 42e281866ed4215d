// The periodic jobs of this node, started once it listens and stopped before the stores close: the attachment
// sweeper, the change feed's pruner, message retention and users' erasures (the online-status sweep is the chat's).
import { join } from 'node:path';
import type { Logger } from 'pino';
import { createAttachmentSweeper, type AttachmentSweeper } from '../chat/attachment-sweeper.js';
import type { ChatContext } from '../chat/context.js';
import { createErasureWorker, type ErasureWorker } from '../chat/erasure.js';
import { createFeedPruner } from '../chat/feed-pruner.js';
import { createRetentionSweeper, type RetentionSweeper } from '../chat/retention.js';
import type { Config } from '../config/index.js';
import type { Metrics } from '../ops/metrics.js';
import { localDiskStorage, s3Storage, type AttachmentStorage } from '../store/attachment-storage.js';

export interface Jobs {
  readonly attachmentSweeper: AttachmentSweeper;
  readonly retention: RetentionSweeper | null;
  readonly erasure: ErasureWorker;
  start(): void;
  stop(): Promise<void>;
}

/** CHAT_STORAGE: local disk under CHAT_DATA_DIR/attachments, or the S3-compatible bucket. */
export function createAttachmentStorage(config: Config): AttachmentStorage {
  return config.storage.driver === 's3' ? s3Storage(config.storage.s3) : localDiskStorage(join(config.dataDir, 'attachments'));
}

export function createJobs(config: Config, chat: ChatContext, storage: AttachmentStorage, metrics: Metrics, logger: Logger): Jobs {
  const db = chat.db;
  const attachmentSweeper = createAttachmentSweeper({ db, storage, unsentTtlSeconds: config.storage.unsentUploadTtlSeconds, logger, registry: metrics.registry });
  const feedPruner = createFeedPruner({ db, retentionSeconds: config.limits.syncRetentionSeconds, logger });
  const retentionDays = config.limits.messageRetentionDays;
  const retention = retentionDays === null ? null : createRetentionSweeper({ ctx: chat, storage, retentionDays, logger });
  const erasure = createErasureWorker({ ctx: chat, storage, logger });
  return {
    attachmentSweeper,
    retention,
    erasure,
    start() {
      attachmentSweeper.start();
      feedPruner.start();
      retention?.start();
      erasure.start();
    },
    async stop() {
      await attachmentSweeper.stop();
      await feedPruner.stop();
      await retention?.stop();
      await erasure.stop();
    },
  };
}
