// A quick reading of the plain XML that devices send: one root, elements with ASCII names and
// quoted attributes, text with the five predefined entities and character references, and an
// optional `<?xml … ?>` declaration. Anything else (comments, processing instructions, CDATA,
// DOCTYPE, other entities, carriage returns, tabs or newlines or `&` in attribute values,
// non-ASCII names, any syntax error) makes it give up before it has decided anything, and the
// caller reads the document with saxes, which then answers for every error. So on the documents
// it accepts it must report the elements and texts exactly as saxes does, and accept none that
// saxes would refuse; src/lib/plain-xml.test.ts runs both readers over the same documents.
//
// It exists because the saxes pass was the largest single cost of receiving a submission: one
// regular expression per tag and indexOf between them do the same work with far less per
// character and far fewer objects.

/** What the reader reports, in document order, as saxes's opentag, text and closetag events. */
export interface PlainXmlHandler {
  open(name: string, attributes: Record<string, string>): void;
  text(text: string): void;
  close(): void;
}

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const AMP = 0x26;
const EQUALS = 0x3d;
const QUOTE = 0x22;
const APOSTROPHE = 0x27;
const BRACKET = 0x5d;

/** ASCII characters by what they may be in a name: 1 its first character or any, 2 not its first. */
const NAME_CHARS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z_:]/.test(ch)) NAME_CHARS[c] = 1;
  else if (/[0-9.-]/.test(ch)) NAME_CHARS[c] = 2;
}

/** The declaration as devices write it; others (XML 1.1, other encodings) go to saxes. */
const DECLARATION = /<\?xml[ \t\n]+version[ \t\n]*=[ \t\n]*(["'])1\.0\1(?:[ \t\n]+encoding[ \t\n]*=[ \t\n]*(["'])(?:UTF|utf)-8\2)?(?:[ \t\n]+standalone[ \t\n]*=[ \t\n]*(["'])(?:yes|no)\3)?[ \t\n]*\?>/y;
const REFERENCE = /&(?:(amp|lt|gt|quot|apos)|#([0-9]{1,7})|#x([0-9a-fA-F]{1,6}));/y;
const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

const NO_ATTRIBUTES: Record<string, string> = Object.freeze(Object.create(null) as Record<string, string>);

class NotPlain extends Error {}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x09;
}

/** A character reference's character, when it is one saxes gives back unchanged (not a control character). */
function referenced(code: number): string {
  if (code < 0x20 || (code >= 0xd800 && code <= 0xdfff) || code === 0xfffe || code === 0xffff || code > 0x10ffff) throw new NotPlain();
  return String.fromCodePoint(code);
}

/** The references of text[from, to) replaced. */
function withReferences(text: string, from: number, to: number): string {
  let out = '';
  let at = text.indexOf('&', from);
  while (at >= 0 && at < to) {
    REFERENCE.lastIndex = at;
    const ref = REFERENCE.exec(text);
    if (!ref || REFERENCE.lastIndex > to) throw new NotPlain();
    const [, name, decimal, hex] = ref;
    out += text.slice(from, at) + (name !== undefined ? (PREDEFINED[name] ?? '') : referenced(decimal !== undefined ? Number(decimal) : Number.parseInt(hex ?? '', 16)));
    from = REFERENCE.lastIndex;
    at = text.indexOf('&', from);
  }
  return out + text.slice(from, to);
}

/**
 * Where the text from `at` ends (the next `<`), having checked that it holds only characters
 * XML allows (carriage returns aside), no `]]>`, and whether it has references (`&`).
 */
class Scanner {
  at = 0;
  references = false;

  constructor(readonly text: string) {}

  /** Text up to the next `<` (its index), checked; -1 when there is none. */
  textEnd(): number {
    const { text } = this;
    this.references = false;
    for (let i = this.at; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x20 && c < 0xd800) {
        if (c === LT) return i;
        if (c === AMP) this.references = true;
        else if (c === BRACKET && text.charCodeAt(i + 1) === BRACKET && text.charCodeAt(i + 2) === GT) throw new NotPlain();
      } else if (c === 0x0a || c === 0x09 || (c >= 0xe000 && c <= 0xfffd)) {
        // allowed
      } else if (c >= 0xd800 && c <= 0xdbff) {
        const low = text.charCodeAt(i + 1);
        if (!(low >= 0xdc00 && low <= 0xdfff)) throw new NotPlain();
        i++;
      } else {
        throw new NotPlain();
      }
    }
    return -1;
  }

  spaces(): void {
    while (isSpace(this.text.charCodeAt(this.at))) this.at++;
  }

  /** An ASCII name starting here (anything else is not plain). */
  name(): string {
    const { text } = this;
    const start = this.at;
    const first = text.charCodeAt(start);
    if (first >= 128 || NAME_CHARS[first] !== 1) throw new NotPlain();
    let i = start + 1;
    for (let c = text.charCodeAt(i); c < 128 && NAME_CHARS[c] !== 0; c = text.charCodeAt(++i));
    const end = text.charCodeAt(i);
    // A name ends at a space, `=`, `/` or `>`: a non-ASCII name character is not plain.
    if (!(isSpace(end) || end === EQUALS || end === SLASH || end === GT)) throw new NotPlain();
    this.at = i;
    return text.slice(start, i);
  }

  /** The attributes of a start tag and its end: true for `/>`. `at` is just after the name. */
  attributes(into: { attributes: Record<string, string> }): boolean {
    const { text } = this;
    for (;;) {
      const before = this.at;
      this.spaces();
      const c = text.charCodeAt(this.at);
      if (c === GT) {
        this.at++;
        return false;
      }
      if (c === SLASH) {
        if (text.charCodeAt(this.at + 1) !== GT) throw new NotPlain();
        this.at += 2;
        return true;
      }
      if (this.at === before) throw new NotPlain();
      const name = this.name();
      this.spaces();
      if (text.charCodeAt(this.at) !== EQUALS) throw new NotPlain();
      this.at++;
      this.spaces();
      const quote = text.charCodeAt(this.at);
      if (quote !== QUOTE && quote !== APOSTROPHE) throw new NotPlain();
      const start = this.at + 1;
      let i = start;
      for (let v = text.charCodeAt(i); v !== quote; v = text.charCodeAt(++i)) {
        // Tabs and newlines are turned into spaces by saxes, references replaced, `<` refused.
        if (v < 0x20 || v === LT || v === AMP || v >= 0xd800 || Number.isNaN(v)) throw new NotPlain();
      }
      if (into.attributes === NO_ATTRIBUTES) into.attributes = Object.create(null) as Record<string, string>;
      if (name in into.attributes) throw new NotPlain();
      into.attributes[name] = text.slice(start, i);
      this.at = i + 1;
    }
  }
}

/**
 * Reads `text` (already without leading whitespace or a byte-order mark) and reports it to
 * `handler`. False: the document is not plain in the sense above, or not well-formed, and the
 * handler may have been told part of it (the caller starts again with a fresh one). An error the
 * handler throws propagates.
 */
export function readPlainXml(text: string, handler: PlainXmlHandler): boolean {
  const scan = new Scanner(text);
  try {
    if (text.startsWith('<?xml')) {
      DECLARATION.lastIndex = 0;
      if (!DECLARATION.test(text)) return false;
      scan.at = DECLARATION.lastIndex;
    }
    scan.spaces();
    const open: string[] = [];
    const tag = { attributes: NO_ATTRIBUTES };
    do {
      if (text.charCodeAt(scan.at) !== LT) return false;
      scan.at++;
      if (text.charCodeAt(scan.at) === SLASH) {
        scan.at++;
        const name = scan.name();
        scan.spaces();
        if (text.charCodeAt(scan.at) !== GT || open.pop() !== name) return false;
        scan.at++;
        handler.close();
      } else {
        const name = scan.name();
        tag.attributes = NO_ATTRIBUTES;
        const empty = scan.attributes(tag);
        handler.open(name, tag.attributes);
        if (empty) handler.close();
        else open.push(name);
      }
      if (open.length === 0) break;
      const from = scan.at;
      const next = scan.textEnd();
      if (next < 0) return false;
      if (next > from) handler.text(scan.references ? withReferences(text, from, next) : text.slice(from, next));
      scan.at = next;
    } while (scan.at < text.length);
    scan.spaces();
    return open.length === 0 && scan.at === text.length;
  } catch (error) {
    if (error instanceof NotPlain) return false;
    throw error;
  }
}
