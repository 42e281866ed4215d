// Prometheus metrics, in a registry of the app's own (several apps may share one process in tests).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface MetricsSources {
  realtime(): { connections: number; channels: number; subscriptions: number } | null;
  databasePool(): { total: number; idle: number; waiting: number } | null;
  redisUp(): boolean | null;
  /** With Redis: channel messages (events, relayed frames) this node received from the others since it started. */
  clusterReceived(): number | null;
  /** DATABASE_REPLICA_URLS: the lag-tolerant reads since the start, by where they went; null without replicas. */
  readReplicas?(): { replicaReads: number; primaryReads: Readonly<Record<string, number>>; usable: number } | null;
  /** With Redis: of those, the ones this node wrote to at least one of its sockets (over clusterReceived: the cross-node efficiency). */
  clusterDelivered?(): number | null;
}

export interface Metrics {
  readonly registry: Registry;
  eventDispatched(name: string): void;
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  /** BROADCAST_DRIVER=pusher: what the external server did not take (src/realtime/external-pusher.ts). */
  readonly pusher: {
    eventFailed(event: string, reason: string): void;
    retried(): void;
    terminationFailed(): void;
  };
}

export function createMetrics(sources: MetricsSources): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'parley_process_' });

  const gauge = (name: string, help: string, read: () => number | null | undefined) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const value = read();
        if (value !== null && value !== undefined) this.set(value);
      },
    });
  gauge('parley_socket_connections', 'Open Pusher-protocol sockets on this node', () => sources.realtime()?.connections);
  gauge('parley_socket_channels', 'Channels with at least one subscriber on this node', () => sources.realtime()?.channels);
  gauge('parley_socket_subscriptions', 'Channel subscriptions on this node', () => sources.realtime()?.subscriptions);
  new Counter({
    name: 'parley_cluster_channel_messages_received_total',
    help: 'Events and relayed frames this node received from other nodes, for channels it has subscribers of (absent without REDIS_URL)',
    registers: [registry],
    collect() {
      const received = sources.clusterReceived();
      if (received === null) return;
      this.reset();
      this.inc(received);
    },
  });
  new Counter({
    name: 'parley_cluster_channel_messages_delivered_total',
    help: 'Of the channel messages received from other nodes, those written to at least one socket of this node (absent without REDIS_URL)',
    registers: [registry],
    collect() {
      const delivered = sources.clusterDelivered?.() ?? null;
      if (delivered === null) return;
      this.reset();
      this.inc(delivered);
    },
  });
  new Counter({
    name: 'parley_db_replica_reads_total',
    help: 'Lag-tolerant reads (history, threads, pins, search, exports) a read replica answered (absent without DATABASE_REPLICA_URLS)',
    registers: [registry],
    collect() {
      const stats = sources.readReplicas?.() ?? null;
      if (stats === null) return;
      this.reset();
      this.inc(stats.replicaReads);
    },
  });
  new Counter({
    name: 'parley_db_replica_fallbacks_total',
    help: 'Lag-tolerant reads the primary answered instead, by reason: own_write (the user wrote within the max lag), no_replica (none within the max lag), replica_failed (the read failed on the replica)',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      const stats = sources.readReplicas?.() ?? null;
      if (stats === null) return;
      this.reset();
      for (const [reason, count] of Object.entries(stats.primaryReads)) this.inc({ reason }, count);
    },
  });
  gauge('parley_db_replicas_usable', 'Read replicas within DATABASE_REPLICA_MAX_LAG_MS now (absent without DATABASE_REPLICA_URLS)', () => sources.readReplicas?.()?.usable);
  gauge('parley_db_pool_connections', 'PostgreSQL pool connections', () => sources.databasePool()?.total);
  gauge('parley_db_pool_idle', 'Idle PostgreSQL pool connections', () => sources.databasePool()?.idle);
  gauge('parley_db_pool_waiting', 'Queries waiting for a PostgreSQL connection', () => sources.databasePool()?.waiting);
  gauge('parley_redis_up', '1 when Redis is connected (absent without REDIS_URL)', () => {
    const up = sources.redisUp();
    return up === null ? null : Number(up);
  });

  const events = new Counter({ name: 'parley_events_dispatched_total', help: 'Chat events dispatched, by broadcast name', labelNames: ['event'], registers: [registry] });
  const http = new Histogram({
    name: 'parley_http_request_duration_seconds',
    help: 'HTTP request latency',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });

  const pusherEventsFailed = new Counter({
    name: 'parley_pusher_events_failed_total',
    help: 'Events (or chunks of 100 channels) the external Pusher server did not take, by broadcast name and reason',
    labelNames: ['event', 'reason'],
    registers: [registry],
  });
  const pusherRetries = new Counter({ name: 'parley_pusher_retries_total', help: 'Pusher HTTP API requests sent again after a transient failure', registers: [registry] });
  const pusherTerminationsFailed = new Counter({
    name: 'parley_pusher_terminations_failed_total',
    help: 'terminate_connections for removed group members that the external Pusher server did not take',
    registers: [registry],
  });

  return {
    registry,
    eventDispatched: (name) => events.inc({ event: name }),
    httpRequest: (method, route, status, seconds) => http.observe({ method, route, status: String(status) }, seconds),
    pusher: {
      eventFailed: (event, reason) => pusherEventsFailed.inc({ event, reason }),
      retried: () => pusherRetries.inc(),
      terminationFailed: () => pusherTerminationsFailed.inc(),
    },
  };
}
