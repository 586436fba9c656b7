// onadata's page-number pagination: a bare JSON array, navigation in a Link header. The page
// arithmetic is src/lib/pages.ts; services return where their page sits, routes write the links.
import { pageOf, type PagePlace, type PageWindow } from '../lib/pages.ts';

/** onadata's Link header: prev, next, last, first, each only when it applies. */
export function pageLinks(baseUrl: string, requestUrl: string, place: PagePlace | undefined): string | undefined {
  if (!place) return undefined;
  const { page, last, size } = place;
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
  const { pageItems, place } = pageOf(items, window);
  return { pageItems, link: pageLinks(baseUrl, requestUrl, place) };
}
