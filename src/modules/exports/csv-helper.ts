// A helper thread of a flat CSV or XLSX export (csv-threads.ts, sheet-ranges.ts): it reads the
// `_id` ranges it is asked for over its own database connection and answers each with the range's
// CSV lines, or its rows' XML in every sheet, as UTF-8 chunks (moved, not copied, to the main thread).
import { parentPort, type MessagePort } from 'node:worker_threads';
import { buildFormModel } from '../../lib/form-model/model.ts';
import { planFlatLayout } from '../../lib/writers/layout/flat.ts';
import { RepeatShape } from '../../lib/writers/layout/repeat-shape.ts';
import { openDatabase, type Database } from '../../platform/db.ts';
import type { CsvHelperBytes, CsvHelperReply, CsvHelperRequest, CsvHelperSetup, HelperRange, SheetRangeFacts } from './csv-threads.ts';
import type { FormModel } from '../../lib/form-model/model.ts';
import { XLSX_LIMITS } from '../../lib/writers/xlsx/xlsx-writer.ts';
import type { RecordPage } from './record-rows.ts';
import { storedSectionsOf } from './section-pass.ts';
import { planSheets, SheetRangeWriter } from './sheet-ranges.ts';
import { planSavFiles, SavRangeWriter } from './zipped.ts';
import { CsvEncoder } from '../../lib/writers/csv/writer.ts';
import { flatCsvBytes, flatCsvLines } from './flat-csv.ts';
import { PageReader } from './record-rows.ts';
import { listExportRecords } from './repository.ts';
import { recordScope } from './source.ts';

/** How this helper renders a range's page: its bytes, and for sheets what they hold. */
type PageRenderer = (page: RecordPage, range: HelperRange) => { chunks: Uint8Array[]; sheets?: SheetRangeFacts };

function csvRenderer(setup: CsvHelperSetup, form: FormModel, shape: RepeatShape): PageRenderer {
  const layout = planFlatLayout(form, setup.options, shape, { baseUrl: setup.baseUrl }, setup.osmTagKeys);
  const lines = flatCsvLines(layout);
  return (page) => ({ chunks: flatCsvBytes(lines, page, new CsvEncoder()) });
}

function sheetRenderer(setup: CsvHelperSetup, form: FormModel, shape: RepeatShape): PageRenderer {
  const layout = planSheets(form, setup.options, setup.baseUrl, setup.osmTagKeys);
  const raw = storedSectionsOf(layout, layout.sections.length > 1 ? shape : undefined);
  if (!raw) throw new Error('the sheets cannot be read from the stored records');
  const sheets = layout.sections.map((section) => ({ name: section.sheetName, headerRows: section.headerRows.length }));
  const writer = new SheetRangeWriter(raw, sheets, XLSX_LIMITS);
  return (page, range) => {
    const rendered = writer.render(page, range.start ?? []);
    const facts = { start: rendered.start, end: rendered.end, rows: rendered.rows, chunks: rendered.chunks.map((c) => c.length) };
    // Each chunk is a view of a buffer of its own (SheetBytes.take), so moving them moves nothing else.
    return { chunks: rendered.chunks.flat(), sheets: facts };
  };
}

function savRenderer(setup: CsvHelperSetup, form: FormModel, shape: RepeatShape): PageRenderer {
  const { layout, savs } = planSavFiles(form, setup.options, setup.baseUrl, setup.osmTagKeys);
  const raw = storedSectionsOf(layout, layout.sections.length > 1 ? shape : undefined);
  if (!raw) throw new Error('the .sav files cannot be read from the stored records');
  const writer = new SavRangeWriter(raw, savs);
  return (page, range) => {
    const { facts, chunks } = writer.render(page, range.start ?? []);
    // Each piece's bytes are a buffer of their own (CompressedSink.piece copies them out).
    return { chunks, sheets: facts };
  };
}

/** One export's work on this helper: its connection, its renderer and where its bytes go. */
interface Session {
  readonly setup: CsvHelperSetup;
  readonly bytes: MessagePort;
  readonly database: Database;
  answer(seq: number, range: HelperRange): Promise<CsvHelperReply>;
}

async function openSession(setup: CsvHelperSetup, bytes: MessagePort): Promise<Session> {
  const database = await openDatabase({ databaseUrl: setup.databaseUrl, pgliteDir: '', poolSize: 1 });
  try {
    const shape = new RepeatShape();
    for (const [key, count] of setup.repeatCounts) shape.noteKey(key, count);
    const form = buildFormModel(setup.formJson);
    const render = setup.kind === 'xlsx' ? sheetRenderer(setup, form, shape) : setup.kind === 'sav' ? savRenderer(setup, form, shape) : csvRenderer(setup, form, shape);
    const scope = recordScope(setup.facts);
    const reader = new PageReader(database.db, form);
    /** Renders a range: its bytes go into the bytes channel (moved, not copied), then it is told ready. */
    const answer = async (seq: number, range: HelperRange): Promise<CsvHelperReply> => {
      try {
        const rows = await listExportRecords(database.db, scope, range.after, { throughId: range.through }, setup.facts.withAttachments, reader.buffers);
        const page = await reader.page(rows);
        const { chunks, sheets } = render(page, range);
        bytes.postMessage({ seq, chunks } satisfies CsvHelperBytes, chunks.map((chunk) => chunk.buffer as ArrayBuffer));
        return sheets ? { seq, records: page.count, sheets } : { seq, records: page.count };
      } catch (error) {
        return { seq, error: error instanceof Error ? error.message : String(error) };
      }
    };
    return { setup, bytes, database, answer };
  } catch (error) {
    await database.close();
    throw error;
  }
}

/**
 * Serves one export after another (the thread is kept between them, csv-threads.ts): `begin`
 * opens an export's session, its ranges follow, `end` closes it (its connection too), `close`
 * ends the thread. Messages are handled in order, each after the one before it has begun.
 */
function serve(port: MessagePort): void {
  let session: Promise<Session> | undefined;
  /** The last step of the sessions' chain: a session begins only once the one before it closed. */
  let chain: Promise<unknown> = Promise.resolve();
  port.on('message', (request: CsvHelperRequest) => {
    if ('begin' in request) {
      const opened = chain.then(() => openSession(request.begin, request.bytes));
      opened.catch(() => undefined); // its ranges answer with the failure
      session = opened;
      chain = opened.catch(() => undefined);
      return;
    }
    if ('end' in request || 'close' in request) {
      const ending = session;
      session = undefined;
      chain = chain.then(async () => {
        const open = await ending?.catch(() => undefined);
        if (open) {
          await open.database.close().catch(() => undefined);
          open.bytes.close();
        }
      });
      if ('close' in request) void chain.finally(() => port.close());
      return;
    }
    const current = session;
    const { seq, range } = request;
    const reply = current
      ? current.then(
          (open) => open.answer(seq, range),
          (error: unknown): CsvHelperReply => ({ seq, error: error instanceof Error ? error.message : String(error) }),
        )
      : Promise.resolve<CsvHelperReply>({ seq, error: 'no export has begun' });
    void reply.then((answer) => port.postMessage(answer));
  });
}

if (parentPort) serve(parentPort);
