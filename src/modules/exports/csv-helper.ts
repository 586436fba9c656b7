// A helper thread of a flat CSV export (csv-threads.ts): it reads the `_id` ranges it is asked
// for over its own database connection and answers each with the range's CSV lines as UTF-8
// chunks (moved, not copied, to the main thread).
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { buildFormModel } from '../../lib/form-model/model.ts';
import { planFlatLayout } from '../../lib/writers/layout/flat.ts';
import { RepeatShape } from '../../lib/writers/layout/repeat-shape.ts';
import { openDatabase } from '../../platform/db.ts';
import type { CsvHelperBytes, CsvHelperData, CsvHelperReply, CsvHelperRequest } from './csv-threads.ts';
import { CsvEncoder } from '../../lib/writers/csv/writer.ts';
import { flatCsvBytes, flatCsvLines } from './flat-csv.ts';
import { PageReader } from './record-rows.ts';
import { listExportRecords } from './repository.ts';
import { recordScope } from './source.ts';

async function serve(port: MessagePort, setup: CsvHelperData): Promise<void> {
  const database = await openDatabase({ databaseUrl: setup.databaseUrl, pgliteDir: '', poolSize: 1 });
  const shape = new RepeatShape();
  for (const [key, count] of setup.repeatCounts) shape.noteKey(key, count);
  const form = buildFormModel(setup.formJson);
  const layout = planFlatLayout(form, setup.options, shape, { baseUrl: setup.baseUrl }, setup.osmTagKeys);
  const lines = flatCsvLines(layout);
  const scope = recordScope(setup.facts);
  const reader = new PageReader(database.db, form);
  /** Renders a range: its bytes go into the bytes channel (moved, not copied), then it is told ready. */
  const answer = async (seq: number, after: number, through: number): Promise<CsvHelperReply> => {
    try {
      const rows = await listExportRecords(database.db, scope, after, { throughId: through }, setup.facts.withAttachments, reader.buffers);
      const page = await reader.page(rows);
      const chunks = flatCsvBytes(lines, page, new CsvEncoder());
      setup.bytes.postMessage({ seq, chunks } satisfies CsvHelperBytes, chunks.map((chunk) => chunk.buffer as ArrayBuffer));
      return { seq, records: page.count };
    } catch (error) {
      return { seq, error: error instanceof Error ? error.message : String(error) };
    }
  };
  port.on('message', (request: CsvHelperRequest) => {
    if ('close' in request) {
      void database.close().finally(() => {
        setup.bytes.close();
        port.close();
      });
      return;
    }
    void answer(request.seq, request.range.after, request.range.through).then((reply) => port.postMessage(reply));
  });
}

if (parentPort) void serve(parentPort, workerData as CsvHelperData);
