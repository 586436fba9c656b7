// onadata's page-number pagination, as arithmetic: which slice of a list a page is. The Link
// header that points at the neighbouring pages is written by the routes (src/http/pagination.ts).
import { errors } from '../errors.ts';

const DEFAULT_PAGE_SIZE = 1000;
const MAX_PAGE_SIZE = 10_000;

export interface PageRequest {
  page?: string | undefined;
  page_size?: string | undefined;
}

export interface PageWindow {
  /** 1-based page number, or 'last' resolved once the total is known. */
  page: number | 'last';
  size: number;
}

/** Where a page sits in its list: what the Link header is written from. */
export interface PagePlace {
  page: number;
  last: number;
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

/** The page a window asks for among `total` items, checked against the last page (404 "Invalid page."). */
export function resolvePage(window: PageWindow, total: number): PagePlace {
  const last = Math.max(1, Math.ceil(total / window.size));
  const page = window.page === 'last' ? last : window.page;
  if (page > last) throw errors.invalidPage();
  return { page, last, size: window.size };
}

/** The slice of `items` on the requested page, and where it sits. */
export function pageOf<T>(items: readonly T[], window: PageWindow): { pageItems: T[]; place: PagePlace } {
  const place = resolvePage(window, items.length);
  return { pageItems: items.slice((place.page - 1) * place.size, place.page * place.size), place };
}
