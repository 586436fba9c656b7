// A minimal element tree and an indenting serializer that lays XML out as
// pyxform does (two-space indents; text content kept on the element's line).

export interface XmlElement {
  tag: string;
  attrs: Array<[string, string]>;
  children: XmlChild[];
}

/** `raw` holds already-escaped markup (text with <output/> elements). */
export type XmlChild = XmlElement | { text: string } | { raw: string };

export function el(tag: string, attrs: Record<string, string | undefined> = {}, children: XmlChild[] = []): XmlElement {
  const list: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) list.push([k, v]);
  return { tag, attrs: list, children };
}

export function setAttr(element: XmlElement, name: string, value: string): void {
  const existing = element.attrs.find((a) => a[0] === name);
  if (existing) existing[1] = value;
  else element.attrs.push([name, value]);
}

export function escapeText(text: string): string {
  if (!/[&<>]/.test(text)) return text;
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

export function escapeAttr(text: string): string {
  if (!/[&<>"]/.test(text)) return text;
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

function writeAttrs(out: string[], element: XmlElement): void {
  for (const [k, v] of element.attrs) out.push(' ', k, '="', escapeAttr(v), '"');
}

function writeInline(out: string[], element: XmlElement): void {
  out.push('<', element.tag);
  writeAttrs(out, element);
  if (element.children.length === 0) {
    out.push('/>');
    return;
  }
  out.push('>');
  for (const child of element.children) {
    if (isElement(child)) writeInline(out, child);
    else if ('text' in child) out.push(escapeText(child.text));
    else out.push(child.raw);
  }
  out.push('</', element.tag, '>');
}

function write(out: string[], element: XmlElement, indent: string): void {
  out.push(indent, '<', element.tag);
  writeAttrs(out, element);
  const children = element.children;
  if (children.length === 0) {
    out.push('/>\n');
    return;
  }
  out.push('>');
  const mixed = children.some((c) => !isElement(c));
  if (mixed) {
    let nodes = 0;
    let firstIsText = false;
    children.forEach((c, i) => {
      if ('raw' in c) {
        const info = rawNodeCount(c.raw);
        nodes += info.count;
        if (i === 0) firstIsText = info.startsWithText;
      } else {
        nodes++;
        if (i === 0) firstIsText = 'text' in c;
      }
    });
    if (nodes > 1 && firstIsText) out.push(' ');
    for (const child of children) {
      if (isElement(child)) writeInline(out, child);
      else if ('text' in child) out.push(escapeText(child.text));
      else out.push(child.raw);
    }
    if (nodes > 1) out.push(' ');
  } else {
    out.push('\n');
    const inner = `${indent}  `;
    for (const child of children) if (isElement(child)) write(out, child, inner);
    out.push(indent);
  }
  out.push('</', element.tag, '>\n');
}

export function serialize(root: XmlElement): string {
  const out: string[] = ['<?xml version="1.0"?>\n'];
  write(out, root, '');
  return out.join('');
}
