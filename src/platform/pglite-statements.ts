// Parameterised statements on PGlite, prepared once and then run in one exchange.
//
// PGlite's `query()` sends parse, describe, bind, describe, execute and sync as six separate calls
// into the WebAssembly backend, and PostgreSQL parses and plans the text every time. Here each
// statement text is parsed once under a name (its parameter types and row shape kept); after that
// a call is bind + execute + sync in a single buffer (figures: bench/RESULTS.md, 2026-11-28).
import { parse as pgliteParse, protocol, type PGlite } from '@electric-sql/pglite';

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
 * Named statements of one PGlite session, least recently used first out. The limit bounds the
 * backend's memory when statement texts vary (IN lists of many lengths).
 */
export class PreparedStatements {
  readonly #statements = new Map<string, PreparedStatement>();
  /** Names evicted from the map, closed on the backend with the next exchange. */
  #toClose: string[] = [];

  constructor(
    private readonly pg: PGlite,
    private readonly limit = 256,
  ) {}

  async run(text: string, parameters: readonly unknown[]): Promise<StatementResult> {
    const statement = this.#statements.get(text) ?? (await this.#prepare(text));
    // Most recently used last, so the map's first key is the one to evict.
    this.#statements.delete(text);
    this.#statements.set(text, statement);

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
    const statement: PreparedStatement = {
      name,
      parameterTypes: parameterTypesOf(messages),
      rowDescription: messages.find((message) => message.name === 'rowDescription'),
    };
    this.#statements.set(text, statement);
    if (this.#statements.size > this.limit) {
      const oldest = this.#statements.keys().next().value;
      if (oldest !== undefined) this.#forget(oldest);
    }
    return statement;
  }

  #forget(text: string): void {
    const statement = this.#statements.get(text);
    if (!statement) return;
    this.#statements.delete(text);
    this.#toClose.push(statement.name);
  }

  #serialize(value: unknown, typeId: number | undefined): string | null {
    if (value === null || value === undefined) return null;
    const serializer = typeId === undefined ? undefined : this.pg.serializers[typeId];
    if (serializer) return serializer(value);
    return typeof value === 'string' ? value : String(value);
  }

  /** What query() does after each statement: outside a transaction, make the write durable. */
  async #syncOutsideTransaction(): Promise<void> {
    if (!this.pg.isInTransaction()) await this.pg.syncToFs();
  }
}
