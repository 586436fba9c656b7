// A multipart/form-data body already in memory, split into its parts without streams. Submissions
// are small (an XML file of a few kilobytes, sometimes a photo) and arrive by the thousand; a
// streaming parser costs about as much per request as parsing the XML. Larger bodies go through
// multipart-stream.ts, which reads part heads with partHead() below. Parts come out as busboy
// (@fastify/multipart's parser) reports them: file names without a path, `filename*` decoded, the
// media type in lower case without parameters ('text/plain' when absent), parts without a
// form-data Content-Disposition skipped.

export interface PartHead {
  name: string;
  /** Undefined for a plain field. */
  filename: string | undefined;
  mimetype: string;
}

export interface BodyPart extends PartHead {
  data: Buffer;
}

/** The boundary of a `multipart/form-data; boundary=…` content type, if it is one. */
export function multipartBoundary(contentType: string): string | undefined {
  const match = /^\s*multipart\/form-data\s*;(?:.*;)?\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

/** `key=value` parameters after the first `;`, values unquoted (quoted-pairs resolved). */
function parameters(header: string): { first: string; params: Map<string, string> } | undefined {
  const semicolon = header.indexOf(';');
  const first = (semicolon < 0 ? header : header.slice(0, semicolon)).trim();
  const params = new Map<string, string>();
  const re = /\s*;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]*))\s*/gy;
  let at = semicolon < 0 ? header.length : semicolon;
  while (at < header.length) {
    re.lastIndex = at;
    const match = re.exec(header);
    if (!match?.[1]) return undefined;
    const value = match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : (match[3] ?? '');
    params.set(match[1].toLowerCase(), value);
    at = re.lastIndex;
  }
  return { first, params };
}

/** RFC 5987 `charset'lang'percent-encoded` (filename*). */
function extendedValue(value: string): string | undefined {
  const match = /^([\w!#$%&+^`{}~-]*)'[^']*'(.*)$/.exec(value);
  if (!match) return undefined;
  const charset = (match[1] ?? '').toLowerCase();
  const bytes = Buffer.from((match[2] ?? '').replace(/%([0-9a-f]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1');
  return bytes.toString(charset === 'iso-8859-1' || charset === 'latin1' ? 'latin1' : 'utf8');
}

/** The last path segment, as the streaming parser keeps it ('.' and '..' become ''). */
function basename(path: string): string {
  const name = path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1);
  return name === '.' || name === '..' ? '' : name;
}

/**
 * A part's header block (the lines before its blank line): null for a part to skip (no form-data
 * Content-Disposition), undefined when a line is not a header.
 */
export function partHead(head: string): PartHead | null | undefined {
  let disposition: string | undefined;
  let contentType: string | undefined;
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const key = line.slice(0, colon).trim().toLowerCase();
    if (key === 'content-disposition') disposition ??= line.slice(colon + 1).trim();
    else if (key === 'content-type') contentType ??= line.slice(colon + 1).trim();
  }
  const parsed = disposition === undefined ? undefined : parameters(disposition);
  if (!parsed || parsed.first.toLowerCase() !== 'form-data') return null; // skipped, as busboy does
  const extended = parsed.params.get('filename*');
  const rawName = extended !== undefined ? extendedValue(extended) : parsed.params.get('filename');
  const nameExtended = parsed.params.get('name*');
  const name = (nameExtended !== undefined ? extendedValue(nameExtended) : parsed.params.get('name')) ?? '';
  const type = contentType ? parameters(contentType)?.first.toLowerCase() : undefined;
  return { name, filename: rawName === undefined ? undefined : basename(rawName), mimetype: type || 'text/plain' };
}

/** Whether a part is a file: it has a file name or is declared binary (as busboy has it). */
export function isFilePart(head: PartHead): boolean {
  return head.filename !== undefined || head.mimetype === 'application/octet-stream';
}

/**
 * The body's parts, or undefined when it is not a well-formed multipart body with this boundary
 * (no first boundary, a part without its header block, no closing boundary).
 */
export function splitMultipart(body: Buffer, boundary: string): BodyPart[] | undefined {
  const delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  // The first boundary may open the body or follow a preamble.
  let at = body.subarray(0, delimiter.length - 2).equals(delimiter.subarray(2)) ? delimiter.length - 2 : -1;
  if (at < 0) {
    const found = body.indexOf(delimiter);
    if (found < 0) return undefined;
    at = found + delimiter.length;
  }
  const parts: BodyPart[] = [];
  for (;;) {
    // After a boundary: `--` closes the body; otherwise optional spaces, CRLF, then a part.
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return parts;
    while (body[at] === 0x20 || body[at] === 0x09) at++;
    if (body[at] !== 0x0d || body[at + 1] !== 0x0a) return undefined;
    at += 2;
    const next = body.indexOf(delimiter, at);
    if (next < 0) return undefined;
    let part: BodyPart | null | undefined = null; // a part with no header lines is skipped
    if (body[at] !== 0x0d || body[at + 1] !== 0x0a) {
      const headEnd = body.indexOf('\r\n\r\n', at, 'latin1');
      if (headEnd < 0 || headEnd + 2 > next) return undefined;
      const head = partHead(body.toString('utf8', at, headEnd));
      part = head ? { ...head, data: body.subarray(Math.min(headEnd + 4, next), next) } : head;
    }
    if (part === undefined) return undefined;
    if (part) parts.push(part);
    at = next + delimiter.length;
  }
}
