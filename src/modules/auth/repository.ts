// SQL for API tokens, temporary tokens and failed-login counters.
import { sql, type Selectable } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';
import type { TokenTable, UsersTable } from '../../platform/schema.ts';

export type TokenKind = 'api_tokens' | 'temp_tokens';
export type TokenRow = Selectable<TokenTable>;

export async function findTokenWithUser(
  db: DbOrTx,
  kind: TokenKind,
  keyHash: Uint8Array,
): Promise<{ token: TokenRow; user: Selectable<UsersTable> } | undefined> {
  const row = await db
    .selectFrom(`${kind} as t`)
    .innerJoin('users as u', 'u.id', 't.user_id')
    .selectAll('u')
    .select(['t.key_hash', 't.key_sealed', 't.created_at as token_created_at'])
    .where('t.key_hash', '=', keyHash)
    .executeTakeFirst();
  if (!row) return undefined;
  const { key_hash, key_sealed, token_created_at, ...user } = row;
  return { token: { user_id: user.id, key_hash, key_sealed, created_at: token_created_at }, user };
}

export async function findTokenOfUser(db: DbOrTx, kind: TokenKind, userId: number): Promise<TokenRow | undefined> {
  return db.selectFrom(kind).selectAll().where('user_id', '=', userId).executeTakeFirst();
}

/** Replaces the user's token of this kind (one per user). */
export async function replaceToken(
  db: DbOrTx,
  kind: TokenKind,
  token: { user_id: number; key_hash: Uint8Array; key_sealed: string; created_at: Date },
): Promise<void> {
  await db.deleteFrom(kind).where('user_id', '=', token.user_id).execute();
  await db.insertInto(kind).values(token).execute();
}

export async function deleteToken(db: DbOrTx, kind: TokenKind, userId: number): Promise<boolean> {
  const result = await db.deleteFrom(kind).where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export interface FailureRow {
  failures: number;
  locked_until: Date | null;
}

export async function findLoginFailures(db: DbOrTx, key: string): Promise<FailureRow | undefined> {
  return db.selectFrom('login_failures').select(['failures', 'locked_until']).where('key', '=', key).executeTakeFirst();
}

/** Counts one more failure; the row locks once `limit` is reached. Returns the new count. */
export async function recordLoginFailure(
  db: DbOrTx,
  key: string,
  now: Date,
  limit: number,
  lockedUntil: Date,
): Promise<FailureRow> {
  const row = await db
    .insertInto('login_failures')
    .values({ key, failures: 1, first_failed_at: now, locked_until: limit <= 1 ? lockedUntil : null })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        failures: sql<number>`login_failures.failures + 1`,
        locked_until: sql<Date | null>`CASE WHEN login_failures.failures + 1 >= ${limit} THEN ${lockedUntil}::timestamptz ELSE NULL END`,
      }),
    )
    .returning(['failures', 'locked_until'])
    .executeTakeFirstOrThrow();
  return row;
}

export async function clearLoginFailures(db: DbOrTx, key: string): Promise<void> {
  await db.deleteFrom('login_failures').where('key', '=', key).execute();
}

/** Keeps a browser session (its key's hash), dropping the user's sessions that have expired. */
export async function insertBrowserSession(db: DbOrTx, session: { key_hash: Uint8Array; user_id: number; created_at: Date; expires_at: Date }): Promise<void> {
  await db.deleteFrom('browser_sessions').where('user_id', '=', session.user_id).where('expires_at', '<=', session.created_at).execute();
  await db.insertInto('browser_sessions').values(session).execute();
}

/** The active user of a live browser session. */
export async function findBrowserSessionUser(db: DbOrTx, keyHash: Uint8Array, now: Date): Promise<Selectable<UsersTable> | undefined> {
  return db
    .selectFrom('browser_sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .selectAll('u')
    .where('s.key_hash', '=', keyHash)
    .where('s.expires_at', '>', now)
    .where('u.is_active', '=', true)
    .executeTakeFirst();
}

export async function deleteBrowserSession(db: DbOrTx, keyHash: Uint8Array): Promise<void> {
  await db.deleteFrom('browser_sessions').where('key_hash', '=', keyHash).execute();
}
