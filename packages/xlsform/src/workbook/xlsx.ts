// A direct .xlsx/.xlsm reader: the zip's workbook, shared strings, styles (to
// recognise date cells) and worksheets, scanned as text. It reads only the
// cells that exist, whatever range a sheet declares, and is several times
// faster than a general-purpose spreadsheet library on big forms.
import type { RawCell, RawGrid } from './grid.ts';
import { BUILTIN_DATE_FORMATS, isDateFormat } from './number-formats.ts';
import { ZipError, type ZipArchive } from './zip.ts';

export interface XlsxSheet {
  name: string;
  grid: () => RawGrid;
}

export interface XlsxBook {
  sheets: XlsxSheet[];
  date1904: boolean;
}

const decoder = new TextDecoder('utf-8');

const PREFIXED_TAG = /<(\/?)[A-Za-z_][\w.-]*:/g;
const PREFIXED_ROOT = /<[A-Za-z_][\w.-]*:(?:worksheet|sst|styleSheet|workbook)\b/;

function entryText(archive: ZipArchive, name: string): string | undefined {
  const bytes = archive.read(name) ?? archive.read(name.replace(/^\//, ''));
  if (!bytes) return undefined;
  const xml = decoder.decode(bytes);
  // Some writers prefix the spreadsheet namespace (<x:row>, <x:c>); drop element prefixes.
  return PREFIXED_ROOT.test(xml.slice(0, 4096)) ? xml.replace(PREFIXED_TAG, '<$1') : xml;
}

const ENTITY = /&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g;
const OOXML_ESCAPE = /_x([0-9a-fA-F]{4})_/g;

export function unescapeXml(text: string): string {
  // XML parsers normalise line ends before anything else.
  let out = text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
  if (out.includes('&')) {
    out = out.replace(ENTITY, (_m, e: string) => {
      switch (e) {
        case 'amp':
          return '&';
        case 'lt':
          return '<';
        case 'gt':
          return '>';
        case 'quot':
          return '"';
        case 'apos':
          return "'";
        default:
          return String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
      }
    });
  }
  if (out.includes('_x')) out = out.replace(OOXML_ESCAPE, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return out;
}

function attr(tag: string, name: string): string | undefined {
  const re = new RegExp(`\\s${name}="([^"]*)"`);
  const m = re.exec(tag);
  return m ? unescapeXml(m[1] ?? '') : undefined;
}

/** Text of every <t> in a run of XML (rich text runs joined), skipping phonetic (<rPh>) runs. */
function textRuns(xml: string): string {
  // The usual shared string is a single <t>...</t>.
  if (xml.startsWith('<t') && xml.endsWith('</t>') && xml.indexOf('<t', 2) < 0) {
    const open = xml.indexOf('>');
    if (open > 0 && xml.charCodeAt(open - 1) !== 47) return unescapeXml(xml.slice(open + 1, xml.length - 4));
  }
  let source = xml;
  if (source.includes('<rPh')) {
    let kept = '';
    let pos = 0;
    for (;;) {
      const start = source.indexOf('<rPh', pos);
      if (start < 0) break;
      kept += source.slice(pos, start);
      const end = source.indexOf('</rPh>', start);
      pos = end < 0 ? source.length : end + 6;
    }
    source = kept + source.slice(pos);
  }
  let out = '';
  for (const t of elements(source, 't')) out += t.body ?? '';
  return unescapeXml(out);
}

function sharedStrings(xml: string | undefined): string[] {
  if (!xml) return [];
  const out: string[] = [];
  for (const si of elements(xml, 'si')) out.push(si.body === undefined ? '' : textRuns(si.body));
  return out;
}

/** For each cell style index: does its number format show a date or time? */
function dateStyles(xml: string | undefined): boolean[] {
  if (!xml) return [];
  const custom = new Map<number, string>();
  const fmtRe = /<numFmt\b[^>]*>/g;
  for (let m = fmtRe.exec(xml); m; m = fmtRe.exec(xml)) {
    const id = Number(attr(m[0], 'numFmtId'));
    const code = attr(m[0], 'formatCode');
    if (code !== undefined) custom.set(id, code);
  }
  const xfs = /<cellXfs\b[^>]*>([\s\S]*?)<\/cellXfs>/.exec(xml)?.[1] ?? '';
  const out: boolean[] = [];
  const xfRe = /<xf\b[^>]*>/g;
  for (let m = xfRe.exec(xfs); m; m = xfRe.exec(xfs)) {
    const id = Number(attr(m[0], 'numFmtId') ?? 0);
    const code = custom.get(id);
    out.push(code !== undefined ? isDateFormat(code) : BUILTIN_DATE_FORMATS.has(id));
  }
  return out;
}

function columnIndex(ref: string): number {
  let col = 0;
  for (let i = 0; i < ref.length; i++) {
    const c = ref.charCodeAt(i);
    if (c < 65 || c > 90) break;
    col = col * 26 + (c - 64);
  }
  return col - 1;
}

/** The text of a cell's <v> element, found without a regex (it runs once per cell). */
function valueText(inner: string): string | undefined {
  const open = inner.indexOf('<v');
  if (open < 0) return undefined;
  const next = inner.charCodeAt(open + 2);
  if (next !== 62 && next !== 32) return undefined;
  const start = inner.indexOf('>', open);
  const end = inner.indexOf('</v>', start);
  if (start < 0 || end < 0) return undefined;
  return inner.slice(start + 1, end);
}

/** A cell attribute's raw value (cell attributes never need unescaping). */
function attrValue(attrs: string, prefix: string): string | undefined {
  const at = attrs.indexOf(prefix);
  if (at < 0) return undefined;
  const start = at + prefix.length;
  const end = attrs.indexOf('"', start);
  return end < 0 ? undefined : attrs.slice(start, end);
}


function cellValue(attrs: string, inner: string, strings: string[], dates: boolean[]): RawCell | undefined {
  const type = attrValue(attrs, ' t="') ?? 'n';
  if (type === 'inlineStr') {
    const open = inner.indexOf('<is>');
    const close = inner.indexOf('</is>', open);
    return open >= 0 && close >= 0 ? textRuns(inner.slice(open + 4, close)) : undefined;
  }
  const raw = valueText(inner);
  if (raw === undefined) return undefined;
  if (type === 's') return strings[Number(raw)] ?? '';
  if (type === 'str' || type === 'e') return unescapeXml(raw);
  // ISO 8601 date cells (strict OOXML) print as Python prints a datetime.
  if (type === 'd') return raw.replace('T', ' ').replace(/(\.0+)?Z?$/, '');
  if (type === 'b') return raw === '1' || raw === 'true';
  return numberCell(attrs, raw, dates);
}

/** A number cell's value: a date when its style is one of the workbook's date formats. */
function numberCell(attrs: string, raw: string, dates: boolean[]): RawCell {
  const style = attrValue(attrs, ' s="');
  const n = Number(raw);
  return style !== undefined && dates[Number(style)] === true ? { date: n } : n;
}

/**
 * The value of a cell whose content is the usual single element: `<is><t>text</t></is>` for an
 * inline string, `<v>value</v>` otherwise; undefined for anything else (cellValue then reads it).
 * Read in place, without slicing the cell's content first: this runs once per cell.
 */
function plainCellValue(data: string, type: string, attrs: string, from: number, to: number, strings: string[], dates: boolean[]): RawCell | undefined {
  if (type === 'inlineStr') {
    if (to - from < 16 || !data.startsWith('<is><t>', from) || !data.startsWith('</t></is>', to - 9)) return undefined;
    const text = data.slice(from + 7, to - 9);
    return text.indexOf('<') < 0 ? unescapeXml(text) : undefined;
  }
  if (!data.startsWith('<v>', from)) return undefined;
  const end = data.indexOf('</v>', from + 3);
  if (end < 0 || end + 4 !== to) return undefined;
  const raw = data.slice(from + 3, end);
  if (type === 's') return strings[Number(raw)] ?? '';
  return type === 'n' ? numberCell(attrs, raw, dates) : undefined;
}

/**
 * Visits only cells with content; self-closing (styled but empty) cells, which
 * some files have by the hundred thousand, cost one indexOf each. Needs every
 * cell to carry its reference (r="B7"); returns undefined otherwise.
 */
function worksheetGridByReference(data: string, strings: string[], dates: boolean[]): RawGrid | undefined {
  const grid: RawGrid = [];
  let pos = 0;
  for (;;) {
    const start = data.indexOf('<c', pos);
    if (start < 0) return grid;
    const next = data.charCodeAt(start + 2);
    const tagEnd = data.indexOf('>', start);
    if (tagEnd < 0) return grid;
    pos = tagEnd + 1;
    if (next !== 32 && next !== 62) continue; // <col, <cfRule...
    if (data.charCodeAt(tagEnd - 1) === 47) continue; // <c .../>: styled but empty
    const attrs = data.slice(start + 2, tagEnd);
    const ref = attrValue(attrs, ' r="');
    if (ref === undefined) return undefined;
    const close = data.indexOf('</c>', tagEnd);
    if (close < 0) return grid;
    pos = close + 4;
    const type = attrValue(attrs, ' t="') ?? 'n';
    const value = plainCellValue(data, type, attrs, tagEnd + 1, close, strings, dates) ?? cellValue(attrs, data.slice(tagEnd + 1, close), strings, dates);
    if (value === undefined) continue;
    let split = 0;
    while (split < ref.length && ref.charCodeAt(split) >= 65) split++;
    const row = Number(ref.slice(split)) - 1;
    const col = columnIndex(ref);
    if (!(row >= 0)) return undefined;
    const cells = (grid[row] ??= []);
    cells[col] = value;
  }
}

/** Each `<tag ...>...</tag>` (or `<tag .../>`) in order, found with indexOf so malformed input stays linear. */
function* elements(xml: string, tag: string): Generator<{ attrs: string; body: string | undefined }> {
  const open = `<${tag}`;
  const close = `</${tag}>`;
  let pos = 0;
  for (;;) {
    const start = xml.indexOf(open, pos);
    if (start < 0) return;
    const after = xml.charCodeAt(start + open.length);
    const tagEnd = xml.indexOf('>', start);
    if (tagEnd < 0) return;
    pos = tagEnd + 1;
    if (after !== 32 && after !== 62 && after !== 47) continue; // a longer tag name
    const attrs = xml.slice(start + open.length, tagEnd);
    if (xml.charCodeAt(tagEnd - 1) === 47) {
      yield { attrs, body: undefined };
      continue;
    }
    const end = xml.indexOf(close, tagEnd);
    const bodyEnd = end < 0 ? xml.length : end;
    yield { attrs, body: xml.slice(tagEnd + 1, bodyEnd) };
    pos = end < 0 ? xml.length : end + close.length;
  }
}

function worksheetGrid(xml: string, strings: string[], dates: boolean[]): RawGrid {
  const dataStart = xml.indexOf('<sheetData');
  if (dataStart < 0) return [];
  const dataEnd = xml.indexOf('</sheetData>', dataStart);
  const data = xml.slice(dataStart, dataEnd < 0 ? xml.length : dataEnd);
  const fast = worksheetGridByReference(data, strings, dates);
  if (fast) return fast;
  // Cells without references: positions come from their order.
  const grid: RawGrid = [];
  let nextRow = 0;
  for (const row of elements(data, 'row')) {
    const rowAttr = /\sr="(\d+)"/.exec(row.attrs);
    const r = rowAttr ? Number(rowAttr[1]) - 1 : nextRow;
    nextRow = r + 1;
    if (!row.body) continue;
    const cells: Array<RawCell | undefined> = [];
    let nextCol = 0;
    for (const cell of elements(row.body, 'c')) {
      const ref = attrValue(cell.attrs, ' r="');
      const c = ref !== undefined ? columnIndex(ref) : nextCol;
      nextCol = c + 1;
      if (!cell.body) continue;
      const value = cellValue(cell.attrs, cell.body, strings, dates);
      if (value !== undefined) cells[c] = value;
    }
    grid[r] = cells;
  }
  return grid;
}

/** Resolves a relationship target against the xl/ folder. */
function partPath(target: string): string {
  if (target.startsWith('/')) return target.slice(1);
  const parts = `xl/${target}`.split('/');
  const out: string[] = [];
  for (const p of parts) {
    if (p === '..') out.pop();
    else if (p !== '.') out.push(p);
  }
  return out.join('/');
}

export function readXlsxBook(entries: ZipArchive): XlsxBook {
  const workbook = entryText(entries, 'xl/workbook.xml');
  if (!workbook) {
    // A workbook part elsewhere (declared in the content types) is unusual but valid.
    const types = entryText(entries, '[Content_Types].xml') ?? '';
    const declared = /PartName="([^"]+)"[^>]*ContentType="application\/vnd\.[^"]*\.(?:sheet|template)\.main(?:\.macroEnabled)?(?:\.main)?\+xml"/.test(types);
    throw new ZipError('the archive has no xl/workbook.xml', declared);
  }
  const rels = entryText(entries, 'xl/_rels/workbook.xml.rels') ?? '';
  const targets = new Map<string, string>();
  const relRe = /<Relationship\b[^>]*>/g;
  for (let m = relRe.exec(rels); m; m = relRe.exec(rels)) {
    const id = attr(m[0], 'Id');
    const target = attr(m[0], 'Target');
    if (id !== undefined && target !== undefined) targets.set(id, target);
  }
  let strings: string[] | undefined;
  let dates: boolean[] | undefined;
  const sheets: XlsxSheet[] = [];
  const sheetRe = /<(?:\w+:)?sheet\b[^>]*>/g;
  for (let m = sheetRe.exec(workbook); m; m = sheetRe.exec(workbook)) {
    const name = attr(m[0], 'name') ?? '';
    const id = /\s(?:\w+:)?id="([^"]*)"/.exec(m[0])?.[1];
    const target = id === undefined ? undefined : targets.get(id);
    sheets.push({
      name,
      grid: () => {
        if (target === undefined) return [];
        const xml = entryText(entries, partPath(target));
        if (xml === undefined) return [];
        strings ??= sharedStrings(entryText(entries, 'xl/sharedStrings.xml'));
        dates ??= dateStyles(entryText(entries, 'xl/styles.xml'));
        return worksheetGrid(xml, strings, dates);
      },
    });
  }
  const date1904 = /<workbookPr\b[^>]*\sdate1904="(1|true)"/.test(workbook);
  return { sheets, date1904 };
}
