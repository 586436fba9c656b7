// @node-oauth/oauth2-server, loaded when an OAuth endpoint first needs it. Only the authorization
// decision and the token endpoint use it, which most servers never serve; loaded at start it held
// its heap for the life of every process (bench/RESULTS.md, 2026-11-28). The bundle hoists a
// static import of a package to its top, so only this dynamic import defers it (node loads a
// module once, so later calls cost nothing).
import type OAuth2Server from '@node-oauth/oauth2-server';

export type OAuthLibrary = typeof OAuth2Server;

export async function loadOAuthLibrary(): Promise<OAuthLibrary> {
  return (await import('@node-oauth/oauth2-server')).default;
}
