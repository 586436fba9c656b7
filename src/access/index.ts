// The one place where "may this caller do this?" is decided. Routes declare a RouteAccess rule
// (checked before the handler runs); services ask the object-level questions below.
import { errors } from '../errors.ts';
import type { UserRow } from '../modules/accounts/repository.ts';
import { isAuthenticated, type Principal } from './principal.ts';

export type { Principal } from './principal.ts';
export { anonymous, isAuthenticated } from './principal.ts';

/** Who may call a route at all. `anyone` includes anonymous callers. */
export type RouteAccess = 'anyone' | 'authenticated';

export const ROUTE_ACCESS_VALUES: readonly RouteAccess[] = ['anyone', 'authenticated'];

/** Throws 401 when the route needs an authenticated caller and there is none. */
export function checkRouteAccess(rule: RouteAccess, actor: Principal, challenge: string): void {
  if (rule === 'authenticated' && !isAuthenticated(actor)) throw errors.notAuthenticated(challenge);
}

/** The acting user, for services behind `authenticated` routes. */
export function requireUser(actor: Principal): UserRow {
  if (!isAuthenticated(actor)) throw errors.notAuthenticated('Basic realm="Gather"');
  return actor.user;
}

/** A profile's own user, and whoever created it through the API, may change it. */
export function canChangeProfile(actor: Principal, profile: UserRow): boolean {
  return isAuthenticated(actor) && (actor.user.id === profile.id || profile.created_by === actor.user.id);
}

/** onadata's `view_profile`: the same holders as change; only they see the e-mail address. */
export function canSeeProfileEmail(actor: Principal, profile: UserRow): boolean {
  return canChangeProfile(actor, profile);
}

/** Profile metadata is shown only to the profile's own user. */
export function canSeeProfileMetadata(actor: Principal, profile: UserRow): boolean {
  return isAuthenticated(actor) && actor.user.id === profile.id;
}

/** Only the account itself may change its password. */
export function canChangePassword(actor: Principal, profile: UserRow): boolean {
  return isAuthenticated(actor) && actor.user.id === profile.id;
}
