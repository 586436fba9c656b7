// @node-oauth/oauth2-server, loaded when an OAuth endpoint first needs it. Only the authorization
// decision and the token endpoint use it, which most servers never serve; loaded at start it held
// about 1.6 MB of heap for the life of every process. The bundle hoists a static import of a
// package to its top, so only this dynamic import defers it.
import type OAuth2Server from '@node-oauth/oauth2-server';

export type OAuthLibrary = typeof OAuth2Server;

let loading: Promise<OAuthLibrary> | undefined;

export function loadOAuthLibrary(): Promise<OAuthLibrary> {
  loading ??= import('@node-oauth/oauth2-server').then((module) => module.default);
  return loading;
}
