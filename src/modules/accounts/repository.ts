// SQL for user accounts and their profile fields.
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';
import type { UsersTable } from '../../platform/schema.ts';

export type UserRow = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type UserPatch = Updateable<UsersTable>;

export async function findUserById(db: DbOrTx, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findActiveUserById(db: DbOrTx, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).where('is_active', '=', true).executeTakeFirst();
}

/** Case-insensitive username match, active users only. */
export async function findActiveUserByUsername(db: DbOrTx, username: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(username)`, '=', username.toLowerCase())
    .where('is_active', '=', true)
    .executeTakeFirst();
}

/** The account a login name refers to: its username (any case) or, failing that, its e-mail. */
export async function findUserByLogin(db: DbOrTx, login: string): Promise<UserRow | undefined> {
  const lower = login.toLowerCase();
  const byName = await db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(username)`, '=', lower)
    .executeTakeFirst();
  if (byName || !login.includes('@')) return byName;
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', lower)
    .where('is_org', '=', false)
    .orderBy('id')
    .executeTakeFirst();
}

export async function usernameExists(db: DbOrTx, username: string, exceptId?: number): Promise<boolean> {
  let query = db.selectFrom('users').select('id').where(sql<string>`lower(username)`, '=', username.toLowerCase());
  if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
  return (await query.executeTakeFirst()) !== undefined;
}

/**
 * Whether a person's account already uses the e-mail, in any case: sign-in by e-mail ignores case,
 * so two accounts differing only in case could not both sign in by it (onadata compares exactly).
 * Organisation accounts never sign in and may share a member's address.
 */
export async function emailInUse(db: DbOrTx, email: string, exceptId?: number): Promise<boolean> {
  let query = db.selectFrom('users').select('id').where(sql<string>`lower(email)`, '=', email.toLowerCase()).where('is_org', '=', false);
  if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
  return (await query.executeTakeFirst()) !== undefined;
}

const ACCOUNT_NAMES_LOCK_SPACE = 8023;

/**
 * Serialises registrations that want the same username or e-mail (any case) until the
 * transaction ends, so the second sees the first's account and gets the usual 400.
 */
export async function lockAccountNames(db: DbOrTx, names: readonly string[]): Promise<void> {
  for (const name of [...new Set(names.map((n) => n.toLowerCase()))].sort()) {
    await sql`SELECT pg_advisory_xact_lock(${ACCOUNT_NAMES_LOCK_SPACE}::integer, hashtext(${name}))`.execute(db);
  }
}

export async function insertUser(db: DbOrTx, user: NewUser): Promise<UserRow> {
  return db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
}

export async function updateUser(db: DbOrTx, id: number, patch: UserPatch): Promise<UserRow> {
  return db.updateTable('users').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export interface UserListFilter {
  excludeOrgs: boolean;
  /** Each term must match: equal to the e-mail (any case) or a substring of the username (any case). */
  searchTerms: readonly string[];
}

export async function listActiveUsers(db: DbOrTx, filter: UserListFilter): Promise<UserRow[]> {
  let query = db.selectFrom('users').selectAll().where('is_active', '=', true);
  if (filter.excludeOrgs) query = query.where('is_org', '=', false);
  for (const term of filter.searchTerms) {
    const escaped = term.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);
    query = query.where((eb) =>
      eb.or([
        eb(sql<string>`lower(email)`, '=', term.toLowerCase()),
        eb(sql<string>`lower(username)`, 'like', `%${escaped}%`),
      ]),
    );
  }
  return query.orderBy('id').execute();
}

/** Exact (case-sensitive) usernames, active users, sorted by username. */
export async function listActiveUsersByUsernames(db: DbOrTx, usernames: readonly string[]): Promise<UserRow[]> {
  if (usernames.length === 0) return [];
  return db
    .selectFrom('users')
    .selectAll()
    .where('username', 'in', usernames)
    .where('is_active', '=', true)
    .orderBy('username')
    .execute();
}

export async function addPasswordHistory(db: DbOrTx, userId: number, passwordHash: string): Promise<void> {
  await db.insertInto('password_history').values({ user_id: userId, password_hash: passwordHash }).execute();
}

export async function listPasswordHistory(db: DbOrTx, userId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('password_history')
    .select('password_hash')
    .where('user_id', '=', userId)
    .orderBy('id', 'desc')
    .limit(10)
    .execute();
  return rows.map((r) => r.password_hash);
}

/** Exact usernames, active or not (sharing reports the inactive ones by name). */
export async function listUsersByUsernames(db: DbOrTx, usernames: readonly string[]): Promise<UserRow[]> {
  if (usernames.length === 0) return [];
  return db.selectFrom('users').selectAll().where('username', 'in', usernames).execute();
}

export async function listUsersByIds(db: DbOrTx, ids: readonly number[]): Promise<UserRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('users').selectAll().where('id', 'in', ids).orderBy('id').execute();
}
