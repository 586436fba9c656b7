// onadata's page-number pagination: a bare JSON array, navigation in a Link header.
import { errors } from '../errors.ts';

export const DEFAULT_PAGE_SIZE = 1000;
export const MAX_PAGE_SIZE = 10_000;

export interface PageRequest {
  page?: string | undefined;
  page_size?: string | undefined;
}

export interface PageWindow {
  /** 1-based page number, or 'last' resolved once the total is known. */
  page: number | 'last';
  size: number;
}

/** page_size: default 1000, capped at 10000; zero, negative or non-numeric → default. */
export function pageWindow(query: PageRequest): PageWindow {
  const rawSize = Number(query.page_size);
  const size = Number.isInteger(rawSize) && rawSize > 0 ? Math.min(rawSize, MAX_PAGE_SIZE) : DEFAULT_PAGE_SIZE;
  if (query.page === undefined || query.page === '') return { page: 1, size };
  if (query.page === 'last') return { page: 'last', size };
  const page = Number(query.page);
  if (!Number.isInteger(page) || page < 1) throw errors.invalidPage();
  return { page, size };
}

/** The page number a window asks for, checked against the last page (404 "Invalid page."). */
export function resolvePage(window: PageWindow, total: number): { page: number; last: number } {
  const last = Math.max(1, Math.ceil(total / window.size));
  const page = window.page === 'last' ? last : window.page;
  if (page > last) throw errors.invalidPage();
  return { page, last };
}

/** onadata's Link header: prev, next, last, first, each only when it applies. */
export function pageLinks(baseUrl: string, requestUrl: string, page: number, last: number, size: number): string | undefined {
  const url = new URL(requestUrl, baseUrl);
  const linkTo = (n: number): string => {
    url.searchParams.set('page', String(n));
    url.searchParams.set('page_size', String(size));
    return `${baseUrl}${url.pathname}${url.search}`;
  };
  const links: string[] = [];
  if (page > 1) links.push(`<${linkTo(page - 1)}>; rel="prev"`);
  if (page < last) links.push(`<${linkTo(page + 1)}>; rel="next"`, `<${linkTo(last)}>; rel="last"`);
  if (page > 1) links.push(`<${linkTo(1)}>; rel="first"`);
  return links.length ? links.join(', ') : undefined;
}

/** The slice of `items` on the requested page, and the Link header (or undefined when none). */
export function paginate<T>(items: readonly T[], window: PageWindow, requestUrl: string, baseUrl: string): { pageItems: T[]; link: string | undefined } {
  const { page, last } = resolvePage(window, items.length);
  const pageItems = items.slice((page - 1) * window.size, page * window.size);
  return { pageItems, link: pageLinks(baseUrl, requestUrl, page, last, window.size) };
}
