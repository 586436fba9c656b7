// csvzip and savzip: one file per section in a zip (§3.4, §3.5), all written from one pass over
// the records. The survey's file streams out as it is written; the repeats' files are compressed
// into temporary files beside it and copied out after it. Memory stays at a page of records and
// a chunk per file, whatever the number of records.
import { csvRowEncoder } from '../../lib/writers/csv/writer.ts';
import { planSections, sectionCellText, type SectionLayout } from '../../lib/writers/layout/sections.ts';
import { savSection } from '../../lib/writers/layout/sav-columns.ts';
import { savRowEncoder } from '../../lib/writers/sav/index.ts';
import type { SpoolFactory } from '../../lib/writers/spool.ts';
import type { Cell } from '../../lib/writers/layout/types.ts';
import { zipOnePassChunks } from '../../lib/writers/zip/one-pass.ts';
import { sectionBatches } from './section-pass.ts';
import type { ExportSource } from './source.ts';

/** Deflate level of csvzip: level 1 made the files far larger (bench/RESULTS.md). */
const ZIP_LEVEL = 6;

/**
 * Deflate level of savzip. A .sav case is mostly runs of the same command byte (blank slots of
 * 255-byte strings), on which level 6's lazy matching walks long hash chains, a large share of the
 * export's CPU by `perf`. Level 3 (the fastest levels' greedy matching, longer chains than level 1)
 * costs far less for somewhat larger files (figures: bench/RESULTS.md, 2026-11-28).
 */
const SAV_ZIP_LEVEL = 3;

function sectionText(cell: Cell, section: SectionLayout, index: number): string {
  const column = section.columns[index];
  return column ? sectionCellText(cell, column) : '';
}

export async function csvZip(source: ExportSource, now: Date, spools: SpoolFactory): Promise<AsyncIterable<Uint8Array>> {
  const osmTagKeys = await source.osmTagKeys();
  // CSV files open in spreadsheet programs that evaluate them: onadata's protection stays.
  const layout = planSections(source.form, source.options, { baseUrl: source.baseUrl }, { parentNames: 'path', cellText: 'formula-safe' }, osmTagKeys);
  const files = layout.sections.map((section) => ({
    name: `${section.fileName}.csv`,
    encoder: csvRowEncoder(section.headerRows, { bom: source.options.winExcelUtf8 }),
  }));
  const rowOf = layout.sections.map((section) => (cells: Cell[]) => cells.map((cell, i) => sectionText(cell, section, i)));
  return zipOnePassChunks(files, sectionBatches(source, layout, rowOf), { level: ZIP_LEVEL, date: now, createSpool: spools });
}

export async function savZip(source: ExportSource, now: Date, spools: SpoolFactory): Promise<AsyncIterable<Uint8Array>> {
  const osmTagKeys = await source.osmTagKeys();
  // onadata always drops group names from SPSS variable names.
  const options = { ...source.options, removeGroupName: true, groupDelimiter: '/' as const, includeLabels: false, includeLabelsOnly: false };
  // SPSS has no formulas: strings are written as answered.
  const layout = planSections(source.form, options, { baseUrl: source.baseUrl }, { parentNames: 'path', cellText: 'as-answered' }, osmTagKeys);
  const savs = layout.sections.map((section) => savSection(section, source.form, options));
  const files = layout.sections.map((section, i) => ({
    name: `${section.fileName}.sav`,
    encoder: savRowEncoder(savs[i]?.variables ?? [], { fileLabel: 'File exported by Ona', now }),
  }));
  return zipOnePassChunks(files, sectionBatches(source, layout, savs.map((sav) => sav.row)), { level: SAV_ZIP_LEVEL, date: now, createSpool: spools });
}
