// A Kysely plugin that counts the statements run through it: `db.withPlugin(counter)` is a handle of its own on the
// same database (so also a loader of its own in store/turn-batches.ts and a memory of its own in known-users.ts).
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import type { DB } from '../../src/store/database.js';

export class StatementCounter implements KyselyPlugin {
  count = 0;
  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    this.count++;
    return node;
  }
  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result;
  }
}

/** A handle on db that counts its statements. */
export function counted(db: DB): { db: DB; counter: StatementCounter } {
  const counter = new StatementCounter();
  return { db: db.withPlugin(counter), counter };
}
