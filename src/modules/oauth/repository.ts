// SQL for OAuth 2 client applications, authorization codes, access and refresh tokens.
// Codes, tokens and client secrets are looked up by their SHA-256 digest, never stored plain.
import type { Insertable, Selectable } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';
import type {
  OAuthAccessTokensTable,
  OAuthApplicationsTable,
  OAuthAuthorizationCodesTable,
  OAuthRefreshTokensTable,
} from '../../platform/schema.ts';
import type { UserRow } from '../accounts/repository.ts';

export type ApplicationRow = Selectable<OAuthApplicationsTable>;
export type NewApplication = Insertable<OAuthApplicationsTable>;
export type AuthorizationCodeRow = Selectable<OAuthAuthorizationCodesTable>;
export type AccessTokenRow = Selectable<OAuthAccessTokensTable>;
export type RefreshTokenRow = Selectable<OAuthRefreshTokensTable>;

// ---------------------------------------------------------------- applications

export async function insertApplication(db: DbOrTx, application: NewApplication): Promise<ApplicationRow> {
  return db.insertInto('oauth_applications').values(application).returningAll().executeTakeFirstOrThrow();
}

export async function findApplicationByClientId(db: DbOrTx, clientId: string): Promise<ApplicationRow | undefined> {
  return db.selectFrom('oauth_applications').selectAll().where('client_id', '=', clientId).executeTakeFirst();
}

export async function findApplicationById(db: DbOrTx, id: number): Promise<ApplicationRow | undefined> {
  return db.selectFrom('oauth_applications').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listApplicationsOfUser(db: DbOrTx, userId: number): Promise<ApplicationRow[]> {
  return db.selectFrom('oauth_applications').selectAll().where('user_id', '=', userId).orderBy('id').execute();
}

/** Deletes the user's application (its codes and tokens go with it). */
export async function deleteApplicationOfUser(db: DbOrTx, userId: number, id: number): Promise<boolean> {
  const result = await db
    .deleteFrom('oauth_applications')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

// ---------------------------------------------------------------- authorization codes

export async function insertAuthorizationCode(
  db: DbOrTx,
  code: Insertable<OAuthAuthorizationCodesTable>,
): Promise<AuthorizationCodeRow> {
  return db.insertInto('oauth_authorization_codes').values(code).returningAll().executeTakeFirstOrThrow();
}

export async function findAuthorizationCode(db: DbOrTx, codeHash: Uint8Array): Promise<AuthorizationCodeRow | undefined> {
  return db.selectFrom('oauth_authorization_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
}

/** Single use: only the first of two concurrent exchanges deletes the row and gets true. */
export async function deleteAuthorizationCodeByHash(db: DbOrTx, codeHash: Uint8Array): Promise<boolean> {
  const result = await db.deleteFrom('oauth_authorization_codes').where('code_hash', '=', codeHash).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function deleteExpiredAuthorizationCodes(db: DbOrTx, now: Date): Promise<void> {
  await db.deleteFrom('oauth_authorization_codes').where('expires_at', '<', now).execute();
}

// ---------------------------------------------------------------- tokens

export async function insertAccessToken(db: DbOrTx, token: Insertable<OAuthAccessTokensTable>): Promise<AccessTokenRow> {
  return db.insertInto('oauth_access_tokens').values(token).returningAll().executeTakeFirstOrThrow();
}

export async function insertRefreshToken(db: DbOrTx, token: Insertable<OAuthRefreshTokensTable>): Promise<RefreshTokenRow> {
  return db.insertInto('oauth_refresh_tokens').values(token).returningAll().executeTakeFirstOrThrow();
}

/** The access token with its user, for Bearer authentication. */
export async function findAccessTokenWithUser(
  db: DbOrTx,
  tokenHash: Uint8Array,
): Promise<{ token: AccessTokenRow; user: UserRow } | undefined> {
  const row = await db
    .selectFrom('oauth_access_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .selectAll('u')
    .select([
      't.id as token_id',
      't.token_hash',
      't.application_id',
      't.scope',
      't.expires_at',
      't.created_at as token_created_at',
    ])
    .where('t.token_hash', '=', tokenHash)
    .executeTakeFirst();
  if (!row) return undefined;
  const { token_id, token_hash, application_id, scope, expires_at, token_created_at, ...user } = row;
  return {
    token: { id: token_id, token_hash, application_id, user_id: user.id, scope, expires_at, created_at: token_created_at },
    user,
  };
}

export async function findAccessToken(db: DbOrTx, tokenHash: Uint8Array): Promise<AccessTokenRow | undefined> {
  return db.selectFrom('oauth_access_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

export async function findRefreshToken(db: DbOrTx, tokenHash: Uint8Array): Promise<RefreshTokenRow | undefined> {
  return db.selectFrom('oauth_refresh_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

export async function deleteAccessToken(db: DbOrTx, id: number): Promise<void> {
  await db.deleteFrom('oauth_access_tokens').where('id', '=', id).execute();
}

/**
 * Marks a refresh token revoked and deletes the access token issued with it. Only the first of
 * two concurrent uses gets true, so a refresh token can be exchanged once.
 */
export async function revokeRefreshToken(db: DbOrTx, tokenHash: Uint8Array, now: Date): Promise<boolean> {
  const revoked = await db
    .updateTable('oauth_refresh_tokens')
    .set({ revoked_at: now })
    .where('token_hash', '=', tokenHash)
    .where('revoked_at', 'is', null)
    .returning('access_token_id')
    .executeTakeFirst();
  if (!revoked) return false;
  if (revoked.access_token_id !== null) await deleteAccessToken(db, revoked.access_token_id);
  return true;
}
