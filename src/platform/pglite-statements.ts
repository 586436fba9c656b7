// Parameterised statements on PGlite, each run in one exchange with the backend.
//
// PGlite's `query()` sends parse, describe, bind, describe, execute and sync as six separate calls
// into the WebAssembly backend. Here a call is one buffer (figures: bench/RESULTS.md, 2026-11-28).
//
// Only a statement marked `/* prepared:NAME */` (a hot one whose plan is the same at any table
// size: lookups by key) is kept prepared under a name and then only bound and executed. Every
// other statement goes through the unnamed statement and is planned afresh for the data at hand:
// a kept statement switches to a generic plan after five runs and keeps it until its tables are
// analysed, which nothing does on PGlite, so a plan chosen while a table was nearly empty stayed
// in force as it grew (a project listing took 20 s instead of 0.2 s at 10,000 projects).
import type { PGlite } from '@electric-sql/pglite';
import { PREPARED_MARKER } from './prepared-marker.ts';

// Loaded dynamically, as db.ts loads this module only for a server on PGlite: the bundle hoists a
// static import of a package to its top, which loaded PGlite's JavaScript on PostgreSQL too.
const { parse: pgliteParse, protocol, types } = await import('@electric-sql/pglite');

type BackendMessage = Awaited<ReturnType<PGlite['execProtocolStream']>>[number];

interface PreparedStatement {
  readonly name: string;
  /** Type OID of each parameter, which picks its serializer. */
  readonly parameterTypes: readonly number[];
  /** The statement's RowDescription, or undefined for one that returns no rows. */
  readonly rowDescription: BackendMessage | undefined;
}

export interface StatementResult {
  rows: unknown[];
  affectedRows?: number;
}

const { serialize } = protocol;

/** Statement names are unique in the process, so two sets on one session never collide. */
let statementCounter = 0;

function concat(parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function parameterTypesOf(messages: BackendMessage[]): number[] {
  const description = messages.find((message) => message.name === 'parameterDescription');
  return description && 'dataTypeIDs' in description ? (description.dataTypeIDs as number[]) : [];
}

/**
 * Puts `key` last (most recently used) and, past `limit` entries, takes out the first: the least
 * recently used, which is returned.
 */
function touch<V>(map: Map<string, V>, key: string, value: V, limit: number): V | undefined {
  map.delete(key);
  map.set(key, value);
  if (map.size <= limit) return undefined;
  const [oldest] = map;
  if (oldest === undefined) return undefined;
  map.delete(oldest[0]);
  return oldest[1];
}

/**
 * The statements of one PGlite session: named ones (marked) least recently used first out, and
 * the parameter types of unnamed ones. The limit bounds the backend's memory when statement texts
 * vary (IN lists of many lengths).
 */
export class PreparedStatements {
  readonly #statements = new Map<string, PreparedStatement>();
  /** Parameter types of unmarked statements, as PostgreSQL inferred them at their first run. */
  readonly #parameterTypes = new Map<string, number[]>();
  /** Names evicted from the map, closed on the backend with the next exchange. */
  #toClose: string[] = [];

  constructor(
    private readonly pg: PGlite,
    private readonly limit = 256,
  ) {}

  async run(text: string, parameters: readonly unknown[]): Promise<StatementResult> {
    return PREPARED_MARKER.test(text) ? this.#runNamed(text, parameters) : this.#runUnnamed(text, parameters);
  }

  /** Parse (with the types found at the first run), bind, describe and execute in one buffer. */
  async #runUnnamed(text: string, parameters: readonly unknown[]): Promise<StatementResult> {
    const types = this.#parameterTypes.get(text) ?? (await this.#describeParameters(text));
    touch(this.#parameterTypes, text, types, this.limit);
    const values = parameters.map((value, index) => this.#serialize(value, types[index]));
    let messages: BackendMessage[];
    try {
      messages = await this.pg.execProtocolStream(
        concat([
          serialize.parse({ name: '', text, types }),
          serialize.bind({ statement: '', values }),
          serialize.describe({ type: 'P', name: '' }),
          serialize.execute({}),
          serialize.sync(),
        ]),
        { syncToFs: false },
      );
    } catch (error) {
      // The types may no longer be what the tables say (a migration ran): find them again next time.
      this.#parameterTypes.delete(text);
      throw error;
    }
    await this.#syncOutsideTransaction();
    const [result] = pgliteParse.parseResults(messages, this.pg.parsers);
    return result ?? { rows: [] };
  }

  async #describeParameters(text: string): Promise<number[]> {
    const messages = await this.pg.execProtocolStream(
      concat([serialize.parse({ name: '', text }), serialize.describe({ type: 'S', name: '' }), serialize.sync()]),
      { syncToFs: false },
    );
    return parameterTypesOf(messages);
  }

  async #runNamed(text: string, parameters: readonly unknown[]): Promise<StatementResult> {
    const statement = this.#statements.get(text) ?? (await this.#prepare(text));
    const evicted = touch(this.#statements, text, statement, this.limit);
    if (evicted) this.#toClose.push(evicted.name);

    const values = parameters.map((value, index) => this.#serialize(value, statement.parameterTypes[index]));
    let messages: BackendMessage[];
    try {
      messages = await this.pg.execProtocolStream(
        concat([serialize.bind({ statement: statement.name, values }), serialize.execute({}), serialize.sync()]),
        { syncToFs: false },
      );
    } catch (error) {
      // A statement whose tables changed shape under it cannot be bound again: prepare it anew
      // next time (the error itself still reaches the caller, as query() would raise it).
      if (error instanceof Error && /cached plan must not change result type/.test(error.message)) this.#forget(text);
      throw error;
    }
    await this.#syncOutsideTransaction();
    const described = statement.rowDescription ? [statement.rowDescription, ...messages] : messages;
    const [result] = pgliteParse.parseResults(described, this.pg.parsers);
    return result ?? { rows: [] };
  }

  async #prepare(text: string): Promise<PreparedStatement> {
    const name = `gather_${++statementCounter}`;
    const closing = this.#toClose.map((old) => serialize.close({ type: 'S', name: old }));
    this.#toClose = [];
    const messages = await this.pg.execProtocolStream(
      concat([...closing, serialize.parse({ name, text }), serialize.describe({ type: 'S', name }), serialize.sync()]),
      { syncToFs: false },
    );
    return {
      name,
      parameterTypes: parameterTypesOf(messages),
      rowDescription: messages.find((message) => message.name === 'rowDescription'),
    };
  }

  #forget(text: string): void {
    const statement = this.#statements.get(text);
    if (!statement) return;
    this.#statements.delete(text);
    this.#toClose.push(statement.name);
  }

  #serialize(value: unknown, typeId: number | undefined): string | Uint8Array | null {
    if (value === null || value === undefined) return null;
    // A bytea's bytes go as they are, in the binary format (PGlite's Bind writer sends a byte
    // array so): as hex text, PGlite measured each parameter's UTF-8 length char by char in
    // JavaScript, twice, and storing a photo cost far more than the database's own work
    // (bench/RESULTS.md, 2026-11-29). The one place a bytea parameter is written.
    if (typeId === types.BYTEA && value instanceof Uint8Array) return value;
    const serializer = typeId === undefined ? undefined : this.pg.serializers[typeId];
    if (serializer) return serializer(value);
    return typeof value === 'string' ? value : String(value);
  }

  /** What query() does after each statement: outside a transaction, make the write durable. */
  async #syncOutsideTransaction(): Promise<void> {
    if (!this.pg.isInTransaction()) await this.pg.syncToFs();
  }
}
