// OSM export (onadata-data.md §3.7): the `.osm` files that the records' osm questions name,
// combined into one OpenStreetMap document, records in `_id` order and, within a record, in the
// order of the form's osm questions. Files are read a page of records at a time.
import type { AppDeps } from '../../context.ts';
import { combineOsmFiles } from '../../lib/writers/osm/combine.ts';
import type { ExportRecord } from '../../lib/writers/layout/types.ts';
import { listOsmAttachments } from './osm-repository.ts';
import type { ExportSource } from './source.ts';

const RECORDS_PER_QUERY = 200;
const utf8 = new TextDecoder('utf-8');

/** The file names a record's osm answers give, in question order (repeat items included). */
function osmFileNames(record: ExportRecord, paths: ReadonlySet<string>, out: string[]): void {
  for (const [key, value] of Object.entries(record)) {
    if (Array.isArray(value)) {
      for (const item of value) if (typeof item === 'object' && item !== null) osmFileNames(item as ExportRecord, paths, out);
    } else if (paths.has(key) && typeof value === 'string' && value !== '') {
      out.push(value);
    }
  }
}

interface Wanted {
  id: number;
  names: string[];
}

async function* filesOf(deps: AppDeps, source: ExportSource): AsyncIterable<string> {
  const paths = new Set(source.form.osmQuestions.map((q) => q.path));
  if (paths.size === 0) return;
  let batch: Wanted[] = [];
  const flush = async function* (): AsyncIterable<string> {
    const ids = batch.map((w) => w.id);
    const names = [...new Set(batch.flatMap((w) => w.names))];
    const found = await listOsmAttachments(deps.db, ids, names);
    const byRecord = new Map<number, Map<string, Uint8Array>>();
    for (const file of found) {
      const files = byRecord.get(file.instance_id) ?? new Map<string, Uint8Array>();
      files.set(file.name, file.data);
      byRecord.set(file.instance_id, files);
    }
    for (const wanted of batch) {
      for (const name of wanted.names) {
        const data = byRecord.get(wanted.id)?.get(name);
        if (data) yield utf8.decode(data);
      }
    }
    batch = [];
  };
  for await (const record of source.records()) {
    const names: string[] = [];
    osmFileNames(record, paths, names);
    const id = record['_id'];
    if (names.length === 0 || typeof id !== 'number') continue;
    batch.push({ id, names });
    if (batch.length >= RECORDS_PER_QUERY) yield* flush();
  }
  if (batch.length > 0) yield* flush();
}

export function osmExport(deps: AppDeps, source: ExportSource): AsyncIterable<Uint8Array> {
  return combineOsmFiles(filesOf(deps, source));
}
