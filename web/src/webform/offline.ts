// Registers the web forms' service worker (sw.ts) and hands it what this page loaded before the
// worker controlled it, and the form's media files, so that the page opens again offline.
export async function keepForOffline(media: readonly string[]): Promise<void> {
  if (!('serviceWorker' in navigator)) return;
  try {
    await navigator.serviceWorker.register('/forms/sw.js', { scope: '/forms/' });
    const ready = await navigator.serviceWorker.ready;
    const loaded = performance
      .getEntriesByType('resource')
      .map((entry) => new URL(entry.name))
      .filter((url) => url.origin === window.location.origin)
      .map((url) => `${url.pathname}${url.search}`);
    const keep = [...new Set([`${window.location.pathname}${window.location.search}`, ...loaded, ...media])];
    ready.active?.postMessage({ keep });
  } catch {
    // Without a service worker the page still works online; only offline opening is lost.
  }
}
