// The per-process caches the request context carries, as the services use them. The classes that
// implement them belong to their modules (auth, submissions); src/runtime.ts builds them. Declared
// here so that src/context.ts names no module.
import type { Principal } from './access/principal.ts';
import type { Role } from './access/roles.ts';

/** The user a credential authenticated: the row a Principal carries. */
export type CachedUser = Extract<Principal, { kind: 'user' }>['user'];

/** A password check that succeeded, tied to the password hash it was checked against. */
export interface CachedPassword {
  userId: number;
  passwordHash: string;
}

export interface CachedToken {
  user: CachedUser;
  tokenCreatedAt: Date;
}

/** A user's own token keys, as /api/v1/user shows them. */
export interface UserTokens {
  apiToken: string;
  tempToken: string;
  tempCreatedAt: Date;
}

/** Recent successful authentications (src/modules/auth/auth-cache.ts). Times are epoch ms. */
export interface AuthMemory {
  getPassword(key: string, now: number): CachedPassword | undefined;
  setPassword(key: string, userId: number, passwordHash: string, now: number): void;
  getToken(key: string, now: number): CachedToken | undefined;
  setToken(key: string, value: CachedToken, now: number): void;
  getUserTokens(userId: number, now: number): UserTokens | undefined;
  setUserTokens(userId: number, value: UserTokens, now: number): void;
  /** Every write that changes a user or their tokens calls this. */
  forgetUser(userId: number): void;
}

/** The ordered ids a data query matched, valid for one form data version. */
export interface MatchList {
  readonly version: string;
  readonly ids: Int32Array;
  /** The live records' highest id when the list was made (0 for none). */
  readonly highWater?: number;
  /** One array per numeric sort key, parallel to ids; absent when the order is not numeric. */
  readonly keys?: readonly Float64Array[];
}

/** Match lists by query (src/modules/submissions/match-cache.ts). */
export interface MatchMemory {
  /** The entry under key whatever its version (the caller brings it up to date). */
  peek(key: string): MatchList | undefined;
  put(key: string, entry: MatchList): void;
}

/** The facts about a form that a decision to accept submissions to it rests on. */
export interface SubmissionForm {
  id: number;
  owner_id: number;
  id_string: string;
  title: string;
  version: string;
  hash: string;
  downloadable: boolean;
  require_auth: boolean;
  encrypted: boolean;
  shared: boolean;
}

/** A decision that a caller may submit to a form, with the facts it was made from. */
export interface SubmissionAccess {
  form: SubmissionForm;
  /** The owner's username in lower case when the URL named it (`/{username}/submission`). */
  ownerLogin: string | null;
  ownerRequireAuth: boolean;
  /** The submitting user (null: anonymous) and their role on the form when decided. */
  actorId: number | null;
  role: Role | null;
}

/** Submit decisions by device and form (src/modules/submissions/target-cache.ts). */
export interface SubmissionTargetMemory {
  get(key: string, now: number): SubmissionAccess | undefined;
  set(key: string, access: SubmissionAccess, now: number): void;
  forget(key: string): void;
}
