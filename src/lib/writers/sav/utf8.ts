// UTF-8 helpers. Everything in the file is UTF-8 (declared in records 7/3 and 7/20),
// and every byte limit is enforced at a character boundary, never mid-character.

const encoder = new TextEncoder();

export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Encodes `text`, keeping at most `maxBytes` bytes and never splitting a character. */
export function encodeUtf8(text: string, maxBytes = Number.POSITIVE_INFINITY): Uint8Array {
  const full = encoder.encode(text);
  if (full.length <= maxBytes) return full;
  // encodeInto stops before a character that does not fit, so the cut is always clean.
  const limited = new Uint8Array(maxBytes);
  const { written } = encoder.encodeInto(text, limited);
  return limited.subarray(0, written);
}

/**
 * Encodes `text` into `target` (already filled with padding by the caller) and returns the
 * number of bytes written; text that does not fit is cut at a character boundary.
 */
export function encodeUtf8Into(text: string, target: Uint8Array): number {
  return encoder.encodeInto(text, target).written;
}

/** `text` cut to at most `maxBytes` UTF-8 bytes at a character boundary. */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (utf8Length(text) <= maxBytes) return text;
  let out = '';
  let bytes = 0;
  for (const char of text) {
    const size = utf8Length(char);
    if (bytes + size > maxBytes) break;
    out += char;
    bytes += size;
  }
  return out;
}
