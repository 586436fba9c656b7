// The attachments export (`zip`, onadata-data.md §3.8): every file attached to the records in
// scope, in one zip, each under `<id_string>/<record _uuid>/<file name>` so that files of the same
// name from different records stay apart and each can be matched with its row of a CSV export.
// Records are read a page at a time and files one at a time: memory holds one file, whatever the
// number of records.
import type { AppDeps } from '../../context.ts';
import { ZipWriter } from '../../exports/zip/zip-writer.ts';
import { getBlob } from '../blobs/repository.ts';
import { listRecordAttachments, type RecordAttachment } from './repository.ts';
import type { ExportSource } from './source.ts';

const RECORDS_PER_QUERY = 200;
/** Text files are deflated; anything else (photos, audio, video, documents) is compressed already and stored. */
const TEXT_TYPES = /^text\/|xml|json|csv|geo/i;
const DEFLATE_LEVEL = 6;

/** A path segment safe to unpack anywhere: no directories, no `..`, no control characters. */
function segment(name: string, fallback: string): string {
  const base = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1);
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, '_').trim();
  return clean === '' || clean === '.' || clean === '..' ? fallback : clean;
}

interface Pending {
  readonly uuid: string;
  readonly id: number;
}

export async function* attachmentsZip(deps: AppDeps, source: ExportSource, idString: string, now: Date): AsyncGenerator<Uint8Array, void, undefined> {
  const zip = new ZipWriter({ level: DEFLATE_LEVEL, date: now });
  const folder = segment(idString, 'form');
  let finished = false;

  async function* write(records: readonly Pending[]): AsyncGenerator<Uint8Array, void, undefined> {
    const attachments = await listRecordAttachments(deps.db, records.map((r) => r.id));
    const byRecord = new Map<number, RecordAttachment[]>();
    for (const attachment of attachments) {
      const list = byRecord.get(attachment.instance_id) ?? [];
      list.push(attachment);
      byRecord.set(attachment.instance_id, list);
    }
    for (const record of records) {
      const used = new Set<string>();
      for (const attachment of byRecord.get(record.id) ?? []) {
        // A file missing from storage is left out, as onadata leaves it out.
        const blob = await getBlob(deps.db, attachment.blob);
        if (!blob) continue;
        let name = segment(attachment.name, `attachment-${attachment.id}`);
        if (used.has(name)) name = `${attachment.id}-${name}`;
        used.add(name);
        const path = `${folder}/${segment(record.uuid, String(record.id))}/${name}`;
        if (TEXT_TYPES.test(attachment.mimetype)) {
          const entry = zip.openStreamed(path);
          await entry.write(blob.data);
          await entry.close();
        } else {
          zip.addStored(path, blob.data);
        }
        yield* zip.take();
      }
    }
  }

  try {
    let batch: Pending[] = [];
    for await (const record of source.records()) {
      const id = record['_id'];
      const uuid = record['_uuid'];
      if (typeof id !== 'number') continue;
      batch.push({ id, uuid: typeof uuid === 'string' ? uuid : '' });
      if (batch.length >= RECORDS_PER_QUERY) {
        yield* write(batch);
        batch = [];
      }
    }
    if (batch.length > 0) yield* write(batch);
    yield zip.finish();
    finished = true;
  } finally {
    if (!finished) await zip.dispose();
  }
}
