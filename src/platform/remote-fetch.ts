// Fetching a file from a URL a user gave us (xls_url, dropbox_xls_url): http(s) only, size and
// time limits, and no requests to loopback, private or link-local addresses unless allowed.
// The address check runs in the connection's own DNS lookup, so a name cannot resolve to a
// public address for the check and a private one for the connection.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, request } from 'undici';

export class RemoteFetchError extends Error {}

export interface RemoteFetchOptions {
  maxBytes: number;
  timeoutMs: number;
  allowPrivateAddresses: boolean;
}

function ipv4Private(address: string): boolean {
  const [a = 0, b = 0] = address.split('.').map(Number);
  return (
    a === 0 || a === 10 || a === 127 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 198 && (b === 18 || b === 19)) || a >= 224
  );
}

export function isPrivateAddress(address: string): boolean {
  if (isIP(address) === 4) return ipv4Private(address);
  const lower = address.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped?.[1]) return ipv4Private(mapped[1]);
  return lower === '::' || lower === '::1' || lower.startsWith('fc') || lower.startsWith('fd') || lower.startsWith('fe80') || lower.startsWith('ff');
}

function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const refused = !allowPrivate && addresses.some((a) => isPrivateAddress(a.address));
      if (refused) return callback(new RemoteFetchError(`${hostname} resolves to a private address`), '', 0);
      const first = addresses[0];
      if (!first) return callback(new RemoteFetchError(`${hostname} has no address`), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      return callback(null, first.address, first.family);
    });
  };
}

export async function fetchRemoteFile(url: string, options: RemoteFetchOptions): Promise<{ bytes: Uint8Array; contentType: string; fileName: string }> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RemoteFetchError(`"${url}" is not a valid URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new RemoteFetchError('only http and https URLs can be fetched');
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !options.allowPrivateAddresses && isPrivateAddress(host)) {
    throw new RemoteFetchError(`${host} is a private address`);
  }
  const dispatcher = new Agent({ connect: { lookup: guardedLookup(options.allowPrivateAddresses), timeout: options.timeoutMs } });
  try {
    let current = parsed;
    for (let redirects = 0; redirects < 5; redirects++) {
      const response = await request(current, {
        dispatcher,
        method: 'GET',
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      const location = response.headers['location'];
      if (response.statusCode >= 300 && response.statusCode < 400 && typeof location === 'string') {
        await response.body.dump();
        current = new URL(location, current);
        if (current.protocol !== 'http:' && current.protocol !== 'https:') throw new RemoteFetchError('redirected to a non-http URL');
        continue;
      }
      if (response.statusCode !== 200) {
        await response.body.dump();
        throw new RemoteFetchError(`the server answered ${response.statusCode}`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        const buffer = chunk as Buffer;
        size += buffer.byteLength;
        if (size > options.maxBytes) {
          response.body.destroy();
          throw new RemoteFetchError(`the file is larger than ${options.maxBytes} bytes`);
        }
        chunks.push(buffer);
      }
      const disposition = String(response.headers['content-disposition'] ?? '');
      const named = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition)?.[1];
      const fileName = decodeURIComponent(named ?? current.pathname.split('/').pop() ?? 'form.xlsx');
      return { bytes: Buffer.concat(chunks), contentType: String(response.headers['content-type'] ?? 'application/octet-stream'), fileName };
    }
    throw new RemoteFetchError('too many redirects');
  } catch (error) {
    if (error instanceof RemoteFetchError) throw error;
    throw new RemoteFetchError(error instanceof Error ? error.message : String(error));
  } finally {
    await dispatcher.close();
  }
}
