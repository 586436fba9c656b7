// The web forms' service worker (served as /forms/sw.js, scope /forms/): once a form's page has
// been opened online, it opens again offline. Hashed assets are served from the cache first (they
// never change); everything else the pages read (the page itself, the session, the form list,
// XForm, manifest and media, a record being edited) is fetched from the network and kept, and the
// kept copy answers when the network cannot. Posts are never touched: the page keeps records that
// cannot be sent in its outbox (outbox.ts).

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
interface ServiceWorkerScope {
  addEventListener(type: 'install' | 'activate', listener: (event: ExtendableEvent) => void): void;
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

async function fromCacheFirst(request: Request): Promise<Response> {
  const cache = await caches.open(CACHE);
  const kept = await cache.match(request);
  if (kept) return kept;
  const fresh = await fetch(request);
  if (fresh.ok) await cache.put(request, fresh.clone());
  return fresh;
}

async function fromNetworkFirst(request: Request): Promise<Response> {
  const cache = await caches.open(CACHE);
  try {
    const fresh = await fetch(request);
    if (fresh.ok) await cache.put(request, fresh.clone());
    return fresh;
  } catch (error) {
    // A kept page or file is the same whatever headers asked for it (Vary: Origin, Accept-Encoding).
    const kept = await cache.match(request, { ignoreVary: true });
    if (kept) return kept;
    throw error;
  }
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
    if (Array.isArray(assets)) await (await caches.open(CACHE)).addAll(assets.filter((asset): asset is string => typeof asset === 'string'));
  } catch {
    // offline or a partial list: kept on use instead
  }
}

self.addEventListener('install', (event) => event.waitUntil(keepWebFormAssets().then(() => self.skipWaiting())));
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== 'GET' || url.origin !== self.location.origin) return;
  event.respondWith(isAsset(url) ? fromCacheFirst(event.request) : fromNetworkFirst(event.request));
});

// The page names what it loaded before this worker controlled it (its first visit), to be kept.
self.addEventListener('message', (event) => {
  const data = event.data as { keep?: unknown } | null;
  if (!data || !Array.isArray(data.keep)) return;
  const addresses = data.keep.filter((item): item is string => typeof item === 'string' && item.startsWith('/'));
  event.waitUntil(
    caches.open(CACHE).then(async (cache) => {
      for (const address of addresses) {
        if (await cache.match(address)) continue;
        try {
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
