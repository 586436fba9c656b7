// Fetching a file from a URL a user gave us (xls_url, dropbox_xls_url): http(s) only, size and
// time limits, and no requests to loopback, private or link-local addresses unless allowed.
// The address check runs in the connection's own DNS lookup, so a name cannot resolve to a
// public address for the check and a private one for the connection.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction, type Socket } from 'node:net';
// undici is loaded on first use: most servers never fetch a URL nor deliver to a REST service,
// and loading it at start held its module code and objects for good.
import type { Agent } from 'undici';

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

/** An IPv6 address as its eight 16-bit groups (a dotted IPv4 tail read as two), or undefined. */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string | undefined): number[] => (part ? part.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const head = parse(halves[0]);
  const tail = parse(halves[1]);
  const groups = halves.length === 2 ? [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail] : head;
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

function embeddedIpv4(high: number, low: number): string {
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/**
 * Whether an address is one a server-side fetch must not reach: loopback, private, link-local,
 * carrier-grade NAT, multicast or unspecified, including IPv4 addresses carried inside IPv6 ones
 * (mapped `::ffff:7f00:1`, compatible, NAT64, 6to4) however they are written.
 */
export function isPrivateAddress(address: string): boolean {
  if (isIP(address) === 4) return ipv4Private(address);
  const g = ipv6Groups(address);
  if (!g) return true;
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const leadingZeros = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (leadingZeros && (g5 === 0xffff || g5 === 0)) {
    // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), and :: and ::1 themselves.
    if (g5 === 0 && g6 === 0) return true;
    return ipv4Private(embeddedIpv4(g6, g7));
  }
  if (g0 === 0x64 && g1 === 0xff9b) return ipv4Private(embeddedIpv4(g6, g7));
  if (g0 === 0x2002) return ipv4Private(embeddedIpv4(g1, g2));
  // Teredo tunnels to an address this check cannot see.
  if (g0 === 0x2001 && g1 === 0) return true;
  return (g0 & 0xfe00) === 0xfc00 || (g0 & 0xffc0) === 0xfe80 || (g0 & 0xffc0) === 0xfec0 || (g0 & 0xff00) === 0xff00;
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
  // An address written as an IP literal never reaches the connection's DNS lookup, so it is
  // checked here: the first URL's and every redirect's.
  const refuseLiteral = (target: URL): void => {
    const host = target.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && !options.allowPrivateAddresses && isPrivateAddress(host)) throw new RemoteFetchError(`${host} is a private address`);
  };
  refuseLiteral(parsed);
  const { Agent, request } = await import('undici');
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
        refuseLiteral(current);
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

/**
 * The address rules above for a URL kept to be called later (a REST service's service_url): http(s),
 * and no IP literal of a private network unless allowed. Names are checked when each connection
 * resolves them (guardedAgent), since what a name resolves to can change after it is stored.
 */
export function remoteUrlProblem(url: string, allowPrivateAddresses: boolean): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'Enter a valid URL.';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'Only http and https URLs are allowed.';
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (allowPrivateAddresses) return undefined;
  if ((isIP(host) && isPrivateAddress(host)) || /(^|\.)localhost\.?$/i.test(host)) return `${host} is a private address.`;
  return undefined;
}

/** A keep-alive connection pool (guardedAgent) and a way to send several requests in few writes. */
export interface GuardedAgent {
  dispatcher: Agent;
  /**
   * Runs `write`, which dispatches requests, with every open connection's output held, then lets
   * each connection's output go in one write: requests pipelined on a connection together leave in
   * one system call instead of one each (undici writes a request's head and body as one).
   */
  together(write: () => void): void;
  /** Connections made so far: a burst that made none went over connections the receiver kept open. */
  readonly connectionsMade: number;
}

/**
 * A keep-alive connection pool whose every connection makes the address check in its own DNS lookup.
 * Only undici's Agent and connector and what they need are loaded (its entry module loads fetch,
 * WebSocket, the caches and the mocks too): a REST service dispatcher needs nothing else.
 */
export async function guardedAgent(options: { allowPrivateAddresses: boolean; timeoutMs: number; connections?: number; pipelining?: number }): Promise<GuardedAgent> {
  const [{ default: Agent }, { default: buildConnector }] = await Promise.all([import('undici/lib/dispatcher/agent.js'), import('undici/lib/core/connect.js')]);
  const connectOne = buildConnector({ lookup: guardedLookup(options.allowPrivateAddresses), timeout: options.timeoutMs });
  // The connections made, for together() to hold their output; each leaves the set as it closes.
  const open = new Set<Socket>();
  let made = 0;
  const connect = (target: Parameters<typeof connectOne>[0], callback: Parameters<typeof connectOne>[1]): void => {
    connectOne(target, (...args) => {
      const socket = args[1];
      if (socket && !socket.destroyed) {
        made += 1;
        open.add(socket);
        socket.once('close', () => open.delete(socket));
      }
      callback(...args);
    });
  };
  const dispatcher = new Agent({
    connect,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    ...(options.connections !== undefined ? { connections: options.connections } : {}),
    ...(options.pipelining !== undefined ? { pipelining: options.pipelining } : {}),
  });
  return {
    dispatcher,
    get connectionsMade() {
      return made;
    },
    together(write) {
      const held = [...open];
      for (const socket of held) socket.cork();
      try {
        write();
      } finally {
        // undici writes to a kept-alive connection that was idle only after a setImmediate of its
        // own (it first looks for bytes the server sent meanwhile); this one runs after those.
        setImmediate(() => {
          for (const socket of held) socket.uncork();
        });
      }
    },
  };
}
