// The web app (web/, built by Vite into web/dist): its page at `/` and at each of its own client
// routes, and its hashed files under /assets/. Every first path segment used here is a reserved
// username (accounts/validation.ts), so no `/{username}/…` OpenRosa path can ever mean a page of
// the app, and the API, /o/ and /api/docs keep their own prefixes.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../errors.ts';
import { PROJECT_ROOT } from '../platform/project-root.ts';

/** The app's client-side routes (web/src/paths.ts), in Fastify's syntax: each answers index.html. */
export const APP_PAGES = ['/', '/login', '/register', '/projects', '/projects/*', '/account', '/account/*'] as const;

export const WEB_DIST = join(PROJECT_ROOT, 'web/dist');

// Scripts and styles come only from this server; the API is the only place the app connects to.
const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'self'",
].join('; ');

/** The app's policy, letting images come from the map's tile server too when MAP_TILE_URL names one. */
function appCsp(tileUrl: string): string {
  const origin = /^https?:\/\/[^/]+/i.exec(tileUrl)?.[0];
  // A host template such as `{a-c}.tile.example.org` becomes the wildcard `*.tile.example.org`.
  return origin ? PAGE_CSP.replace("img-src 'self' data: blob:", `img-src 'self' data: blob: ${origin.replace(/\{[^}]*\}/g, '*')}`) : PAGE_CSP;
}

const TYPES: Readonly<Record<string, string>> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  json: 'application/json; charset=utf-8',
  map: 'application/json; charset=utf-8',
  png: 'image/png',
  woff2: 'font/woff2',
};
const COMPRESSIBLE = new Set(['js', 'css', 'svg', 'json', 'map']);

interface Asset {
  readonly type: string;
  readonly body: Buffer;
  readonly gzip: Buffer | undefined;
}

/** Assets are named by their content hash, so one read (and one compression) serves for good. */
const assets = new Map<string, Asset>();

async function loadAsset(name: string): Promise<Asset | undefined> {
  const found = assets.get(name);
  if (found) return found;
  const extension = name.slice(name.lastIndexOf('.') + 1);
  let body: Buffer;
  try {
    body = await readFile(join(WEB_DIST, 'assets', name));
  } catch {
    return undefined;
  }
  const asset = { type: TYPES[extension] ?? 'application/octet-stream', body, gzip: COMPRESSIBLE.has(extension) ? gzipSync(body) : undefined };
  assets.set(name, asset);
  return asset;
}

function acceptsGzip(request: FastifyRequest): boolean {
  return /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
}

// ODK Web Forms sets styles from script (PrimeVue) and evaluates XPath with a WebAssembly parser
// (tree-sitter), which needs 'wasm-unsafe-eval' (WebAssembly only, not eval); it is still only
// ever connected to this server.
// Its fonts are inlined as data: addresses.
const WEB_FORM_CSP = PAGE_CSP.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")
  .replace("script-src 'self'", "script-src 'self' 'wasm-unsafe-eval'")
  .replace("img-src", "font-src 'self' data:; worker-src 'self'; img-src");

async function sendPage(reply: FastifyReply, file: 'index.html' | 'webform.html', csp: string): Promise<FastifyReply> {
  let page: Buffer;
  try {
    page = await readFile(join(WEB_DIST, file));
  } catch {
    throw errors.webAppNotBuilt();
  }
  return reply
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-cache')
    .header('content-security-policy', csp)
    .send(page);
}

interface ManifestChunk {
  readonly file: string;
  readonly css?: readonly string[];
  readonly imports?: readonly string[];
  readonly dynamicImports?: readonly string[];
}

/** The web form page's files (/assets/…), gathered from Vite's manifest once per build. */
let webFormAssetList: { readonly manifest: string; readonly list: readonly string[] } | undefined;

async function webFormAssets(): Promise<readonly string[]> {
  const path = join(WEB_DIST, '.vite/manifest.json');
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return [];
  }
  if (webFormAssetList?.manifest === text) return webFormAssetList.list;
  const manifest = JSON.parse(text) as Record<string, ManifestChunk>;
  const files = new Set<string>();
  const visit = (key: string): void => {
    const chunk = manifest[key];
    if (!chunk || files.has(`/${chunk.file}`)) return;
    files.add(`/${chunk.file}`);
    for (const css of chunk.css ?? []) files.add(`/${css}`);
    for (const next of [...(chunk.imports ?? []), ...(chunk.dynamicImports ?? [])]) visit(next);
  };
  visit('webform.html');
  webFormAssetList = { manifest: text, list: [...files] };
  return webFormAssetList.list;
}

/** `webFormPages`: the web forms' pages (src/modules/webforms/urls.ts), handed in by src/app.ts. */
export function registerWebAppRoutes(app: FastifyInstance, webFormPages: readonly string[]): void {
  for (const url of APP_PAGES) {
    app.get(url, {
      config: { access: 'anyone' },
      schema: { hide: true },
      handler: (request, reply) => sendPage(reply, 'index.html', appCsp(request.ctx.config.mapTileUrl)),
    });
  }
  // What the web forms' service worker keeps at install: the webform.html entry's scripts and
  // styles and those they import, from Vite's build manifest.
  app.get('/forms/sw-assets.json', {
    config: { access: 'anyone' },
    schema: { hide: true },
    handler: async (_request, reply) => reply.header('cache-control', 'no-cache').send(await webFormAssets()),
  });
  // The web forms' service worker, at the top of the pages it serves offline (its scope is /forms/).
  app.get('/forms/sw.js', {
    config: { access: 'anyone' },
    schema: { hide: true },
    handler: async (_request, reply) => {
      let script: Buffer;
      try {
        script = await readFile(join(WEB_DIST, 'webform-sw.js'));
      } catch {
        throw errors.webAppNotBuilt();
      }
      return reply.header('content-type', TYPES['js'] ?? 'text/javascript').header('cache-control', 'no-cache').send(script);
    },
  });
  for (const url of webFormPages) {
    app.get(url, {
      config: { access: 'anyone' },
      schema: { hide: true },
      handler: (_request, reply) => sendPage(reply, 'webform.html', WEB_FORM_CSP),
    });
  }

  app.get<{ Params: { name: string } }>('/assets/:name', {
    config: { access: 'anyone' },
    schema: { hide: true },
    handler: async (request, reply) => {
      const { name } = request.params;
      const asset = /^[\w-][\w.-]*$/.test(name) ? await loadAsset(name) : undefined;
      if (!asset) throw errors.notFound();
      reply.header('content-type', asset.type).header('cache-control', 'public, max-age=31536000, immutable');
      if (!asset.gzip) return reply.send(asset.body);
      reply.header('vary', 'Accept-Encoding');
      return acceptsGzip(request) ? reply.header('content-encoding', 'gzip').send(asset.gzip) : reply.send(asset.body);
    },
  });
}
