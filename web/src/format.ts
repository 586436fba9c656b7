// Small display helpers shared by the pages.

/** The username at the end of a user URL (`…/api/v1/users/alice`). */
export function usernameOf(userUrl: string): string {
  return decodeURIComponent(userUrl.replace(/\/+$/, '').split('/').pop() ?? '');
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '—' : dateFormat.format(date);
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString()} ${count === 1 ? one : many}`;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
