// A node's four parts (broker, presence, occupancy, authorizations), all in memory for a node alone or all in
// Redis for several sharing one: the one place that chooses, so the node never asks which it has.
import type { Logger } from 'pino';
import type { RedisConnections } from '../redis/connections.js';
import { REMEMBER_TTL_MS, type AuthorizationLedger } from './authorizations/authorizations.js';
import { MemoryAuthorizationLedger } from './authorizations/memory.js';
import { redisAuthorizationLedger } from './authorizations/redis.js';
import type { Broker } from './broker/broker.js';
import { memoryBroker } from './broker/memory.js';
import { redisBroker } from './broker/redis.js';
import { memoryOccupancy } from './occupancy/memory.js';
import type { OccupancyTracker } from './occupancy/occupancy.js';
import { redisOccupancy } from './occupancy/redis.js';
import { memoryPresence } from './presence/memory.js';
import type { PresenceManager } from './presence/presence.js';
import { redisPresence } from './presence/redis.js';

export interface NodeParts {
  readonly broker: Broker;
  readonly presence: PresenceManager;
  readonly occupancy: OccupancyTracker;
  readonly authorizations: AuthorizationLedger;
}

/** A node alone: nothing to share. */
export function memoryParts(): NodeParts {
  return { broker: memoryBroker(), presence: memoryPresence(), occupancy: memoryOccupancy(), authorizations: new MemoryAuthorizationLedger(REMEMBER_TTL_MS) };
}

/**
 * One node of several sharing `redis`: events reach only the nodes subscribed to their channel; presence members
 * and each channel_occupied/channel_vacated are decided once per cluster. `node`: this process's id, the same
 * for every part (and every app) of it.
 */
export function redisParts(redis: RedisConnections, node: string, logger: Logger): NodeParts {
  return {
    broker: redisBroker(redis, node, logger.child({ component: 'fanout' })),
    presence: redisPresence(redis, node),
    occupancy: redisOccupancy(redis, node),
    authorizations: redisAuthorizationLedger(redis, REMEMBER_TTL_MS),
  };
}
