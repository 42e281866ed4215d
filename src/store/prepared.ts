// Prepared statements for PostgreSQL: a pool in front of `pg`'s for Kysely's PostgresDialect that sends every
// parameterized query as a named statement, so PostgreSQL parses, analyzes and plans each distinct statement
// once per connection instead of on every execution (the send path's four statements were most of
// PostgreSQL's CPU per message; see bench/ANALYSIS.md).
//
//  - The name is derived from the SQL text (p_ + 16 hex digits of its SHA-1), the same on every connection.
//  - Not named: statements without parameters (the simple protocol, one round trip) and transaction control.
//  - `pg` keeps the name of every statement it parsed for the life of the connection (and so does the
//    server, with its plan), so each connection names at most maxPerConnection distinct statements; past
//    that they run unnamed as before. Kysely builds one text per shape of query, so the variety is small
//    (the HTTP, real-time, chat and concurrency suites together make 88 distinct texts, of 73 shapes), except
//    where a list's length is in the text (`in ($1, $2, ...)`): one text per length.
//  - "cached plan must not change result type" (0A000): a statement prepared before another node's migration
//    changed a table it reads. The connection is discarded on release and every connection prepared before it
//    is replaced when next checked out. Outside a transaction the query is run again unnamed on the spot;
//    inside one the error surfaces (the transaction is aborted) and isRetryableTransactionError() says it may
//    run again from the top, which it then does on a fresh connection.
//  - A connection that lost a statement pg believes it has ("prepared statement ... does not exist", 26000:
//    a DEALLOCATE, a pooler that switched server connections; or pg itself closing it after failing to
//    serialize a parameter) is discarded on release; outside a transaction the query is run again unnamed.
import { createHash } from 'node:crypto';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import { isStalePlanError } from './retryable-errors.js';

/** What this module takes from a `pg` client checked out of its pool. */
export interface PgClient {
  query(config: { name: string; text: string; values: unknown[] }): Promise<PgQueryResult>;
  query(text: string, values?: readonly unknown[]): Promise<PgQueryResult>;
  /** pg-pool: a truthy argument destroys the connection instead of returning it to the pool. */
  release(destroy?: boolean): void;
  /** From the last ReadyForQuery: 'I' idle, 'T' in a transaction block, 'E' in a failed one. */
  getTransactionStatus?(): string | null;
}

export interface PgQueryResult {
  command: string;
  rowCount: number | null;
  rows: unknown[];
}

/** What this module takes from a `pg` pool. */
export interface PgPool {
  connect(): Promise<PgClient>;
  end(): Promise<void>;
}

export interface PreparedStatementOptions {
  /** Distinct named statements per connection; statements beyond it run unnamed. */
  readonly maxPerConnection?: number;
}

export interface PreparedStatementStats {
  /** Executions as a named statement (including the first, which prepares it). */
  named: number;
  /** Parameterized executions left unnamed because their connection had maxPerConnection names already. */
  overCap: number;
  /** Stale plans met ("cached plan must not change result type"). */
  stalePlans: number;
  /** Connections discarded for holding statements prepared before a stale plan was met. */
  discarded: number;
}

export interface PreparingPool extends PostgresPool {
  stats(): PreparedStatementStats;
}

export const DEFAULT_MAX_PREPARED_PER_CONNECTION = 200;

// Transaction control never has parameters when Kysely sends it; checked anyway, it is cheap.
const TRANSACTION_CONTROL = /^\s*(?:begin|start\s+transaction|commit|end|rollback|abort|savepoint|release|prepare\s+transaction)\b/i;

/** Statement names by SQL text, for one pool: hashing is done once per text, not per execution. */
class StatementNames {
  readonly #names = new Map<string, string | null>();
  // Only a cache: when the texts are that varied, start over rather than grow.
  static readonly LIMIT = 10_000;

  nameOf(sql: string): string | null {
    let name = this.#names.get(sql);
    if (name === undefined) {
      if (this.#names.size >= StatementNames.LIMIT) this.#names.clear();
      name = TRANSACTION_CONTROL.test(sql) ? null : `p_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`;
      this.#names.set(sql, name);
    }
    return name;
  }
}

interface Shared {
  readonly names: StatementNames;
  readonly maxPerConnection: number;
  readonly stats: PreparedStatementStats;
  /** Bumped when a stale plan is met: connections prepared in an earlier epoch are replaced. */
  epoch: number;
}

class PreparingClient implements PostgresPoolClient {
  readonly #client: PgClient;
  readonly #shared: Shared;
  readonly epoch: number;
  /** Names this connection has prepared (or is preparing). */
  readonly #prepared = new Set<string>();
  /** Set after a stale plan: the connection's statements may be stale, it is destroyed on release. */
  #discard = false;

  constructor(client: PgClient, shared: Shared) {
    this.#client = client;
    this.#shared = shared;
    this.epoch = shared.epoch;
  }

  // Kysely calls query(sql, parameters), or query(cursor) when streaming: that returns the cursor itself.
  query(sqlOrCursor: any, parameters?: readonly unknown[]): any {
    if (typeof sqlOrCursor !== 'string') return (this.#client.query as (cursor: unknown) => unknown)(sqlOrCursor);
    const sql = sqlOrCursor;
    const name = this.#nameFor(sql, parameters);
    if (name === null) return this.#client.query(sql, parameters);
    return this.#client.query({ name, text: sql, values: parameters as unknown[] }).catch((err: unknown) => this.#failed(err, sql, parameters));
  }

  release(): void {
    if (this.#discard) {
      this.#shared.stats.discarded++;
      this.#client.release(true);
    } else {
      this.#client.release();
    }
  }

  #nameFor(sql: string, parameters: readonly unknown[] | undefined): string | null {
    if (!parameters || parameters.length === 0 || this.#discard) return null;
    const name = this.#shared.names.nameOf(sql);
    if (name === null) return null;
    if (!this.#prepared.has(name)) {
      if (this.#prepared.size >= this.#shared.maxPerConnection) {
        this.#shared.stats.overCap++;
        return null;
      }
      this.#prepared.add(name);
    }
    this.#shared.stats.named++;
    return name;
  }

  #failed(err: unknown, sql: string, parameters: readonly unknown[] | undefined): Promise<PgQueryResult> {
    const shared = this.#shared;
    if (isStalePlanError(err)) {
      shared.stats.stalePlans++;
      // Every connection prepared up to now may hold the same statement: replace them as they come back.
      if (!this.#discard && this.epoch === shared.epoch) shared.epoch++;
    } else if (!missingStatement(err)) {
      // Not from the server: a parameter pg could not serialize (the connection lost the statement, see
      // clientSideError), or a broken connection. Either way it is not used again.
      if (clientSideError(err)) this.#discard = true;
      throw err;
    }
    this.#discard = true;
    // The status is that of the last ReadyForQuery, before or after this error: 'I' either way when the
    // statement ran on its own, 'T' or 'E' in a transaction block (aborted now: nothing to retry here).
    if (this.#client.getTransactionStatus?.() !== 'I') throw err;
    return this.#client.query(sql, parameters);
  }
}

/** "prepared statement ... does not exist" (26000): the connection lost a statement pg believes it has. */
function missingStatement(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '26000';
}

/**
 * An error raised in the client, not sent by the server (which always gives a severity). The one that
 * matters here: a parameter pg cannot serialize (a throwing toPostgres, a BigInt inside a JSON value) makes pg
 * close the named statement on the server while still counting it as prepared, so that every later use of it
 * on that connection would fail with 26000.
 */
function clientSideError(err: unknown): boolean {
  return !err || typeof err !== 'object' || (err as { severity?: unknown }).severity === undefined;
}

/** A pool for Kysely's PostgresDialect that sends parameterized queries as named prepared statements. */
export function preparingPool(pool: PgPool, options: PreparedStatementOptions = {}): PreparingPool {
  const shared: Shared = {
    names: new StatementNames(),
    maxPerConnection: options.maxPerConnection ?? DEFAULT_MAX_PREPARED_PER_CONNECTION,
    stats: { named: 0, overCap: 0, stalePlans: 0, discarded: 0 },
    epoch: 0,
  };
  // One wrapper per pg client, for its life: what it prepared is known across checkouts.
  const wrappers = new WeakMap<PgClient, PreparingClient>();
  return {
    async connect() {
      for (;;) {
        const client = await pool.connect();
        let wrapper = wrappers.get(client);
        if (wrapper && wrapper.epoch !== shared.epoch) {
          shared.stats.discarded++;
          client.release(true);
          continue;
        }
        if (!wrapper) {
          wrapper = new PreparingClient(client, shared);
          wrappers.set(client, wrapper);
        }
        return wrapper;
      }
    },
    end: () => pool.end(),
    stats: () => ({ ...shared.stats }),
  };
}
