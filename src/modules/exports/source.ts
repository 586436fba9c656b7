// What every export format reads: the form's export model, the records in `_id` order
// (keyset pages, one page in memory at a time), and the aggregates the layouts need.
import type { AppDeps } from '../../context.ts';
import { buildFormModel, type FormModel, type FormNode } from '../../lib/form-model/model.ts';
import { RepeatShape } from '../../lib/writers/layout/repeat-shape.ts';
import type { ExportRecord } from '../../lib/writers/layout/types.ts';
import { queryCondition } from '../submissions/query.ts';
import type { ExportOptions } from './options.ts';
import * as repo from './repository.ts';
import { PageReader, type RecordPage } from './record-rows.ts';

export type { RecordPage } from './record-rows.ts';

// Small enough that the pages read ahead (see keysetPages) are consumed before a young-generation
// collection has to copy it twice; 2,000 records a page promoted about 1 GB per million records
// to the old generation and doubled the server's peak memory.
export const RECORD_PAGE_SIZE = 500;

/**
 * Records per `_id` range of a split pass (splitPass). Ranges are read and rendered side by side,
 * several held at once (csv-threads.ts RENDER_WINDOW), so their size sets how many records are in
 * flight: by hand, 1,000,000 bench records on two threads, ranges of 500 peaked at 278-291 MB and
 * ranges of 250 at 214-215 MB, at the same speed (interleaved runs).
 */
export const RANGE_SIZE = 250;

/**
 * Records per page of a serial pass (serialPages). Every young-generation collection during such a
 * pass copies the rows not yet turned into records, this page's and the one read ahead: smaller
 * pages keep fewer of them alive at once (cheaper collections, a lower peak), for more keyset
 * queries.
 */
const SERIAL_PAGE_SIZE = 100;

/** Pages read at once on PostgreSQL (see rangedPages). */
const READ_AHEAD = 2;

export interface ExportTarget {
  readonly formId: number;
  readonly idString: string;
  readonly title: string;
  /** The form's pyxform form JSON (forms.json). */
  readonly formJson: Readonly<Record<string, unknown>>;
  /** Only this submitter's records (callers who may see only their own data). */
  readonly submittedBy?: number | undefined;
}

export interface ExportSource {
  readonly form: FormModel;
  readonly options: ExportOptions;
  readonly baseUrl: string;
  /** A fresh pass over the records; each call starts again from the first record. */
  records(): AsyncIterable<ExportRecord>;
  /**
   * The same pass a database page at a time, several pages read at once on PostgreSQL (flat CSV,
   * the fastest reader per record).
   */
  pages(): AsyncIterable<RecordPage>;
  /**
   * The same pass a page at a time, with one page read ahead instead of several ranges at once:
   * for formats slower per record than flat CSV, whose read-ahead pages would wait, grow old in
   * the heap and raise the peak memory.
   */
  serialPages(): AsyncIterable<RecordPage>;
  /** Repeat block counts for flat layouts (one SQL aggregate). */
  repeatShape(): Promise<RepeatShape>;
  /** `<field>:<tag>` keys of osm questions found in the records. */
  osmTagKeys(): Promise<string[]>;
  /** The records' attached files, a page of records at a time, the records themselves unread (attachments zip). */
  attachmentPages(): AsyncIterable<repo.AttachmentPage>;
  /** How many records a pass reads (an export job's progress total). */
  countRecords(): Promise<number>;
  /**
   * On PostgreSQL, a pass split so that helper threads can read and render parts of it
   * themselves (csv-threads.ts); undefined on PGlite, whose one connection this process holds.
   */
  splitPass(): Promise<SplitPass | undefined>;
  /** Told how many records a reader of splitPass() has written (an export job's progress). */
  noteWritten(records: number): Promise<void>;
}

/** Records with `after < _id <= through`. */
export interface IdRange {
  readonly after: number;
  readonly through: number;
}

/** Which records an export reads, in a form that can be sent to another thread. */
export interface ScopeFacts {
  readonly formId: number;
  readonly query: string | undefined;
  readonly submittedBy: number | undefined;
  readonly start: Date | undefined;
  readonly end: Date | undefined;
  readonly withAttachments: boolean;
}

export function recordScope(facts: ScopeFacts): repo.RecordScope {
  return { formId: facts.formId, condition: queryCondition(facts.query), submittedBy: facts.submittedBy, start: facts.start, end: facts.end };
}

/** A pass as its first page, then independent `_id` ranges of RANGE_SIZE records, then the rest. */
export interface SplitPass {
  readonly first: RecordPage;
  readonly ranges: readonly IdRange[];
  readRange(range: IdRange): Promise<RecordPage>;
  /** The records after the last range (new ones too), page by page. */
  rest(): AsyncIterable<RecordPage>;
  /** Instead of the ranges and the rest: every record after the first page, pages read ahead. */
  remaining(): AsyncIterable<RecordPage>;
  /** What a helper thread needs to read the same records. */
  readonly facts: ScopeFacts;
  /**
   * Per range, the items each repeat of `paths` (record keys) holds in its records, from their
   * stored repeat counts (a prediction: records stored without counts count none).
   */
  rangeItems(paths: readonly string[]): Promise<Array<Map<string, number>>>;
}

/**
 * Prepares an export. The query is parsed and the first page read here, so a bad request
 * fails before any byte is sent.
 */
export async function openExportSource(deps: AppDeps, target: ExportTarget, options: ExportOptions, baseUrl: string): Promise<ExportSource> {
  const form = buildFormModel(target.formJson);
  const withAttachments = options.includeImages && hasMedia(form);
  const facts: ScopeFacts = { formId: target.formId, query: options.query, submittedBy: target.submittedBy, start: options.start, end: options.end, withAttachments };
  const scope = recordScope(facts);
  const reader = new PageReader(deps.db, form);
  const usedPage = (rows: repo.ExportRecordRow[]): Promise<RecordPage> => reader.page(rows);

  let firstPage: repo.ExportRecordRow[] | undefined = await repo.listExportRecords(deps.db, scope, 0, { limit: RECORD_PAGE_SIZE }, withAttachments, reader.buffers);
  const readPage = (afterId: number, limit = RECORD_PAGE_SIZE) => repo.listExportRecords(deps.db, scope, afterId, { limit }, withAttachments, reader.buffers);

  /** Pages by `_id` keyset from `afterId`, the next one read while this one is used. */
  async function* keysetPages(afterId: number, first?: repo.ExportRecordRow[], limit = RECORD_PAGE_SIZE): AsyncGenerator<RecordPage> {
    let page = first ?? (await readPage(afterId, limit));
    let next: Promise<repo.ExportRecordRow[]> | undefined;
    try {
      for (;;) {
        const last = page[page.length - 1];
        // The next page is read while this one is turned into rows, so the database and this
        // process work side by side instead of in turns.
        next = page.length < limit || last === undefined ? undefined : readPage(last.id, limit);
        next?.catch(() => undefined); // a failure surfaces where it is awaited below
        yield await usedPage(page);
        if (!next) return;
        page = await next;
        next = undefined;
      }
    } finally {
      // A reader that stops early must not leave a query running behind it.
      await next?.catch(() => undefined);
    }
  }

  /**
   * On PostgreSQL: after the first page, the `_id` that ends every RANGE_SIZE-th record is
   * listed (an index-only scan), so pages are independent ranges and READ_AHEAD of them are read
   * at once over the pool's connections. With one page read ahead this process waited for the
   * database about 15% of the time. Records after the last listed id (new ones too) come by keyset.
   */
  async function* rangedPages(firstLast: number, ends: readonly number[]): AsyncGenerator<RecordPage> {
    const reads: Promise<repo.ExportRecordRow[]>[] = [];
    let issued = 0;
    const readAhead = (): void => {
      while (reads.length < READ_AHEAD && issued < ends.length) {
        const after = issued === 0 ? firstLast : (ends[issued - 1] ?? firstLast);
        const read = repo.listExportRecords(deps.db, scope, after, { throughId: ends[issued] ?? after }, withAttachments, reader.buffers);
        read.catch(() => undefined); // a failure surfaces where it is awaited below
        reads.push(read);
        issued += 1;
      }
    };
    try {
      readAhead();
      for (let read = reads.shift(); read; read = reads.shift()) {
        const page = await read;
        readAhead();
        if (page.length > 0) yield await usedPage(page);
      }
    } finally {
      await Promise.allSettled(reads);
    }
    yield* keysetPages(ends[ends.length - 1] ?? firstLast);
  }

  /** The first page of a pass: the one read to check the request, or a fresh read. */
  async function takeFirstPage(): Promise<repo.ExportRecordRow[]> {
    const first = firstPage ?? (await readPage(0));
    firstPage = undefined;
    return first;
  }

  async function* pages(): AsyncGenerator<RecordPage> {
    // Every pass on PGlite (one connection) goes by keyset.
    const split = await splitPass();
    if (!split) {
      yield* keysetPages(0, await takeFirstPage());
      return;
    }
    yield split.first;
    yield* split.remaining();
  }

  // Formats that take a record at a time are slower per record than flat CSV, so pages read
  // ahead in parallel would wait longer and be promoted (XLSX's peak RSS rose 190 → 290 MB):
  // they read page by page.
  async function* serialPages(): AsyncGenerator<RecordPage> {
    // The first page, read whole to check the request, goes out in pieces of the serial size.
    const first = await takeFirstPage();
    const complete = first.length < RECORD_PAGE_SIZE;
    const last = first[first.length - 1];
    while (first.length > 0) yield await usedPage(first.splice(0, SERIAL_PAGE_SIZE));
    if (complete || last === undefined) return;
    yield* keysetPages(last.id, undefined, SERIAL_PAGE_SIZE);
  }

  async function* attachmentPages(): AsyncGenerator<repo.AttachmentPage> {
    for (let after = 0; ; ) {
      const page = await repo.listAttachmentPage(deps.db, scope, after, RECORD_PAGE_SIZE);
      if (page.count > 0) yield page;
      if (page.count < RECORD_PAGE_SIZE) return;
      after = page.lastId;
    }
  }

  async function* records(): AsyncGenerator<ExportRecord> {
    for await (const page of serialPages()) yield* page.records;
  }

  async function splitPass(): Promise<SplitPass | undefined> {
    if (!deps.config.databaseUrl) return undefined;
    const firstRows = await takeFirstPage();
    const last = firstRows[firstRows.length - 1]?.id ?? 0;
    const complete = firstRows.length < RECORD_PAGE_SIZE;
    const ends = complete ? [] : await repo.listRunEnds(deps.db, scope, RANGE_SIZE, last);
    return {
      first: await usedPage(firstRows),
      ranges: ends.map((through, i) => ({ after: i === 0 ? last : (ends[i - 1] ?? last), through })),
      readRange: async (range) => usedPage(await repo.listExportRecords(deps.db, scope, range.after, { throughId: range.through }, withAttachments, reader.buffers)),
      rest: () => (complete ? noPages() : keysetPages(ends[ends.length - 1] ?? last)),
      remaining: () => (complete ? noPages() : rangedPages(last, ends)),
      facts,
      rangeItems: async (paths) => {
        const items = ends.map(() => new Map<string, number>());
        if (ends.length === 0) return items;
        for (const { run, path, items: n } of await repo.listRunRepeatItems(deps.db, scope, RANGE_SIZE, last, paths)) items[run]?.set(path, n);
        return items;
      },
    };
  }

  return {
    form,
    options,
    baseUrl,
    splitPass,
    noteWritten: () => Promise.resolve(),
    records,
    pages,
    serialPages,
    attachmentPages,
    repeatShape: async () => {
      const shape = new RepeatShape();
      if (form.repeats.length === 0) return shape;
      for (const { key, count } of await repo.listRepeatCounts(deps.db, scope)) shape.noteKey(key, count);
      return shape;
    },
    osmTagKeys: () => repo.listOsmTagKeys(deps.db, scope, form.osmQuestions.map((q) => q.path)),
    countRecords: () => repo.countExportRecords(deps.db, scope),
  };
}

// eslint-disable-next-line require-yield -- a pass with nothing left to read
async function* noPages(): AsyncGenerator<RecordPage> {
  return;
}

function hasMedia(form: FormModel): boolean {
  const walk = (nodes: readonly FormNode[]): boolean => nodes.some((n) => (n.kind === 'question' ? n.uses.media : walk(n.children)));
  return walk(form.root.children);
}
