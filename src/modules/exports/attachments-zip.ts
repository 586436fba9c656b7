// The attachments export (`zip`, onadata-data.md §3.8): every file attached to the records in
// scope, in one zip, each under `<id_string>/<record _uuid>/<file name>` so that files of the same
// name from different records stay apart and each can be matched with its row of a CSV export.
// The records themselves are not read, and files are read a chunk at a time: memory holds about
// one chunk of storage, whatever the number of records and the size of their files.
import type { AppDeps } from '../../context.ts';
import { ZipWriter } from '../../lib/writers/zip/zip-writer.ts';
import { blobCrc32, findBlob, readBlobChunks } from '../blobs/repository.ts';
import type { ExportSource } from './source.ts';

/** Text files are deflated; anything else (photos, audio, video, documents) is compressed already and stored. */
const TEXT_TYPES = /^text\/|xml|json|csv|geo/i;
const DEFLATE_LEVEL = 6;

/** A path segment safe to unpack anywhere: no directories, no `..`, no control characters. */
function segment(name: string, fallback: string): string {
  const base = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1);
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, '_').trim();
  return clean === '' || clean === '.' || clean === '..' ? fallback : clean;
}

export async function* attachmentsZip(deps: AppDeps, source: ExportSource, idString: string, now: Date): AsyncGenerator<Uint8Array, void, undefined> {
  const zip = new ZipWriter({ level: DEFLATE_LEVEL, date: now });
  const folder = segment(idString, 'form');
  let finished = false;
  // Names already used in the current record's folder (two names may clean to one).
  let record = -1;
  const used = new Set<string>();
  try {
    for await (const page of source.attachmentPages()) {
      for (const file of page.files) {
        // A file missing from storage is left out, as onadata leaves it out.
        const blob = await findBlob(deps.db, file.blob);
        if (!blob) continue;
        if (file.record_id !== record) {
          record = file.record_id;
          used.clear();
        }
        let name = segment(file.name, `attachment-${file.id}`);
        if (used.has(name)) name = `${file.id}-${name}`;
        used.add(name);
        const path = `${folder}/${segment(file.record_uuid, String(file.record_id))}/${name}`;
        const entry = TEXT_TYPES.test(file.mimetype) ? zip.openStreamed(path) : zip.openStored(path, { size: blob.size, crc: await blobCrc32(deps.db, blob) });
        for await (const chunk of readBlobChunks(deps.db, blob)) {
          await entry.write(chunk);
          yield* zip.take();
        }
        await entry.close();
        yield* zip.take();
      }
    }
    yield zip.finish();
    finished = true;
  } finally {
    if (!finished) await zip.dispose();
  }
}
