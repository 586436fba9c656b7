// Password hashing, token keys and sealing. Passwords: argon2id (memory-hard). Tokens: random
// keys, stored as SHA-256 for lookup plus AES-256-GCM under SECRET_KEY for display.
import { createCipheriv, createDecipheriv, createHash, hash, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { channel } from 'node:diagnostics_channel';
import { promisify } from 'node:util';
import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';

const pbkdf2Async = promisify(pbkdf2);

/** Published to once per password-hash verification (the slow step): lets tests count them. */
export const PASSWORD_VERIFY_CHANNEL = 'gather:password-verify';
const verifyChannel = channel(PASSWORD_VERIFY_CHANNEL);

export async function hashPassword(password: string): Promise<string> {
  return argon2Hash(password, { algorithm: 2 /* argon2id */, memoryCost: 19_456, timeCost: 2, parallelism: 1 });
}

/** Verifies an argon2 hash, or a Django `pbkdf2_sha256$iterations$salt$hash` imported from onadata. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (!stored) return false;
  if (verifyChannel.hasSubscribers) verifyChannel.publish(undefined);
  if (stored.startsWith('$argon2')) {
    try {
      return await argon2Verify(stored, password);
    } catch {
      return false;
    }
  }
  const django = /^pbkdf2_sha256\$(\d+)\$([^$]+)\$([A-Za-z0-9+/=]+)$/.exec(stored);
  if (django) {
    const [, iterations, salt, expected] = django;
    if (!iterations || !salt || !expected) return false;
    const want = Buffer.from(expected, 'base64');
    const got = await pbkdf2Async(password, salt, Number(iterations), want.length, 'sha256');
    return got.length === want.length && timingSafeEqual(got, want);
  }
  return false;
}

/**
 * A hash of a random password, made once with the same parameters as real ones: checked in place
 * of a missing or unusable account's hash so that a wrong login costs the same either way.
 */
let standInHash: Promise<string> | undefined;

/**
 * Verifies a password against the account's hash, or (no account, or one that may not sign in)
 * against the stand-in hash and fails: as slow either way, so timing tells no one which logins exist.
 */
export async function verifyPasswordOrStandIn(password: string, stored: string | undefined): Promise<boolean> {
  if (stored) return verifyPassword(password, stored);
  standInHash ??= hashPassword(randomBytes(16).toString('hex'));
  await verifyPassword(password, await standInHash);
  return false;
}

/** Whether a stored hash should be replaced by a fresh argon2id hash at the next login. */
export function needsRehash(stored: string): boolean {
  return !stored.startsWith('$argon2id$');
}

/** A 40-hex-character key, as DRF tokens look. */
export function newTokenKey(): string {
  return randomBytes(20).toString('hex');
}

export function sha256(value: string): Buffer {
  return hash('sha256', value, 'buffer');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = sha256(a);
  const right = sha256(b);
  return timingSafeEqual(left, right);
}

export interface Sealer {
  seal(plain: string): string;
  open(sealed: string): string;
}

/** AES-256-GCM with a key derived from SECRET_KEY; output is base64url(iv | tag | ciphertext). */
export function createSealer(secretKey: Buffer): Sealer {
  const key = createHash('sha256').update('gather:token-seal:').update(secretKey).digest();
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    },
    open(sealed) {
      const raw = Buffer.from(sealed, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}
