// The web forms' service worker (served as /forms/sw.js, scope /forms/): once a form's page has
// been opened online, it opens again offline. Hashed assets are served from the cache first (they
// never change), and so is a page already kept (refreshed behind it); everything else the pages
// read (the session, the form list, XForm, manifest and media, a record being edited) is fetched
// from the network and kept, and the kept copy answers when the network cannot. Posts are never
// touched: the page keeps records that cannot be sent in its outbox (outbox.ts).

// The few service-worker types used here (the DOM library this app compiles against has not them).
interface ExtendableEvent extends Event {
  waitUntil(promise: Promise<unknown>): void;
}
interface FetchEvent extends ExtendableEvent {
  readonly request: Request;
  respondWith(response: Promise<Response>): void;
}
interface MessageEvent extends ExtendableEvent {
  readonly data: unknown;
}
/** The Static Routing API (Chromium 123+): routes answered without starting this worker. */
interface InstallEvent extends ExtendableEvent {
  addRoutes?(rules: readonly { condition: { urlPattern?: string; requestMode?: string }; source: 'cache' | 'network' | 'fetch-event' }[]): Promise<void>;
}
interface ServiceWorkerScope {
  addEventListener(type: 'install', listener: (event: InstallEvent) => void): void;
  addEventListener(type: 'activate', listener: (event: ExtendableEvent) => void): void;
  addEventListener(type: 'fetch', listener: (event: FetchEvent) => void): void;
  addEventListener(type: 'message', listener: (event: MessageEvent) => void): void;
  skipWaiting(): Promise<void>;
  readonly clients: { claim(): Promise<void> };
  readonly location: Location;
}
declare const self: ServiceWorkerScope;

const CACHE = 'gather-web-forms-1';

function isAsset(url: URL): boolean {
  return url.pathname.startsWith('/assets/');
}

/**
 * A hashed asset as kept: without its Vary header (the server varies on Accept, which a stylesheet
 * and a script ask with differently), so that any request for it matches, the browser's static
 * route included (it cannot be told to ignore Vary).
 */
function asKeptAsset(response: Response): Response {
  const headers = new Headers(response.headers);
  headers.delete('vary');
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

async function keepAsset(cache: Cache, address: string): Promise<void> {
  const response = await fetch(address, { credentials: 'same-origin' });
  if (response.ok) await cache.put(address, asKeptAsset(response));
}

async function fromCacheFirst(request: Request): Promise<Response> {
  const cache = await caches.open(CACHE);
  const kept = await cache.match(request, { ignoreVary: true });
  if (kept) return kept;
  const fresh = await fetch(request);
  if (fresh.ok) await cache.put(request, asKeptAsset(fresh.clone()));
  return fresh;
}

async function fromNetworkFirst(event: FetchEvent): Promise<Response> {
  const { request } = event;
  const cache = await caches.open(CACHE);
  try {
    const fresh = await fetch(request);
    // Kept behind the answer: the page does not wait for the disk.
    if (fresh.ok) event.waitUntil(cache.put(request, fresh.clone()).catch(() => undefined));
    return fresh;
  } catch (error) {
    // A kept page or file is the same whatever headers asked for it (Vary: Origin, Accept-Encoding).
    const kept = await cache.match(request, { ignoreVary: true });
    if (kept) return kept;
    throw error;
  }
}

/**
 * A form's page (the same small HTML for every form) from the cache when kept, so that it starts
 * at once, while the network's copy replaces the kept one for next time; from the network first
 * when not kept yet.
 */
async function pageFromCacheFirst(event: FetchEvent): Promise<Response> {
  const cache = await caches.open(CACHE);
  const kept = await cache.match(event.request, { ignoreVary: true });
  const fresh = fetch(event.request).then(async (response) => {
    if (response.ok) await cache.put(event.request, response.clone());
    return response;
  });
  if (!kept) return fresh;
  event.waitUntil(fresh.catch(() => undefined));
  return kept;
}

/**
 * At install, the web forms' scripts and styles (listed by the server from the build): kept
 * here, Chromium also keeps their compiled code, so the next opening starts sooner. A failure
 * leaves them to be kept as they are used.
 */
async function keepWebFormAssets(): Promise<void> {
  try {
    const listed = await fetch('/forms/sw-assets.json');
    const assets = listed.ok ? ((await listed.json()) as unknown) : [];
    if (!Array.isArray(assets)) return;
    const cache = await caches.open(CACHE);
    await Promise.all(assets.filter((asset): asset is string => typeof asset === 'string').map((asset) => keepAsset(cache, asset).catch(() => undefined)));
  } catch {
    // offline or a partial list: kept on use instead
  }
}

/**
 * Hashed scripts and styles never change: where the browser has the Static Routing API, it answers
 * them from this worker's cache without starting the worker (or from the network when not kept),
 * which is most of what a second opening of a page waits for.
 */
async function routeAssetsToCache(event: InstallEvent): Promise<void> {
  try {
    await event.addRoutes?.([{ condition: { urlPattern: '/assets/*' }, source: 'cache' }]);
  } catch {
    // Not supported as written: the fetch handler below serves them from the cache first.
  }
}

self.addEventListener('install', (event) => event.waitUntil(Promise.all([routeAssetsToCache(event), keepWebFormAssets()]).then(() => self.skipWaiting())));
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== 'GET' || url.origin !== self.location.origin) return;
  if (isAsset(url)) event.respondWith(fromCacheFirst(event.request));
  else if (event.request.mode === 'navigate') event.respondWith(pageFromCacheFirst(event));
  else event.respondWith(fromNetworkFirst(event));
});

// The page names what it loaded before this worker controlled it (its first visit), to be kept.
self.addEventListener('message', (event) => {
  const data = event.data as { keep?: unknown } | null;
  if (!data || !Array.isArray(data.keep)) return;
  const addresses = data.keep.filter((item): item is string => typeof item === 'string' && item.startsWith('/'));
  event.waitUntil(
    caches.open(CACHE).then(async (cache) => {
      for (const address of addresses) {
        if (await cache.match(address, { ignoreVary: true })) continue;
        try {
          if (isAsset(new URL(address, self.location.origin))) {
            await keepAsset(cache, address);
            continue;
          }
          const response = await fetch(address, { credentials: 'same-origin' });
          if (response.ok) await cache.put(address, response);
        } catch {
          // offline again: kept the next time the page is opened online
        }
      }
    }),
  );
});

// A module, so that the declarations above stay local to this file.
export {};
