// Headless Chromium (Debian's `chromium`) for the browser tests, driven by playwright-core.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
// Without these the network-less machine floods with refused connections (updates, sync, QUIC).
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const chromiumMissing = !existsSync(CHROMIUM);
/** Skips where Chromium is not installed, except in CI, where its absence must fail. */
export const skipWithoutChromium = chromiumMissing && !process.env['CI'] ? `${CHROMIUM} is missing (apt-get install chromium chromium-driver); CI would fail here` : false;

export interface Browsing {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Script errors and Content-Security-Policy refusals seen so far. */
  readonly errors: string[];
  /** Requests to anywhere but `origin`, and requests that failed (other than ones the page cancelled). */
  readonly outside: string[];
  close(): Promise<void>;
}

export interface BrowseOptions {
  readonly viewport?: { readonly width: number; readonly height: number };
  /** The browser's language (navigator.languages and Accept-Language), e.g. `fr-FR`. */
  readonly locale?: string;
}

/**
 * One Chromium per test process, started at the first browse(): each test gets a context of its
 * own (storage, cookies, service workers, drafts: nothing carries over from another test), which
 * costs a fraction of a browser's start. The file's `after` hook calls closeBrowser().
 */
let shared: Promise<Browser> | undefined;

export async function closeBrowser(): Promise<void> {
  const launching = shared;
  shared = undefined;
  // A launch that failed has failed its tests already; there is nothing to close.
  const browser = await launching?.catch(() => undefined);
  await browser?.close();
}

/** A fresh browser context with one page, recording script errors and requests that leave `origin`. */
export async function browse(origin: string, options: BrowseOptions = {}): Promise<Browsing> {
  shared ??= chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  const browser = await shared;
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1280, height: 800 },
    ...(options.locale ? { locale: options.locale } : {}),
  });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const errors: string[] = [];
  const outside: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(message.text());
  });
  // A request the page itself cancels by navigating away (ERR_ABORTED) is no failure.
  page.on('requestfailed', (request) => {
    if (request.failure()?.errorText !== 'net::ERR_ABORTED') outside.push(`failed: ${request.url()}`);
  });
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:')) outside.push(url);
  });
  return {
    context,
    page,
    errors,
    outside,
    close: () => context.close(),
  };
}
