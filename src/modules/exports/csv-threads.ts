// Flat CSV on more than one core (PostgreSQL only). Parsing stored records and rendering them is
// CPU work the main thread does alone, while the database's work runs beside it: for 1,000,000
// bench records the main thread spent about 21 s and PostgreSQL about 4. Here helper threads
// (csv-helper.ts) each read `_id` ranges over a connection of their own and send back the CSV
// bytes; the main thread renders ranges too whenever the helpers are busy, and writes the ranges
// in order. At most RENDER_WINDOW ranges are rendered ahead of the one being written.
//
// A helper's bytes wait in a message channel that nothing listens to, and are received only when
// their range is written (receiveMessageOnPort); the helper tells that a range is ready by a small
// message of its own. Received as soon as ready, ranges that waited for their turn outlived young-
// generation collections, and their buffers (counted outside the heap, freed only by a full
// collection) piled up to 60-70 MB in some runs: peak RSS 274-282 MB instead of about 215 (by hand,
// 1,000,000 bench records).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { ExportOptions } from './options.ts';
import type { IdRange, ScopeFacts } from './source.ts';

/**
 * What a helper thread needs to render ranges of one export (sent when the export begins on it):
 * flat CSV lines, or an XLSX's sheets' rows (sheet-ranges.ts), or .sav files' cases.
 */
export interface CsvHelperSetup {
  readonly kind?: 'csv' | 'xlsx' | 'sav';
  readonly databaseUrl: string;
  readonly formJson: Readonly<Record<string, unknown>>;
  readonly options: ExportOptions;
  readonly baseUrl: string;
  readonly repeatCounts: ReadonlyArray<readonly [string, number]>;
  readonly osmTagKeys: readonly string[];
  readonly facts: ScopeFacts;
}

/**
 * A range to render; for sheets, where its rows' `_index` counters are predicted to start
 * (RawSections.counterState()).
 */
export interface HelperRange extends IdRange {
  readonly start?: readonly number[];
}

/**
 * What a helper is asked, in order: an export begins (with the channel its bytes go through), its
 * ranges, its end; or the thread is to end.
 */
export type CsvHelperRequest =
  | { readonly begin: CsvHelperSetup; readonly bytes: MessagePort }
  | { readonly seq: number; readonly range: HelperRange }
  | { readonly end: true }
  | { readonly close: true };

/**
 * What a range of sheets' rows (or .sav files' cases) holds: the `_index` counters it began and ended at, its rows and
 * its chunks per sheet (its bytes are every sheet's chunks in turn).
 */
export interface SheetRangeFacts {
  readonly start: readonly number[];
  readonly end: readonly number[];
  readonly rows: readonly number[];
  readonly chunks: readonly number[];
  /** Per section, what joins its chunks to the rows before them (.sav: where its cases sit in their blocks). */
  readonly marks?: readonly number[];
}

/** On the helper's own port: a range is ready (its bytes are in the bytes channel), or failed. */
export type CsvHelperReply =
  | { readonly seq: number; readonly records: number; readonly sheets?: SheetRangeFacts }
  | { readonly seq: number; readonly error: string };

/** On the bytes channel: a range's CSV bytes. */
export interface CsvHelperBytes {
  readonly seq: number;
  readonly chunks: readonly Uint8Array[];
}

/** A range's CSV lines and how many records they hold. */
export interface RenderedRange {
  readonly records: number;
  /** A range of sheets' rows: what its chunks are. */
  readonly sheets?: SheetRangeFacts | undefined;
  /** The lines as UTF-8 chunks; asked for once, when they are written. */
  take(): readonly Uint8Array[];
}

/**
 * The helper's young generation (V8 sizes it up to 48 MB by itself): smaller, it kept the server's
 * peak memory 10-15 MB lower for the same speed (1,000,000 records, by hand).
 */
const HELPER_YOUNG_GENERATION_MB = 16;

/** Requests a helper has at once: with fewer it sat idle a third of the time, waiting for the next. */
const HELPER_QUEUE = 3;

/**
 * The helper's module: the source file beside this one when running from source, or the bundle's
 * companion that bin/bundle.js writes next to the bundle. undefined if it is missing.
 */
export function csvHelperModule(): URL | undefined {
  const here = import.meta.url;
  const url = here.endsWith('.ts') ? new URL('./csv-helper.ts', here) : new URL(here.replace(/\.mjs$/, '-csv-helper.mjs'));
  return url.protocol === 'file:' && existsSync(fileURLToPath(url)) ? url : undefined;
}

interface Waiting {
  resolve(range: RenderedRange): void;
  reject(error: Error): void;
}

/** Something that renders ranges elsewhere: a helper thread. */
export interface RangeRenderer {
  /** True while it has as many requests as it works on at once (or has failed). */
  readonly busy: boolean;
  render(seq: number, range: HelperRange): Promise<RenderedRange>;
}

/**
 * One helper thread and the requests it has not answered. A thread serves one export at a time,
 * and export after export (borrowHelpers): its start, its modules' compilation and its warm-up
 * are paid once, not for every export.
 */
export class CsvHelper implements RangeRenderer {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, Waiting>();
  /** Where the current export's bytes wait until taken (never listened to). */
  private bytes: MessagePort | undefined;
  /** Bytes received before their range was taken. */
  private readonly early = new Map<number, readonly Uint8Array[]>();
  private failure: Error | undefined;
  /** A range of the current export failed (the thread may hold what it was doing then). */
  private spoiled = false;
  private closing = false;
  private exited = false;
  private readonly exit: Promise<void>;
  /** Told when the thread fails or stops by itself (the pool forgets it). */
  onFailure: (() => void) | undefined;

  /** A thread of `module`; with `setup`, that export begun on it. */
  constructor(module: URL, setup?: CsvHelperSetup) {
    const options = { resourceLimits: { maxYoungGenerationSizeMb: HELPER_YOUNG_GENERATION_MB } };
    this.worker = module.pathname.endsWith('.ts')
      ? // Running from source: a worker thread does not inherit tsx's loader, so it registers it first.
        new Worker(`import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(module.href)}); })`, { ...options, eval: true })
      : new Worker(module, options);
    this.exit = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.on('message', (reply: CsvHelperReply) => {
      const waiting = this.waiting.get(reply.seq);
      this.waiting.delete(reply.seq);
      if ('error' in reply) {
        this.spoiled = true;
        waiting?.reject(new Error(`CSV helper thread: ${reply.error}`));
      } else waiting?.resolve({ records: reply.records, sheets: reply.sheets, take: () => this.take(reply.seq) });
    });
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => {
      this.exited = true;
      if (!this.closing) this.fail(new Error(`CSV helper thread stopped (exit code ${code})`));
    });
    if (setup) this.begin(setup);
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiting of this.waiting.values()) waiting.reject(this.failure);
    this.waiting.clear();
    this.onFailure?.();
  }

  /** Begins an export on the thread: the ranges asked for from now on are its. */
  begin(setup: CsvHelperSetup): void {
    const channel = new MessageChannel();
    this.bytes = channel.port1;
    this.bytes.unref();
    this.early.clear();
    this.spoiled = false;
    this.worker.ref();
    this.worker.postMessage({ begin: setup, bytes: channel.port2 } satisfies CsvHelperRequest, [channel.port2]);
  }

  /**
   * Ends the current export on the thread (its connection is closed there; bytes it sent that were
   * not taken are dropped). True if the thread can serve another export: it has not failed, and no
   * range of this one failed or is unanswered.
   */
  end(): boolean {
    if (!this.failure && !this.exited) this.worker.postMessage({ end: true } satisfies CsvHelperRequest);
    this.bytes?.close();
    this.bytes = undefined;
    this.early.clear();
    this.worker.unref();
    return !this.failure && !this.exited && !this.spoiled && this.waiting.size === 0;
  }

  /**
   * The bytes of range `seq`, which the helper put in the channel before telling it ready. Ranges
   * may finish out of order (one waits for a user lookup that another does not need): bytes
   * received on the way are kept until their range is taken.
   */
  private take(seq: number): readonly Uint8Array[] {
    for (;;) {
      const early = this.early.get(seq);
      if (early) {
        this.early.delete(seq);
        return early;
      }
      const received = this.bytes ? (receiveMessageOnPort(this.bytes) as { message: CsvHelperBytes } | undefined) : undefined;
      if (!received) throw new Error(`CSV helper thread: the bytes of range ${seq} are missing`);
      this.early.set(received.message.seq, received.message.chunks);
    }
  }

  get busy(): boolean {
    return this.failure !== undefined || this.waiting.size >= HELPER_QUEUE;
  }

  render(seq: number, range: HelperRange): Promise<RenderedRange> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting.set(seq, { resolve, reject });
      this.worker.postMessage({ seq, range } satisfies CsvHelperRequest);
    });
  }

  /** Lets the helper close its connection and end; stops it if it has not ended within a second. */
  async close(): Promise<void> {
    this.closing = true;
    this.bytes?.close();
    this.bytes = undefined;
    if (this.exited) return;
    if (this.failure) {
      await this.worker.terminate();
      return;
    }
    this.worker.postMessage({ close: true } satisfies CsvHelperRequest);
    const timer = setTimeout(() => void this.worker.terminate(), 1000);
    await this.exit;
    clearTimeout(timer);
  }
}

/**
 * How long an idle helper thread is kept for the next export: long enough for exports that follow
 * each other, short enough that the server's idle memory goes back down soon after (the thread's
 * heap is most of what it holds).
 */
const HELPER_IDLE_MS = 2_000;

interface IdleHelper {
  readonly helper: CsvHelper;
  readonly module: string;
  readonly timer: NodeJS.Timeout;
}

/** Helper threads kept between exports, each stopped after HELPER_IDLE_MS unused. */
const idleHelpers: IdleHelper[] = [];
/** The most helpers one export has asked for: no more are kept idle. */
let mostAskedFor = 0;

function forget(idle: IdleHelper): void {
  const at = idleHelpers.indexOf(idle);
  if (at >= 0) idleHelpers.splice(at, 1);
  clearTimeout(idle.timer);
  idle.helper.onFailure = undefined;
}

/** How many helper threads wait idle for the next export. */
export function idleHelperThreads(): number {
  return idleHelpers.length;
}

/**
 * `count` helper threads for one export, begun with its setup: idle ones kept from earlier
 * exports first, new ones for the rest. Give them back with returnHelpers.
 */
export function borrowHelpers(module: URL, setup: CsvHelperSetup, count: number): CsvHelper[] {
  mostAskedFor = Math.max(mostAskedFor, count);
  const helpers: CsvHelper[] = [];
  for (let i = 0; i < count; i++) {
    const idle = idleHelpers.find((kept) => kept.module === module.href);
    if (idle) forget(idle);
    const helper = idle?.helper ?? new CsvHelper(module);
    helper.begin(setup);
    helpers.push(helper);
  }
  return helpers;
}

/**
 * Ends an export on its helpers: each that can serve another is kept idle for a while, the others
 * (failed, or left with a range failed or unanswered) are stopped.
 */
export async function returnHelpers(module: URL, helpers: readonly CsvHelper[]): Promise<void> {
  const stopping: Promise<void>[] = [];
  for (const helper of helpers) {
    if (helper.end() && idleHelpers.length < mostAskedFor) {
      const idle: IdleHelper = {
        helper,
        module: module.href,
        timer: setTimeout(() => {
          forget(idle);
          void helper.close();
        }, HELPER_IDLE_MS).unref(),
      };
      helper.onFailure = () => {
        forget(idle);
        void helper.close();
      };
      idleHelpers.push(idle);
    } else stopping.push(helper.close());
  }
  await Promise.all(stopping);
}

/** Ranges rendered at most this far ahead of the one being written (bounds the memory they hold). */
export const RENDER_WINDOW = 8;

interface Slot {
  readonly result: Promise<RenderedRange>;
  done: boolean;
}

/** How the main thread renders a range: read it (the database works), then render it (CPU). */
export interface RenderHere<Read, Range extends HelperRange = IdRange> {
  read(range: Range): Promise<Read>;
  render(read: Read): RenderedRange;
}

/**
 * The ranges rendered by the helpers and by the main thread, handed out in order. The main thread
 * renders whenever the next range is not ready, and reads its following range while it renders.
 */
export async function* renderRanges<Read, Range extends HelperRange = IdRange>(
  ranges: readonly Range[],
  helpers: readonly RangeRenderer[],
  here: RenderHere<Read, Range>,
): AsyncGenerator<RenderedRange, void, undefined> {
  const slots: Slot[] = [];
  let given = 0;
  let written = 0;
  let prefetch: { readonly seq: number; readonly read: Promise<Read> } | undefined;
  const open = (): boolean => given < ranges.length && given < written + RENDER_WINDOW;
  const take = (): { seq: number; range: Range } => {
    const seq = given;
    given += 1;
    return { seq, range: ranges[seq] as Range };
  };
  const reserve = (): typeof prefetch => {
    if (!open()) return undefined;
    const { seq, range } = take();
    const read = here.read(range);
    read.catch(() => undefined); // a failure surfaces where it is awaited
    return { seq, read };
  };
  try {
    while (written < ranges.length) {
      for (const helper of helpers) {
        while (!helper.busy && open()) {
          const { seq, range } = take();
          const slot: Slot = { result: helper.render(seq, range), done: false };
          slot.result.then(() => (slot.done = true), () => (slot.done = true));
          slots[seq] = slot;
        }
      }
      const next = slots[written];
      if (next?.done) {
        const rendered = await next.result;
        delete slots[written];
        written += 1;
        yield rendered;
        continue;
      }
      prefetch ??= reserve();
      if (prefetch) {
        const mine = prefetch;
        const read = await mine.read;
        prefetch = reserve();
        slots[mine.seq] = { result: Promise.resolve(here.render(read)), done: true };
        continue;
      }
      if (next) await next.result.catch(() => undefined);
    }
  } finally {
    await Promise.allSettled([...slots.filter((slot) => slot !== undefined).map((slot) => slot.result), prefetch?.read]);
  }
}
