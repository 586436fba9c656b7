// HTTP Digest authentication (RFC 7616, as ODK Collect and Briefcase speak it: MD5 or MD5-sess
// with qop="auth"). Pure protocol: header parsing, stateless nonces, HA1 and response arithmetic,
// and the per-process nonce-count window. No database; the use case is in digest-service.ts.
//
// HA1 = MD5(login:realm:password) is a password equivalent for this realm, so it is stored only
// sealed under SECRET_KEY (users.digest_ha1_sealed), as one sealed JSON value that names the realm
// and holds an HA1 per login spelling (username, e-mail, and their lower-case forms, as
// django-digest does). A digest is computed over the exact spelling the client typed, so a
// spelling not in the map cannot be verified without the password.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { constantTimeEqual, type Sealer } from '../../platform/secrets.ts';

/** How long a nonce is accepted before the client is told it is stale (django-digest's default). */
export const NONCE_LIFETIME_SECONDS = 300;
/** Nonces minted by a process whose clock runs ahead of ours by up to this much are still fine. */
const NONCE_CLOCK_SKEW_MS = 60_000;
const NONCE_RANDOM_BYTES = 8;
const NONCE_MAC_BYTES = 16;

export function md5Hex(value: string): string {
  return createHash('md5').update(value, 'utf8').digest('hex');
}

export function computeHa1(login: string, realm: string, password: string): string {
  return md5Hex(`${login}:${realm}:${password}`);
}

// ---------------------------------------------------------------- stored HA1 values

export interface DigestIdentity {
  readonly username: string;
  readonly email: string;
}

export interface DigestSecrets {
  readonly realm: string;
  /** Login spelling → HA1 (lower-case hex). */
  readonly ha1: Readonly<Record<string, string>>;
}

/** The spellings a client may type as the Digest username, each needing its own HA1. */
export function digestLogins(identity: DigestIdentity): string[] {
  const spellings = [identity.username, identity.username.toLowerCase(), identity.email, identity.email.toLowerCase()];
  return [...new Set(spellings.filter((s) => s !== ''))];
}

export function sealDigestSecrets(sealer: Sealer, realm: string, identity: DigestIdentity, password: string): string {
  const ha1: Record<string, string> = {};
  for (const login of digestLogins(identity)) ha1[login] = computeHa1(login, realm, password);
  const secrets: DigestSecrets = { realm, ha1 };
  return sealer.seal(JSON.stringify(secrets));
}

/** The sealed value's contents, or undefined when absent or unreadable (e.g. SECRET_KEY changed). */
export function openDigestSecrets(sealer: Sealer, sealed: string | null): DigestSecrets | undefined {
  if (!sealed) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(sealer.open(sealed));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const realm: unknown = Reflect.get(parsed, 'realm');
  const ha1: unknown = Reflect.get(parsed, 'ha1');
  if (typeof realm !== 'string' || typeof ha1 !== 'object' || ha1 === null) return undefined;
  const map: Record<string, string> = {};
  for (const [login, value] of Object.entries(ha1)) if (typeof value === 'string') map[login] = value;
  return { realm, ha1: map };
}

/** Whether the stored value covers every current spelling for this realm. */
export function digestSecretsCurrent(secrets: DigestSecrets | undefined, realm: string, identity: DigestIdentity): boolean {
  return secrets !== undefined && secrets.realm === realm && digestLogins(identity).every((login) => login in secrets.ha1);
}

/**
 * After a username or e-mail change without the password at hand: keeps the HA1 values of the
 * spellings that are still current and drops the rest (null when none is left).
 */
export function pruneDigestSecrets(sealer: Sealer, sealed: string | null, identity: DigestIdentity): string | null {
  const secrets = openDigestSecrets(sealer, sealed);
  if (!secrets) return null;
  const ha1: Record<string, string> = {};
  for (const login of digestLogins(identity)) {
    const value = secrets.ha1[login];
    if (value !== undefined) ha1[login] = value;
  }
  return Object.keys(ha1).length ? sealer.seal(JSON.stringify({ realm: secrets.realm, ha1 })) : null;
}

// ---------------------------------------------------------------- Authorization header

export interface DigestCredentials {
  readonly username: string;
  readonly realm: string;
  readonly nonce: string;
  readonly uri: string;
  readonly response: string;
  readonly algorithm: string;
  readonly qop: string | undefined;
  readonly nc: string | undefined;
  readonly cnonce: string | undefined;
  readonly opaque: string | undefined;
}

export type ParsedDigest = { ok: true; credentials: DigestCredentials } | { ok: false; problem: string };

const AUTH_PARAM = /\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=\s*(?:"((?:[^"\\]|\\[\s\S])*)"|([^\s,"]*))\s*(?:,|$)/y;

/** Parses the part of `Authorization: Digest …` after the keyword into its parameters. */
export function parseDigestParams(text: string): Map<string, string> | undefined {
  const params = new Map<string, string>();
  const input = text.trim();
  AUTH_PARAM.lastIndex = 0;
  while (AUTH_PARAM.lastIndex < input.length) {
    const start = AUTH_PARAM.lastIndex;
    const match = AUTH_PARAM.exec(input);
    if (!match || AUTH_PARAM.lastIndex === start) return undefined;
    const name = (match[1] ?? '').toLowerCase();
    const value = match[2] !== undefined ? match[2].replace(/\\([\s\S])/g, '$1') : (match[3] ?? '');
    if (params.has(name)) return undefined;
    params.set(name, value);
  }
  return params;
}

export function parseDigestCredentials(text: string): ParsedDigest {
  const params = parseDigestParams(text);
  if (!params) return { ok: false, problem: 'Invalid digest header. Credentials are malformed.' };
  const missing = ['username', 'realm', 'nonce', 'uri', 'response'].filter((name) => !params.get(name));
  if (missing.length) return { ok: false, problem: `Invalid digest header. Missing: ${missing.join(', ')}.` };
  return {
    ok: true,
    credentials: {
      username: params.get('username') ?? '',
      realm: params.get('realm') ?? '',
      nonce: params.get('nonce') ?? '',
      uri: params.get('uri') ?? '',
      response: params.get('response') ?? '',
      algorithm: params.get('algorithm') ?? 'MD5',
      qop: params.get('qop'),
      nc: params.get('nc'),
      cnonce: params.get('cnonce'),
      opaque: params.get('opaque'),
    },
  };
}

/** Whether the `uri` parameter names the request that carries it (origin or absolute form). */
export function uriMatches(digestUri: string, requestTarget: string): boolean {
  if (digestUri === requestTarget) return true;
  if (!/^https?:\/\//i.test(digestUri)) return false;
  try {
    const url = new URL(digestUri);
    return url.pathname + url.search === requestTarget;
  } catch {
    return false;
  }
}

/** The `response` value a client with this HA1 sends (qop="auth"; MD5 or MD5-sess). */
export function expectedResponse(ha1: string, method: string, c: DigestCredentials): string {
  const sessionHa1 = c.algorithm.toUpperCase() === 'MD5-SESS' ? md5Hex(`${ha1}:${c.nonce}:${c.cnonce ?? ''}`) : ha1;
  const ha2 = md5Hex(`${method}:${c.uri}`);
  return md5Hex(`${sessionHa1}:${c.nonce}:${c.nc ?? ''}:${c.cnonce ?? ''}:${c.qop ?? ''}:${ha2}`);
}

// ---------------------------------------------------------------- nonces and the challenge

export type NonceState = 'fresh' | 'stale' | 'invalid';

function quote(value: string): string {
  return `"${value.replace(/(["\\])/g, '\\$1')}"`;
}

/**
 * Stateless server nonces: base64url(timestamp ms | random | HMAC-SHA256(timestamp | random | realm)),
 * under a key derived from SECRET_KEY, so any process sharing the key can check them.
 */
export class DigestNonces {
  readonly #key: Buffer;
  readonly opaque: string;

  constructor(
    secretKey: Buffer,
    readonly realm: string,
    readonly lifetimeMs = NONCE_LIFETIME_SECONDS * 1000,
  ) {
    this.#key = createHash('sha256').update('gather:digest-nonce:').update(secretKey).digest();
    this.opaque = createHmac('sha256', this.#key).update(`opaque:${realm}`).digest('hex').slice(0, 32);
  }

  #mac(body: Buffer): Buffer {
    return createHmac('sha256', this.#key).update(body).update(this.realm, 'utf8').digest().subarray(0, NONCE_MAC_BYTES);
  }

  mint(nowMs: number): string {
    const body = Buffer.alloc(8 + NONCE_RANDOM_BYTES);
    body.writeBigUInt64BE(BigInt(Math.max(0, Math.floor(nowMs))));
    randomBytes(NONCE_RANDOM_BYTES).copy(body, 8);
    return Buffer.concat([body, this.#mac(body)]).toString('base64url');
  }

  check(nonce: string, nowMs: number): NonceState {
    if (!/^[A-Za-z0-9_-]{43}$/.test(nonce)) return 'invalid';
    const raw = Buffer.from(nonce, 'base64url');
    // Only the canonical spelling: the nonce string keys the nonce-count window.
    if (raw.length !== 8 + NONCE_RANDOM_BYTES + NONCE_MAC_BYTES || raw.toString('base64url') !== nonce) return 'invalid';
    const body = raw.subarray(0, 8 + NONCE_RANDOM_BYTES);
    if (!timingSafeEqual(raw.subarray(8 + NONCE_RANDOM_BYTES), this.#mac(body))) return 'invalid';
    const issued = Number(body.readBigUInt64BE(0));
    if (issued > nowMs + NONCE_CLOCK_SKEW_MS) return 'invalid';
    return nowMs - issued > this.lifetimeMs ? 'stale' : 'fresh';
  }

  /** When a nonce stops being fresh (ms), for the nonce-count window; 0 for a bad nonce. */
  expiresAt(nonce: string): number {
    const raw = Buffer.from(nonce, 'base64url');
    return raw.length >= 8 ? Number(raw.readBigUInt64BE(0)) + this.lifetimeMs : 0;
  }

  opaqueMatches(opaque: string | undefined): boolean {
    if (opaque === undefined) return true;
    return opaque.length === this.opaque.length && timingSafeEqual(Buffer.from(opaque), Buffer.from(this.opaque));
  }

  challenge(nowMs: number, stale = false): string {
    return `Digest realm=${quote(this.realm)}, nonce="${this.mint(nowMs)}", qop="auth", opaque="${this.opaque}", algorithm=MD5${stale ? ', stale=true' : ''}`;
  }
}

// ---------------------------------------------------------------- nonce counts (replay window)

interface NonceWindow {
  expiresAt: number;
  highest: number;
  seen: Set<number>;
}

/**
 * Which nonce counts each nonce has used, in this process. A count is accepted once; counts may
 * arrive out of order (parallel requests) within WINDOW of the highest seen, older ones are refused.
 * Entries end with their nonce. This is per process: with several processes behind one address a
 * captured header can be replayed once to each other process within the nonce's lifetime — the
 * price of not writing to the database on every request.
 */
export class NonceCounts {
  static readonly WINDOW = 256;
  readonly #windows = new Map<string, NonceWindow>();

  constructor(private readonly maxNonces = 100_000) {}

  /** Records `nc` for `nonce`; false when it was used already (or is too old to tell). */
  use(nonce: string, nc: number, expiresAt: number, nowMs: number): boolean {
    let window = this.#windows.get(nonce);
    if (window && window.expiresAt <= nowMs) {
      this.#windows.delete(nonce);
      window = undefined;
    }
    if (!window) {
      this.#evict(nowMs);
      window = { expiresAt, highest: 0, seen: new Set() };
      this.#windows.set(nonce, window);
    }
    if (nc <= window.highest - NonceCounts.WINDOW || window.seen.has(nc)) return false;
    window.seen.add(nc);
    if (nc > window.highest) {
      window.highest = nc;
      for (const old of window.seen) if (old <= nc - NonceCounts.WINDOW) window.seen.delete(old);
    }
    return true;
  }

  #evict(nowMs: number): void {
    if (this.#windows.size < this.maxNonces) return;
    for (const [nonce, window] of this.#windows) if (window.expiresAt <= nowMs) this.#windows.delete(nonce);
    // Still full of live nonces: forget the oldest (its replays then go unnoticed in this process).
    while (this.#windows.size >= this.maxNonces) {
      const oldest = this.#windows.keys().next();
      if (oldest.done) break;
      this.#windows.delete(oldest.value);
    }
  }
}

/**
 * A new sealed value when the stored one does not cover every current spelling for this realm
 * (users from before Digest existed, a renamed account, a changed DIGEST_REALM); undefined when
 * it does. Called wherever the password is at hand.
 */
export function refreshDigestSecrets(
  sealer: Sealer,
  realm: string,
  user: DigestIdentity & { readonly digest_ha1_sealed: string | null },
  password: string,
): string | undefined {
  const stored = openDigestSecrets(sealer, user.digest_ha1_sealed);
  if (digestSecretsCurrent(stored, realm, user) && stored) {
    // Same spellings: still right only if the HA1 matches this password (a password set elsewhere).
    const login = user.username;
    if (constantTimeEqual(stored.ha1[login] ?? '', computeHa1(login, realm, password))) return undefined;
  }
  return sealDigestSecrets(sealer, realm, user, password);
}
