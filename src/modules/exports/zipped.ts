// csvzip and savzip: one file per section in a zip (§3.4, §3.5). Zip entries are written one
// after another, so each section is its own pass over the records: memory stays at one page
// of records plus one chunk, whatever the number of records.
import { Readable } from 'node:stream';
import { ZipArchive } from 'archiver';
import { csvChunks } from '../../exports/csv/writer.ts';
import { planSections, sectionCellText, type SectionLayout, type SectionedLayout } from '../../exports/layout/sections.ts';
import { savSection } from '../../exports/layout/sav-columns.ts';
import { savChunks } from '../../exports/sav/index.ts';
import type { Cell } from '../../exports/layout/types.ts';
import type { ExportSource } from './source.ts';

/** Rows of one section, produced by a fresh pass over the records. */
async function* sectionRows<T>(source: ExportSource, layout: SectionedLayout, section: SectionLayout, map: (cells: Cell[]) => T): AsyncGenerator<T> {
  const builder = layout.rowBuilder(section);
  for await (const record of source.records()) {
    for (const row of builder.rows(record)) yield map(row);
  }
}

/** A zip whose entries are produced lazily, in order. */
function zipOf(entries: ReadonlyArray<{ name: string; chunks: () => AsyncIterable<Uint8Array> }>, now: Date): AsyncIterable<Uint8Array> {
  const archive = new ZipArchive({ zlib: { level: 6 } });
  for (const entry of entries) {
    // Readable.from pulls lazily: a section's pass starts only when the archiver reaches it.
    archive.append(Readable.from(lazy(entry.chunks)), { name: entry.name, date: now });
  }
  void archive.finalize().catch((error: unknown) => archive.destroy(error instanceof Error ? error : new Error(String(error))));
  return archive;
}

async function* lazy(make: () => AsyncIterable<Uint8Array>): AsyncGenerator<Buffer> {
  for await (const chunk of make()) yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

function sectionText(cell: Cell, section: SectionLayout, index: number): string {
  const column = section.columns[index];
  return column ? sectionCellText(cell, column) : '';
}

export async function csvZip(source: ExportSource, now: Date): Promise<AsyncIterable<Uint8Array>> {
  const osmTagKeys = await source.osmTagKeys();
  const layout = planSections(source.form, source.options, { baseUrl: source.baseUrl }, { parentNames: 'path' }, osmTagKeys);
  return zipOf(
    layout.sections.map((section) => ({
      name: `${section.fileName}.csv`,
      chunks: () =>
        csvChunks(
          section.headerRows,
          sectionRows(source, layout, section, (cells) => cells.map((cell, i) => sectionText(cell, section, i))),
          { bom: source.options.winExcelUtf8 },
        ),
    })),
    now,
  );
}

export async function savZip(source: ExportSource, now: Date): Promise<AsyncIterable<Uint8Array>> {
  const osmTagKeys = await source.osmTagKeys();
  // onadata always drops group names from SPSS variable names.
  const options = { ...source.options, removeGroupName: true, groupDelimiter: '/' as const, includeLabels: false, includeLabelsOnly: false };
  const layout = planSections(source.form, options, { baseUrl: source.baseUrl }, { parentNames: 'path' }, osmTagKeys);
  return zipOf(
    layout.sections.map((section) => {
      const sav = savSection(section, source.form, options);
      return {
        name: `${section.fileName}.sav`,
        chunks: () => savChunks(sav.variables, sectionRows(source, layout, section, sav.row), { fileLabel: 'File exported by Ona', now }),
      };
    }),
    now,
  );
}
