// Combines OpenStreetMap XML files (the `.osm` attachments of `osm` questions) into one OSM
// document: the first usable file's <osm> element, then the content of every file's <osm> element
// in turn. Pure: files in, UTF-8 chunks out. Files are untrusted: saxes expands no entities and
// any DOCTYPE is refused; a file that is not well-formed OSM XML is left out whole (each file is
// checked completely before any of it is written, so a bad file never leaves half an element).

import { SaxesParser, type SaxesTagPlain } from 'saxes';

const XML_DECLARATION = "<?xml version='1.0' encoding='utf-8'?>\n";
const CHUNK_BYTES = 64 * 1024;
const encoder = new TextEncoder();

class RefusedXml extends Error {}

function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttribute(text: string): string {
  return escapeText(text).replace(/"/g, '&quot;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;');
}

function startTag(tag: SaxesTagPlain, selfClosing: boolean): string {
  let out = `<${tag.name}`;
  for (const [name, value] of Object.entries(tag.attributes)) out += ` ${name}="${escapeAttribute(value)}"`;
  return out + (selfClosing ? '/>' : '>');
}

export interface OsmFileParts {
  /** The root start tag as written, e.g. `<osm version="0.6" generator="…">`. */
  rootTag: string;
  /** Everything between the root's start and end tags, re-serialised. */
  content: string;
}

/**
 * One OSM file split into its root tag and its content; undefined when the file is not
 * well-formed XML, declares a DOCTYPE, or its root element is not <osm>.
 */
export function parseOsmFile(xml: string): OsmFileParts | undefined {
  const parser = new SaxesParser<{ xmlns: false; position: false }>({ xmlns: false, position: false });
  let depth = 0;
  let rootTag = '';
  let content = '';
  // A start tag is held back until we know whether the element is empty (`<nd/>` rather than `<nd></nd>`).
  let pending: SaxesTagPlain | undefined;
  const flush = (): void => {
    if (pending) content += startTag(pending, false);
    pending = undefined;
  };
  parser.on('doctype', () => {
    throw new RefusedXml('DOCTYPE');
  });
  parser.on('error', (error) => {
    throw new RefusedXml(error.message);
  });
  parser.on('opentag', (tag) => {
    depth += 1;
    if (depth === 1) {
      if (tag.name !== 'osm') throw new RefusedXml('root is not osm');
      rootTag = startTag(tag, false);
      return;
    }
    flush();
    pending = tag;
  });
  parser.on('closetag', (tag) => {
    depth -= 1;
    if (depth === 0) {
      flush();
      return;
    }
    if (pending) {
      content += startTag(pending, true);
      pending = undefined;
    } else {
      content += `</${tag.name}>`;
    }
  });
  parser.on('text', (text) => {
    if (depth === 0) return;
    flush();
    content += escapeText(text);
  });
  parser.on('cdata', (text) => {
    if (depth === 0) return;
    flush();
    content += escapeText(text);
  });
  try {
    parser.write(xml.replace(/^\uFEFF/, '')).close();
  } catch (error) {
    if (error instanceof RefusedXml) return undefined;
    throw error;
  }
  return rootTag ? { rootTag, content } : undefined;
}

/**
 * The combined document, in chunks of about 64 KiB; no chunks at all when no file is usable
 * (onadata answers an empty body then). Files are pulled one at a time.
 */
export async function* combineOsmFiles(files: AsyncIterable<string> | Iterable<string>): AsyncIterable<Uint8Array> {
  let started = false;
  let buffer = '';
  for await (const xml of files) {
    const parts = parseOsmFile(xml);
    if (!parts) continue;
    if (!started) {
      buffer += XML_DECLARATION + parts.rootTag;
      started = true;
    }
    buffer += parts.content;
    if (buffer.length >= CHUNK_BYTES) {
      yield encoder.encode(buffer);
      buffer = '';
    }
  }
  if (!started) return;
  yield encoder.encode(buffer + '</osm>\n');
}
