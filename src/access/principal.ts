import type { UserRow } from '../modules/accounts/repository.ts';

export type AuthScheme = 'basic' | 'token' | 'temptoken' | 'bearer' | 'digest';

export type Principal =
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'user'; readonly user: UserRow; readonly scheme: AuthScheme };

export const anonymous: Principal = Object.freeze({ kind: 'anonymous' });

export function isAuthenticated(principal: Principal): principal is Extract<Principal, { kind: 'user' }> {
  return principal.kind === 'user';
}
