// A query's rows read through `COPY (query) TO STDOUT (FORMAT binary)` on PostgreSQL: they arrive
// as one run of bytes that the caller reads in place. Through the extended protocol `pg` decodes
// every field of every row into a string and an object per row; an export then encoded each
// record's JSON text back into UTF-8 to read it. Read by COPY, the rows cost the process a fraction
// of that (bench/RESULTS.md, 2026-11-29), and PostgreSQL sends its numbers and times as binary
// instead of formatting them as text.
//
// COPY takes no parameters, and SQL here is always parameterised: the values never enter a
// statement's text. Each value is bound to `SELECT set_config('gather.copy_N', $N::text, false)`
// (the text pg would have sent for it), and the COPY's query reads it back where `$N` stood as
// `current_setting('gather.copy_N')::TYPE`, TYPE being what PostgreSQL inferred for that parameter
// (found once per query text by PREPARE, and remembered).
import type { CompiledQuery } from 'kysely';
import type pg from 'pg';

/** The pg pool behind each Kysely instance opened on PostgreSQL (openDatabase notes them). */
const pools = new WeakMap<object, pg.Pool>();

export function notePool(db: object, pool: pg.Pool): void {
  pools.set(db, pool);
}

/** The session setting that carries parameter `n` (1-based) into a COPY. */
function settingName(n: number): string {
  return `gather.copy_${n}`;
}

/**
 * The query's text with each `$n` outside quotes, quoted names and comments replaced by the
 * expression `$n`'s value is read from (`expressions[n - 1]`); undefined when it names one there is not.
 */
export function replaceParameters(text: string, expressions: readonly string[]): string | undefined {
  let out = '';
  let from = 0;
  let i = 0;
  const length = text.length;
  while (i < length) {
    const c = text[i];
    if (c === "'" || c === '"') {
      // A string ('…', E'…' with backslash escapes) or a quoted name, up to its closing quote.
      const escapes = c === "'" && i > 0 && /[eE]/.test(text[i - 1] ?? '') && !/[\w$]/.test(text[i - 2] ?? '');
      i++;
      while (i < length) {
        const d = text[i];
        if (escapes && d === '\\') i += 2;
        else if (d === c && text[i + 1] === c) i += 2;
        else if (d === c) break;
        else i++;
      }
      i++;
    } else if (c === '-' && text[i + 1] === '-') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? length : end;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? length : end + 2;
    } else if (c === '$' && /[0-9]/.test(text[i + 1] ?? '') && !/[\w$]/.test(text[i - 1] ?? '')) {
      let j = i + 1;
      while (j < length && /[0-9]/.test(text[j] ?? '')) j++;
      const expression = expressions[Number(text.slice(i + 1, j)) - 1];
      if (expression === undefined) return undefined;
      out += text.slice(from, i) + expression;
      from = j;
      i = j;
    } else {
      i++;
    }
  }
  return out + text.slice(from);
}

/** Parameter types by query text, as PostgreSQL inferred them (PREPARE). */
const parameterTypes = new Map<string, readonly string[]>();
const REMEMBERED_QUERIES = 64;

/** The types PostgreSQL infers for the query's parameters (format_type names), asked once per text. */
async function typesOf(client: pg.PoolClient, text: string, count: number): Promise<readonly string[]> {
  const known = parameterTypes.get(text);
  if (known) return known;
  // PREPARE holds the query's text only; the values are bound later, by set_config.
  await client.query(`PREPARE gather_copy_types AS ${text}`);
  let types: string[];
  try {
    const result = await client.query<{ types: string[] }>(`SELECT parameter_types::text[] AS types FROM pg_prepared_statements WHERE name = 'gather_copy_types'`);
    types = result.rows[0]?.types ?? [];
  } finally {
    await client.query('DEALLOCATE gather_copy_types');
  }
  if (types.length !== count) throw new Error(`COPY: ${types.length} parameter types for ${count} parameters`);
  if (parameterTypes.size >= REMEMBERED_QUERIES) parameterTypes.delete(parameterTypes.keys().next().value ?? '');
  parameterTypes.set(text, types);
  return types;
}

/**
 * Binds the parameters to the session's settings and answers the COPY's query text, or undefined
 * when the query's parameters cannot be carried that way (a NUL in a text, which a setting
 * cannot hold): the caller then reads the usual way.
 */
async function boundCopyText(client: pg.PoolClient, query: CompiledQuery): Promise<string | undefined> {
  const values = query.parameters;
  if (values.some((value) => typeof value === 'string' && value.includes('\0'))) return undefined;
  const types = values.length === 0 ? [] : await typesOf(client, query.sql, values.length);
  const expressions = types.map((type, index) => (values[index] === null || values[index] === undefined ? `NULL::${type}` : `current_setting('${settingName(index + 1)}')::${type}`));
  const text = replaceParameters(query.sql, expressions);
  if (text === undefined) return undefined;
  const bound = values.flatMap((value, index) => (value === null || value === undefined ? [] : [{ index, value }]));
  if (bound.length > 0) {
    // Session settings, not SET LOCAL: the COPY runs in a transaction of its own. The next COPY
    // on this connection overwrites what it reads.
    const calls = bound.map(({ index }, at) => `set_config('${settingName(index + 1)}', $${at + 1}::text, false)`);
    await client.query(`SELECT ${calls.join(', ')}`, bound.map(({ value }) => value));
  }
  return text;
}

/** A COPY's bytes: bytes[0..length), in a buffer of a CopyBuffers. */
export interface CopiedBytes {
  readonly bytes: Buffer;
  readonly length: number;
}

/** Bytes a buffer starts with; it grows by doubling. */
const FIRST_BUFFER_BYTES = 256 * 1024;
/** Free buffers kept for the next reads: as many as a thread of an export reads at once. */
const KEPT_BUFFERS = 4;

/**
 * Buffers for COPY's bytes, each free again once every row read into it has been used, for the
 * next read. A new buffer for every read lived outside V8's heap until a full collection, long
 * after its rows were written, and raised the server's peak memory during a big export
 * (bench/RESULTS.md, 2026-11-29).
 */
export class CopyBuffers {
  private readonly free: Buffer[] = [];
  /** The rows read into a buffer and not yet used. */
  private readonly unread = new Map<Buffer, number>();

  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafeSlow(FIRST_BUFFER_BYTES);
  }

  give(buffer: Buffer): void {
    if (this.free.length < KEPT_BUFFERS && !this.free.includes(buffer)) this.free.push(buffer);
  }

  /** `rows` rows were read into `buffer` (a buffer of no rows is free at once). */
  hold(buffer: Buffer, rows: number): void {
    if (rows > 0) this.unread.set(buffer, rows);
    else this.give(buffer);
  }

  /** `rows` of the rows read into `buffer` have been used and nothing points into them any more. */
  used(buffer: Buffer, rows: number): void {
    const left = (this.unread.get(buffer) ?? 0) - rows;
    if (left > 0) {
      this.unread.set(buffer, left);
    } else {
      this.unread.delete(buffer);
      this.give(buffer);
    }
  }
}

/** Gathers a COPY's bytes, whatever the messages' sizes, into one buffer grown as they come. */
class CopyOut {
  private bytes: Buffer;
  private length = 0;
  private settle: { resolve(bytes: CopiedBytes): void; reject(error: Error): void } | undefined;
  readonly done: Promise<CopiedBytes>;

  constructor(
    private readonly text: string,
    private readonly buffers: CopyBuffers,
  ) {
    this.bytes = buffers.take();
    this.done = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
  }

  // What pg's client calls on a query it is given (pg-copy-streams' "submittable" shape).
  submit(connection: { query(text: string): void }): void {
    connection.query(this.text);
  }

  handleCopyData(message: { chunk: Buffer }): void {
    const chunk = message.chunk;
    if (this.length + chunk.length > this.bytes.length) {
      const bigger = Buffer.allocUnsafeSlow(Math.max(this.bytes.length * 2, this.length + chunk.length));
      this.bytes.copy(bigger, 0, 0, this.length);
      this.buffers.give(this.bytes);
      this.bytes = bigger;
    }
    // The chunk is a view of the driver's buffer, which it reuses: copied now.
    chunk.copy(this.bytes, this.length);
    this.length += chunk.length;
  }

  /**
   * The client calls this instead of handleReadyForQuery when the query fails: PostgreSQL's errors
   * are followed by its ReadyForQuery (the client waits for it before its next query), a broken
   * connection's by nothing.
   */
  handleError(error: Error): void {
    this.buffers.give(this.bytes);
    this.settle?.reject(error);
  }

  handleReadyForQuery(): void {
    this.settle?.resolve({ bytes: this.bytes, length: this.length });
  }

  handleCommandComplete(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
}

/**
 * The rows of `query` in PostgreSQL's binary COPY format (read them with BinaryRows), in a buffer
 * of `buffers` (the caller tells it how many rows it read there, then when they are used); undefined when `db` is not a PostgreSQL pool
 * opened here (PGlite, a transaction) or a parameter cannot be carried to it (boundCopyText): then the
 * caller runs the query itself.
 */
export async function copyBinaryRows(db: object, query: CompiledQuery, buffers: CopyBuffers): Promise<CopiedBytes | undefined> {
  const pool = pools.get(db);
  if (!pool) return undefined;
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const text = await boundCopyText(client, query);
    if (text === undefined) return undefined;
    const copy = new CopyOut(`COPY (${text}) TO STDOUT (FORMAT binary)`, buffers);
    // pg's types know query configs, not the submittable objects its client also takes.
    void client.query(copy as unknown as pg.QueryConfig);
    return await copy.done;
  } catch (error) {
    // An error from PostgreSQL leaves the connection ready for the next query; any other does not.
    if (!(error instanceof Error && 'severity' in error)) broken = error instanceof Error ? error : new Error(String(error));
    throw error;
  } finally {
    client.release(broken);
  }
}

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/**
 * The rows of a binary COPY in bytes[0..end), one at a time: after next(), field f of the row is
 * in bytes[start[f] .. start[f] + length[f]), its length -1 when NULL.
 */
export class BinaryRows {
  readonly start: Int32Array;
  readonly length: Int32Array;
  private at: number;

  constructor(
    readonly bytes: Buffer,
    private readonly end: number,
    private readonly fields: number,
  ) {
    if (end < SIGNATURE.length + 8 || !bytes.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('not a binary COPY');
    this.at = SIGNATURE.length + 8 + bytes.readInt32BE(SIGNATURE.length + 4);
    this.start = new Int32Array(fields);
    this.length = new Int32Array(fields);
  }

  /** Moves to the next row; false after the last. */
  next(): boolean {
    const bytes = this.bytes;
    const end = this.end;
    if (this.at + 2 > end) throw new Error('binary COPY ends early');
    const count = bytes.readInt16BE(this.at);
    if (count === -1) return false;
    if (count !== this.fields) throw new Error(`binary COPY row of ${count} fields, ${this.fields} expected`);
    let at = this.at + 2;
    for (let f = 0; f < count; f++) {
      if (at + 4 > end) throw new Error('binary COPY ends early');
      const length = bytes.readInt32BE(at);
      at += 4;
      this.start[f] = at;
      this.length[f] = length;
      if (length > 0) at += length;
    }
    if (at > end) throw new Error('binary COPY ends early');
    this.at = at;
    return true;
  }

  /** Where field `field`'s bytes end (its start for a NULL). */
  fieldEnd(field: number): number {
    return (this.start[field] as number) + Math.max(0, this.length[field] as number);
  }

  isNull(field: number): boolean {
    return (this.length[field] as number) < 0;
  }

  int32(field: number): number {
    return this.bytes.readInt32BE(this.start[field] as number);
  }

  float64(field: number): number {
    return this.bytes.readDoubleBE(this.start[field] as number);
  }

  text(field: number): string {
    const start = this.start[field] as number;
    return this.bytes.toString('utf8', start, start + (this.length[field] as number));
  }
}
