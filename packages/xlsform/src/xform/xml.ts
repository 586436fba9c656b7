// A minimal element tree and an indenting serializer that lays XML out as
// pyxform does (two-space indents; text content kept on the element's line).
import type { XmlOut } from './out.ts';

export interface XmlElement {
  tag: string;
  attrs: Array<[string, string]>;
  children: XmlChild[];
}

/**
 * `raw` holds already-escaped markup (text with <output/> elements); `block`
 * writes whole indented lines itself (the big repetitive parts).
 */
export type XmlChild = XmlElement | { text: string } | { raw: string } | { block: (out: XmlOut) => void };

export function el(tag: string, attrs: Record<string, string | undefined> = {}, children: XmlChild[] = []): XmlElement {
  const list: Array<[string, string]> = [];
  for (const k in attrs) {
    const v = attrs[k];
    if (v !== undefined) list.push([k, v]);
  }
  return { tag, attrs: list, children };
}

export function setAttr(element: XmlElement, name: string, value: string): void {
  const list = element.attrs;
  for (let i = 0; i < list.length; i++) {
    const existing = list[i] as [string, string];
    if (existing[0] === name) {
      existing[1] = value;
      return;
    }
  }
  list.push([name, value]);
}

const TEXT_SPECIAL = /[&<>]/;
const ATTR_SPECIAL = /[&<>"]/;

export function escapeText(text: string): string {
  if (!TEXT_SPECIAL.test(text)) return text;
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

export function escapeAttr(text: string): string {
  if (!ATTR_SPECIAL.test(text)) return text;
  return escapeText(text).replaceAll('"', '&quot;');
}

function isElement(child: XmlChild): child is XmlElement {
  return 'tag' in child;
}

const OUTPUT_TAG = /<output [^>]*\/>/g;

/** Node count of raw mixed content (text runs and <output/> elements), as a DOM would see it. */
function rawNodeCount(raw: string): { count: number; startsWithText: boolean } {
  let count = 0;
  let last = 0;
  OUTPUT_TAG.lastIndex = 0;
  for (let m = OUTPUT_TAG.exec(raw); m; m = OUTPUT_TAG.exec(raw)) {
    if (m.index > last) count++;
    count++;
    last = m.index + m[0].length;
  }
  if (last < raw.length) count++;
  return { count, startsWithText: !raw.startsWith('<output') };
}

function attrs(element: XmlElement): string {
  // Indexed, not `for…of` with destructuring: this runs for every element, in code that is
  // never optimised (the command runs without TurboFan), where each of those allocates.
  const list = element.attrs;
  let out = '';
  for (let i = 0; i < list.length; i++) {
    const attr = list[i] as [string, string];
    out += ` ${attr[0]}="${escapeAttr(attr[1])}"`;
  }
  return out;
}

function inline(element: XmlElement): string {
  if (element.children.length === 0) return `<${element.tag}${attrs(element)}/>`;
  let out = `<${element.tag}${attrs(element)}>`;
  for (const child of element.children) {
    if (isElement(child)) out += inline(child);
    else if ('text' in child) out += escapeText(child.text);
    else if ('raw' in child) out += child.raw;
  }
  return `${out}</${element.tag}>`;
}

/** DOM node count of the children and whether the first is text (decides pyxform's padding spaces). */
/** One element with text or raw markup content, written on one line. */
export function textLine(indent: string, tag: string, attributes: string, content: { text: string } | { raw: string }): string {
  if ('text' in content) return `${indent}<${tag}${attributes}>${escapeText(content.text)}</${tag}>\n`;
  const { nodes, firstIsText } = mixedShape([content]);
  return `${indent}<${tag}${attributes}>${nodes > 1 && firstIsText ? ' ' : ''}${content.raw}${nodes > 1 ? ' ' : ''}</${tag}>\n`;
}

function mixedShape(children: XmlChild[]): { nodes: number; firstIsText: boolean } {
  let nodes = 0;
  let firstIsText = false;
  for (let i = 0; i < children.length; i++) {
    const c = children[i];
    if (c === undefined) continue;
    if ('block' in c) continue;
    if ('raw' in c) {
      const info = rawNodeCount(c.raw);
      nodes += info.count;
      if (i === 0) firstIsText = info.startsWithText;
    } else {
      nodes++;
      if (i === 0) firstIsText = 'text' in c;
    }
  }
  return { nodes, firstIsText };
}

/** Writes an element and its children, indented. */
export function writeElement(element: XmlElement, indent: string, out: XmlOut): void {
  const children = element.children;
  const open = `${indent}<${element.tag}${attrs(element)}`;
  if (children.length === 0) {
    out.add(`${open}/>\n`);
    return;
  }
  let mixed = false;
  for (let i = 0; i < children.length && !mixed; i++) {
    const c = children[i] as XmlChild;
    mixed = 'text' in c || 'raw' in c;
  }
  if (mixed) {
    // Text content stays on the element's line, as pyxform writes it.
    const { nodes, firstIsText } = mixedShape(children);
    let line = `${open}>${nodes > 1 && firstIsText ? ' ' : ''}`;
    for (let i = 0; i < children.length; i++) {
      const child = children[i] as XmlChild;
      if (isElement(child)) line += inline(child);
      else if ('text' in child) line += escapeText(child.text);
      else if ('raw' in child) line += child.raw;
    }
    out.add(`${line}${nodes > 1 ? ' ' : ''}</${element.tag}>\n`);
    return;
  }
  const inner = `${indent}  `;
  out.add(`${open}>\n`);
  for (let i = 0; i < children.length; i++) {
    const child = children[i] as XmlChild;
    if (isElement(child)) writeElement(child, inner, out);
    else if ('block' in child) child.block(out);
  }
  out.add(`${indent}</${element.tag}>\n`);
}

/** The opening tag of an element whose children are written after it, on lines of their own. */
export function openTagLine(indent: string, element: XmlElement): string {
  return `${indent}<${element.tag}${attrs(element)}>\n`;
}

/** An element without children as one line of text. */
export function emptyElementLine(indent: string, element: XmlElement): string {
  return `${indent}<${element.tag}${attrs(element)}/>\n`;
}
