// A Kysely driver over one PGlite instance. PGlite is a single PostgreSQL session: a query
// issued while another caller's transaction is open would run inside that transaction. So the
// one connection is handed out under a mutex, exactly like a pool of size one.
import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { PreparedStatements } from './pglite-statements.ts';

class Mutex {
  #locked = false;
  #waiters: Array<() => void> = [];

  async lock(): Promise<void> {
    if (!this.#locked) {
      this.#locked = true;
      return;
    }
    await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  unlock(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#locked = false;
  }
}

class PGliteConnection implements DatabaseConnection {
  readonly #statements: PreparedStatements;

  constructor(private readonly pg: PGlite) {
    this.#statements = new PreparedStatements(pg);
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // Without parameters the simple protocol is used, which also accepts multi-statement
    // scripts (migrations); the last statement's result is the query's result. With parameters
    // the statement is prepared once and then only bound and run.
    const result =
      query.parameters.length === 0
        ? lastResult(await this.pg.exec(query.sql))
        : await this.#statements.run(query.sql, query.parameters);
    const rows = result.rows as R[];
    const affected = result.affectedRows;
    return affected === undefined ? { rows } : { rows, numAffectedRows: BigInt(affected) };
  }

  // PGlite cannot stream; callers page by key instead (see design notes).
  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('Streaming is not supported on PGlite; page by key instead');
  }

}

function lastResult(results: Array<{ rows: unknown[]; affectedRows?: number }>): { rows: unknown[]; affectedRows?: number } {
  return results[results.length - 1] ?? { rows: [] };
}

export class PGliteDriver implements Driver {
  readonly #mutex = new Mutex();
  readonly #connection: PGliteConnection;
  #busyMs = 0;
  #heldSince: number | undefined;

  constructor(private readonly pg: PGlite) {
    this.#connection = new PGliteConnection(pg);
  }

  async init(): Promise<void> {
    await this.pg.waitReady;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#mutex.lock();
    this.#heldSince = performance.now();
    return this.#connection;
  }

  /** Milliseconds the connection has been held so far, all callers together (the upkeep's measure of load). */
  busyMs(): number {
    return this.#busyMs + (this.#heldSince === undefined ? 0 : performance.now() - this.#heldSince);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    let statement = 'begin';
    if (settings.isolationLevel) statement += ` isolation level ${settings.isolationLevel}`;
    if (settings.accessMode) statement += ` ${settings.accessMode}`;
    await connection.executeQuery(CompiledQuery.raw(statement));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {
    if (this.#heldSince !== undefined) this.#busyMs += performance.now() - this.#heldSince;
    this.#heldSince = undefined;
    this.#mutex.unlock();
  }

  async destroy(): Promise<void> {
    await this.pg.close();
  }
}
