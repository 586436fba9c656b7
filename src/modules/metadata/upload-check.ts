// What a form's media file or supporting document may be. Files uploaded here are served back to
// devices, Enketo and browsers, so each is judged by its content as well as its name: an image
// must start like one, a CSV or XML file must be UTF-8 text (XML well-formed, with no document
// type declaration), GeoJSON must parse. The content type served later is the one found here,
// never the uploader's claim.
import { SaxesParser } from 'saxes';

export type UploadKind = 'media' | 'supporting_doc';

interface FileType {
  readonly contentType: string;
  /** Whether the bytes are plausibly this type. */
  readonly looksRight: (bytes: Uint8Array) => boolean;
}

function startsWith(bytes: Uint8Array, prefix: readonly number[], at = 0): boolean {
  if (bytes.byteLength < at + prefix.length) return false;
  return prefix.every((b, i) => bytes[at + i] === b);
}

const ascii = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));

function utf8Text(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

function wellFormedXml(bytes: Uint8Array): boolean {
  const text = utf8Text(bytes);
  if (text === undefined) return false;
  const parser = new SaxesParser({ xmlns: false });
  let fine = true;
  let root = false;
  parser.on('error', () => (fine = false));
  // A DOCTYPE could declare entities for whichever reader opens the file next: refused outright.
  parser.on('doctype', () => (fine = false));
  parser.on('opentag', () => (root = true));
  try {
    parser.write(text).close();
  } catch {
    return false;
  }
  return fine && root;
}

function jsonObject(bytes: Uint8Array): boolean {
  const text = utf8Text(bytes);
  if (text === undefined) return false;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null;
  } catch {
    return false;
  }
}

const isoMedia = (bytes: Uint8Array): boolean => startsWith(bytes, ascii('ftyp'), 4);
const zipped = (bytes: Uint8Array): boolean => startsWith(bytes, [0x50, 0x4b, 0x03, 0x04]);

const TYPES: Readonly<Record<string, FileType>> = {
  csv: { contentType: 'text/csv', looksRight: (b) => utf8Text(b) !== undefined },
  xml: { contentType: 'text/xml', looksRight: wellFormedXml },
  geojson: { contentType: 'application/geo+json', looksRight: jsonObject },
  json: { contentType: 'application/json', looksRight: jsonObject },
  png: { contentType: 'image/png', looksRight: (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  jpg: { contentType: 'image/jpeg', looksRight: (b) => startsWith(b, [0xff, 0xd8, 0xff]) },
  jpeg: { contentType: 'image/jpeg', looksRight: (b) => startsWith(b, [0xff, 0xd8, 0xff]) },
  gif: { contentType: 'image/gif', looksRight: (b) => startsWith(b, ascii('GIF87a')) || startsWith(b, ascii('GIF89a')) },
  mp4: { contentType: 'video/mp4', looksRight: isoMedia },
  '3gp': { contentType: 'video/3gpp', looksRight: isoMedia },
  m4a: { contentType: 'audio/mp4', looksRight: isoMedia },
  mp3: { contentType: 'audio/mpeg', looksRight: (b) => startsWith(b, ascii('ID3')) || (b[0] === 0xff && ((b[1] ?? 0) & 0xe0) === 0xe0) },
  wav: { contentType: 'audio/wav', looksRight: (b) => startsWith(b, ascii('RIFF')) && startsWith(b, ascii('WAVE'), 8) },
  ogg: { contentType: 'audio/ogg', looksRight: (b) => startsWith(b, ascii('OggS')) },
  pdf: { contentType: 'application/pdf', looksRight: (b) => startsWith(b, ascii('%PDF-')) },
  docx: { contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', looksRight: zipped },
  xlsx: { contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', looksRight: zipped },
  pptx: { contentType: 'application/vnd.openxmlformats-officedocument.presentationml.presentation', looksRight: zipped },
  odt: { contentType: 'application/vnd.oasis.opendocument.text', looksRight: zipped },
  ods: { contentType: 'application/vnd.oasis.opendocument.spreadsheet', looksRight: zipped },
  odp: { contentType: 'application/vnd.oasis.opendocument.presentation', looksRight: zipped },
  // Recorded by devices as answers (never form media): named here so that an attachment posted as
  // application/octet-stream is still stored and served as what it is.
  amr: { contentType: 'audio/amr', looksRight: (b) => startsWith(b, ascii('#!AMR')) },
  webm: { contentType: 'video/webm', looksRight: (b) => startsWith(b, [0x1a, 0x45, 0xdf, 0xa3]) },
  mov: { contentType: 'video/quicktime', looksRight: isoMedia },
};

/** Types recognised by their first bytes alone (text types need the whole file to be judged). */
const SIGNED_TYPES: ReadonlySet<string> = new Set([
  'png', 'jpg', 'jpeg', 'gif', 'mp4', '3gp', 'm4a', 'mp3', 'wav', 'ogg', 'pdf', 'docx', 'xlsx', 'pptx', 'odt', 'ods', 'odp', 'amr', 'webm', 'mov',
]);

/** How many first bytes typeShownBy needs. */
export const SIGNATURE_BYTES = 16;

/**
 * The content type that a file's name and first bytes agree on, for types that show in their
 * first bytes (images, audio, video, PDF, office documents); undefined when they do not agree or
 * the type cannot be told from the start of the file.
 */
export function typeShownBy(fileName: string, head: Uint8Array): string | undefined {
  const name = displayFileName(fileName);
  const dot = name.lastIndexOf('.');
  const extension = dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
  const type = TYPES[extension];
  if (!type || !SIGNED_TYPES.has(extension)) return undefined;
  return type.looksRight(head.subarray(0, SIGNATURE_BYTES)) ? type.contentType : undefined;
}

/**
 * Extensions per kind. Form media follows what ODK Collect and Enketo use (images, audio and video
 * for labels and choices; CSV, XML and GeoJSON for external choices and pulldata); onadata's list
 * lacks audio, which forms with audio choices need.
 */
export const ALLOWED_EXTENSIONS: Readonly<Record<UploadKind, readonly string[]>> = {
  media: ['csv', 'xml', 'geojson', 'png', 'jpg', 'jpeg', 'gif', 'mp4', '3gp', 'm4a', 'mp3', 'wav', 'ogg'],
  supporting_doc: ['csv', 'docx', 'geojson', 'jpeg', 'jpg', 'json', 'ods', 'odp', 'odt', 'pdf', 'png', 'pptx', 'xlsx'],
};

/** The name as shown and stored: its last path segment, without control characters. */
export function displayFileName(name: string): string {
  const last = name.replace(/\\/g, '/').split('/').pop() ?? '';
  return last.replace(/[\u0000-\u001f\u007f]/g, '').trim();
}

export type UploadVerdict = { readonly ok: true; readonly name: string; readonly contentType: string } | { readonly ok: false; readonly message: string };

export function checkUpload(kind: UploadKind, fileName: string, bytes: Uint8Array): UploadVerdict {
  const name = displayFileName(fileName);
  const dot = name.lastIndexOf('.');
  const extension = dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
  const allowed = ALLOWED_EXTENSIONS[kind];
  if (name === '' || name === '.' || name === '..') return { ok: false, message: 'The uploaded file has no name.' };
  if (name.length > 255) return { ok: false, message: 'The file name is longer than 255 characters.' };
  const type = TYPES[extension];
  if (!type || !allowed.includes(extension)) {
    return { ok: false, message: `"${name}" is not an allowed file type; allowed: ${allowed.join(', ')}.` };
  }
  if (bytes.byteLength === 0) return { ok: false, message: `The uploaded file "${name}" is empty.` };
  if (!type.looksRight(bytes)) return { ok: false, message: `The uploaded file "${name}" is not a valid .${extension} file.` };
  return { ok: true, name, contentType: type.contentType };
}
