// The web forms' pages (src/modules/webforms/urls.ts on the server gives the same addresses).
export type WebFormPage =
  | { readonly mode: 'draft'; readonly username: string; readonly fileName: string }
  | { readonly mode: 'fill' | 'preview' | 'single'; readonly formId: number }
  | { readonly mode: 'edit'; readonly formId: number; readonly recordId: number; readonly returnTo: string | undefined };

/** Only a path on this server is a place to go back to after an edit. */
function localPath(value: string | null): string | undefined {
  return value !== null && value.startsWith('/') && !value.startsWith('//') ? value : undefined;
}

export function webFormPage(location: Pick<Location, 'pathname' | 'search'>): WebFormPage | undefined {
  if (/^\/forms\/preview\/?$/.test(location.pathname)) {
    const query = new URLSearchParams(location.search);
    const username = query.get('username');
    const fileName = query.get('filename');
    return username && fileName ? { mode: 'draft', username, fileName } : undefined;
  }
  const edit = /^\/forms\/(\d{1,9})\/records\/(\d{1,9})\/edit\/?$/.exec(location.pathname);
  if (edit) {
    const returnUrl = new URLSearchParams(location.search).get('return_url');
    let returnTo = localPath(returnUrl);
    if (!returnTo && returnUrl) {
      try {
        const url = new URL(returnUrl);
        if (url.origin === window.location.origin) returnTo = `${url.pathname}${url.search}`;
      } catch {
        returnTo = undefined;
      }
    }
    return { mode: 'edit', formId: Number(edit[1]), recordId: Number(edit[2]), returnTo };
  }
  const form = /^\/forms\/(\d{1,9})\/(fill|preview|single)\/?$/.exec(location.pathname);
  if (!form) return undefined;
  return { mode: form[2] as 'fill' | 'preview' | 'single', formId: Number(form[1]) };
}

export function signInPath(): string {
  return `/login?next=${encodeURIComponent(`${window.location.pathname}${window.location.search}`)}`;
}
