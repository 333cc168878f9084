/**
 * The field indexes a run-time declaration asks for (`ObjectStore.ensureIndex`, PROTOCOL.md 6.12) on
 * PostgreSQL: per class and field two partial btrees over the rows of that class, one for equality and
 * `$in` on the field's value, one for ordering by it (the keys of `orderExpressions`), each in creation
 * order within. Built concurrently (pg-index-build.ts), so writes to the class go on; once both are
 * valid, listings of the class filter and order on the indexed expression instead of containment.
 * A host's `indexedFields` (generated columns) need none.
 */
import pg from 'pg';
import { hash, onConnection } from './pg-common.js';
import { buildIndex, indexValid, type IndexBuild, type IndexTarget } from './pg-index-build.js';
import type { TableNames } from './postgres-schema.js';
import { orderExpressions } from './postgres-sql.js';

export class DeclaredIndexes {
  readonly #connection: pg.ClientConfig;
  readonly #pool: pg.Pool;
  readonly #names: TableNames;
  /** The host's indexed fields and their columns: taken as they are, and before a declared index. */
  readonly #host: ReadonlyMap<string, string>;
  /** Per class, the fields and their indexed expressions (the host's included), once the indexes are valid. */
  readonly #ready = new Map<string, ReadonlyMap<string, string>>();
  /** Builds asked for, by class and field: one per pair however often it is asked. */
  readonly #asked = new Map<string, Promise<void>>();
  readonly #running = new Set<IndexBuild>();
  /** Builds run one after another: a start that finds many indexes to build holds one connection of its own at a time, not one per index. */
  #queue: Promise<unknown> = Promise.resolve();
  #stopped = false;

  constructor(pool: pg.Pool, connection: pg.ClientConfig, names: TableNames, host: ReadonlyMap<string, string>) {
    this.#pool = pool;
    this.#connection = connection;
    this.#names = names;
    this.#host = host;
  }

  /** The fields of `className` that listings find through an index, with the expression each index holds. */
  indexedOf(className: string): ReadonlyMap<string, string> {
    return this.#ready.get(className) ?? this.#host;
  }

  /** Builds the indexes of `field` of `className` unless they are there; settles once listings use them. */
  ensure(className: string, field: string): Promise<void> {
    if (this.#host.has(field)) return Promise.resolve();
    const key = JSON.stringify([className, field]);
    let asked = this.#asked.get(key);
    if (!asked) {
      asked = this.#build(className, field).catch((error: unknown) => {
        this.#asked.delete(key); // asked again (the next declaration, another start), it builds again
        throw error;
      });
      this.#asked.set(key, asked);
    }
    return asked;
  }

  async #build(className: string, field: string): Promise<void> {
    const value = `(data -> ${pg.escapeLiteral(field)})`;
    const targets = this.#targets(className, field, value);
    // every start of every instance asks for them: where they are valid, one pooled query says so
    const valid = await onConnection(this.#pool, async (client) => {
      for (const { schema, index } of targets) if (!(await indexValid(client, schema, index))) return false;
      return true;
    });
    if (!valid) {
      const built = (this.#queue = this.#queue.catch(() => undefined).then(() => this.#buildAll(targets)));
      if (!(await built)) return;
    }
    const ready = new Map(this.indexedOf(className));
    if (!ready.has(field)) ready.set(field, value);
    this.#ready.set(className, ready);
  }

  /** Builds `targets` in turn; `false` when stopped (the store closes). */
  async #buildAll(targets: IndexTarget[]): Promise<boolean> {
    for (const target of targets) {
      if (this.#stopped) return false;
      const build = buildIndex(this.#connection, target, { waitForOthers: true });
      this.#running.add(build);
      try {
        if (!(await build.done)) return false;
      } finally {
        this.#running.delete(build);
      }
    }
    return true;
  }

  /**
   * The two indexes, named after the table and a hash of class and field (63 bytes at most whatever
   * their length): the same names on every instance and start, so a build finds what another made.
   */
  #targets(className: string, field: string, value: string): IndexTarget[] {
    const { schema, name, table } = this.#names;
    const stem = `${name}_d${hash(JSON.stringify([className, field]))}`;
    const rows = `WHERE class_name = ${pg.escapeLiteral(className)}`;
    return [
      { table, schema, index: `${stem}_f`, definition: `(${value}, seq) ${rows}` },
      { table, schema, index: `${stem}_o`, definition: `(${orderExpressions(value).join(', ')}, seq) ${rows}` },
    ];
  }

  /** Cancels the builds in progress (the store closes). */
  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all([...this.#running].map((build) => build.stop()));
  }
}
