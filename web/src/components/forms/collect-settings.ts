// ODK Collect's settings QR code: the settings as JSON (`general` for the server and account,
// `admin` for the protected ones), compressed with zlib and written as base64. Collect resets any
// setting the code leaves out, and never gets a password from here.

export interface CollectSettings {
  general: { server_url: string; username?: string };
  admin: Record<string, never>;
}

/** The server Collect talks to for an account's forms: `{origin}/{username}` (formList, submission). */
export function collectServerUrl(origin: string, owner: string): string {
  return `${origin.replace(/\/+$/, '')}/${encodeURIComponent(owner)}`;
}

export function collectSettings(serverUrl: string, username?: string): CollectSettings {
  return { general: { server_url: serverUrl, ...(username ? { username } : {}) }, admin: {} };
}

/** base64(zlib(JSON)), the text the QR code carries. CompressionStream's 'deflate' is zlib's format. */
export async function encodeCollectSettings(settings: CollectSettings): Promise<string> {
  const stream = new Blob([JSON.stringify(settings)]).stream().pipeThrough(new CompressionStream('deflate'));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** An SVG path drawing the dark modules of a QR matrix, one unit square each. */
export function qrPath(modules: readonly (readonly boolean[])[]): string {
  const parts: string[] = [];
  modules.forEach((row, y) => row.forEach((dark, x) => {
    if (dark) parts.push(`M${x} ${y}h1v1h-1z`);
  }));
  return parts.join('');
}
