// The `users` entries of projects and forms, and parsing of user hyperlinks in payloads.
import type { Role } from '../../access/roles.ts';
import type { MemberRow } from '../projects/repository.ts';

export interface MemberEntry {
  is_org: boolean;
  metadata: Record<string, unknown>;
  first_name: string;
  last_name: string;
  user: string;
  role: Role;
}

export function memberToApi(member: MemberRow, displayRole: (role: Role) => Role = (r) => r): MemberEntry {
  return {
    is_org: member.is_org,
    metadata: member.metadata,
    first_name: member.first_name,
    last_name: member.last_name,
    user: member.username,
    role: displayRole(member.role),
  };
}

export function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const map = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = map.get(k);
    if (list) list.push(item);
    else map.set(k, [item]);
  }
  return map;
}

export type UserRefResult = { ok: true; username: string } | { ok: false; message: string };

/**
 * A user given as a hyperlink (`http://host/api/v1/users/bob`, `/api/v1/users/bob.json`) or,
 * as Gather also accepts, a bare username. The host is not checked, as in onadata.
 */
export function parseUserRef(value: unknown): UserRefResult {
  if (typeof value !== 'string') return { ok: false, message: `Incorrect type. Expected URL string, received ${typeof value === 'number' ? 'int' : typeof value}.` };
  const text = value.trim();
  if (!text.includes('/')) {
    return text ? { ok: true, username: text } : { ok: false, message: 'This field may not be null.' };
  }
  let path: string;
  try {
    path = new URL(text, 'http://placeholder').pathname;
  } catch {
    return { ok: false, message: 'Invalid hyperlink - No URL match.' };
  }
  const match = /^\/api\/v1\/users\/([^/]+?)(?:\.json)?\/?$/.exec(path);
  if (!match?.[1]) return { ok: false, message: 'Invalid hyperlink - No URL match.' };
  try {
    return { ok: true, username: decodeURIComponent(match[1]) };
  } catch {
    // A malformed escape (`%E0`) names no user; reading a field never throws.
    return { ok: false, message: 'Invalid hyperlink - No URL match.' };
  }
}

/** Tags as taggit parses them: split on commas when there are any, otherwise on spaces; quotes group. */
export function parseTags(input: unknown): string[] {
  const values = Array.isArray(input) ? input : [input];
  const tags: string[] = [];
  for (const value of values) {
    if (typeof value !== 'string') continue;
    const text = value.trim();
    if (!text) continue;
    const quoted: string[] = [];
    const rest = text.replace(/"([^"]*)"/g, (_m, inner: string) => {
      quoted.push(inner.trim());
      return ' ';
    });
    const parts = rest.includes(',') ? rest.split(',') : rest.split(/\s+/);
    for (const part of [...quoted, ...parts]) {
      const tag = part.trim();
      if (tag && !tags.some((t) => t.toLowerCase() === tag.toLowerCase())) tags.push(tag);
    }
  }
  return tags;
}
