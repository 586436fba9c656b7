// A query's rows read through `COPY (query) TO STDOUT (FORMAT binary)` on PostgreSQL: they arrive
// as one run of bytes that the caller reads in place. Through the extended protocol `pg` decodes
// every field of every row into a string and an object per row; an export then encoded each
// record's JSON text back into UTF-8 to read it. Read by COPY, the rows cost the process a fraction
// of that (bench/RESULTS.md, 2026-11-29), and PostgreSQL sends its numbers and times as binary
// instead of formatting them as text.
//
// COPY takes no parameters, so the query's are written into its text as quoted literals: the text
// `pg` would have sent for each (same types, resolved from context as an untyped parameter is),
// with quotes and backslashes escaped. Values of other kinds are not written: the caller reads the
// usual way.
import type { CompiledQuery } from 'kysely';
import type pg from 'pg';

/** The pg pool behind each Kysely instance opened on PostgreSQL (openDatabase notes them). */
const pools = new WeakMap<object, pg.Pool>();

export function notePool(db: object, pool: pg.Pool): void {
  pools.set(db, pool);
}

/** A value as a quoted SQL literal (E'…'), or undefined when it is not a kind this writes. */
function literal(value: unknown): string | undefined {
  if (value === null || value === undefined) return 'NULL';
  let text: string | undefined;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number') text = Number.isFinite(value) ? String(value) : undefined;
  else if (typeof value === 'bigint' || typeof value === 'boolean') text = String(value);
  else if (value instanceof Date) text = Number.isNaN(value.getTime()) ? undefined : value.toISOString();
  else if (Array.isArray(value)) text = arrayText(value);
  // A NUL ends the statement's text on the wire: such a value is left to the extended protocol.
  if (text === undefined || text.includes('\0')) return undefined;
  return `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** A one-dimensional array of strings, numbers and nulls as PostgreSQL's array text, as pg writes it. */
function arrayText(items: readonly unknown[]): string | undefined {
  const parts: string[] = [];
  for (const item of items) {
    if (item === null || item === undefined) parts.push('NULL');
    else if (typeof item === 'string') parts.push(`"${item.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`);
    else if (typeof item === 'number' && Number.isFinite(item)) parts.push(String(item));
    else return undefined;
  }
  return `{${parts.join(',')}}`;
}

/**
 * The query's text with each `$n` outside quotes, quoted names and comments replaced by its
 * parameter as a literal; undefined when a parameter cannot be written.
 */
export function inlineParameters(text: string, parameters: readonly unknown[]): string | undefined {
  const literals: string[] = [];
  for (const parameter of parameters) {
    const written = literal(parameter);
    if (written === undefined) return undefined;
    literals.push(written);
  }
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
      const written = literals[Number(text.slice(i + 1, j)) - 1];
      if (written === undefined) return undefined;
      out += text.slice(from, i) + written;
      from = j;
      i = j;
    } else {
      i++;
    }
  }
  return out + text.slice(from);
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
 * opened here (PGlite, a transaction) or a parameter cannot be written into the text: then the
 * caller runs the query itself.
 */
export async function copyBinaryRows(db: object, query: CompiledQuery, buffers: CopyBuffers): Promise<CopiedBytes | undefined> {
  const pool = pools.get(db);
  if (!pool) return undefined;
  const text = inlineParameters(query.sql, query.parameters);
  if (text === undefined) return undefined;
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
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
