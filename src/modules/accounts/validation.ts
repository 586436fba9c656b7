// Field rules for registration and profile updates, with onadata's (DRF's) messages.
import type { FieldErrors } from '../../errors.ts';

const RESERVED_USERNAMES = new Set([
  'about', 'accounts', 'account', 'admin', 'administrator', 'anonymous', 'api', 'apps', 'assets', 'auth',
  'bin', 'blog', 'bulk', 'contact', 'css', 'dashboard', 'data', 'dataview', 'dataviews', 'docs', 'download',
  'downloads', 'enketo', 'export', 'exports', 'faq', 'favicon.ico', 'files', 'form', 'formlist', 'forms',
  'gather', 'help', 'home', 'images', 'img', 'import', 'js', 'login', 'logout', 'manifest', 'me', 'media',
  'metadata', 'new', 'notes', 'o', 'oauth', 'openrosa', 'org', 'organization', 'organizations', 'orgs',
  'password', 'preview', 'privacy', 'profile', 'profiles', 'project', 'projects', 'public', 'register',
  'reset', 'robots.txt', 'root', 'search', 'settings', 'signup', 'static', 'stats', 'status', 'submission',
  'submissions', 'superuser', 'support', 'system', 'team', 'teams', 'terms', 'tos', 'user', 'users',
  'view', 'webhooks', 'widgets', 'www', 'xformsmanifest', 'xforms',
]);

const USERNAME_PATTERN = /^[\p{L}\p{N}_.@+-]+$/u;
const FORBIDDEN_USERNAME_SUFFIX = /\.(json|csv|xls|xlsx|kml|xml)$/i;

export const USERNAME_PATTERN_MESSAGE =
  'username may only contain alphanumeric characters, dots, hyphens, underscores, emails, or phone numbers, and cannot end with .json, .csv, .xls, .xlsx, or .kml';

export function lengthErrors(value: string, min: number | undefined, max: number | undefined): string[] {
  const length = [...value].length;
  if (min !== undefined && length < min) return [`Ensure this field has at least ${min} characters.`];
  if (max !== undefined && length > max) return [`Ensure this field has no more than ${max} characters.`];
  return [];
}

/** Rules that need no database; uniqueness is checked by the service. Returns the stored form. */
export function checkUsername(raw: string): { value: string; errors: string[] } {
  const length = lengthErrors(raw, 3, 30);
  if (length.length) return { value: raw, errors: length };
  const value = raw.toLowerCase();
  if (/^\d+$/.test(value)) return { value, errors: ['Username cannot be purely numeric.'] };
  if (RESERVED_USERNAMES.has(value)) return { value, errors: [`${value} is a reserved name, please choose another`] };
  if (!USERNAME_PATTERN.test(value) || FORBIDDEN_USERNAME_SUFFIX.test(value)) {
    return { value, errors: [USERNAME_PATTERN_MESSAGE] };
  }
  return { value, errors: [] };
}

const EMAIL_PATTERN = /^[^\s@"(),:;<>[\]\\]+@[^\s@"(),:;<>[\]\\]+\.[^\s@"(),:;<>[\]\\.]{2,}$/u;

export function checkEmail(value: string): string[] {
  if (value.length > 254 || !EMAIL_PATTERN.test(value)) return ['Enter a valid email address.'];
  return [];
}

export function checkTwitter(value: string): string[] {
  return value === '' || /^[A-Za-z0-9_]{1,15}$/.test(value) ? [] : [`Invalid twitter username ${value}`];
}

// Made on the first country checked: building it pages in ICU's region names, data of the runtime
// that a server which is never asked for a country would otherwise hold resident.
let regionNames: Intl.DisplayNames | undefined;
const NOT_COUNTRIES = new Set(['EU', 'EZ', 'UN', 'ZZ', 'QO', 'XA', 'XB']);

/** ISO 3166-1 alpha-2 codes, as known to the runtime's ICU data. */
export function checkCountry(value: string): string[] {
  if (value === '') return [];
  const known = /^[A-Z]{2}$/.test(value) && !NOT_COUNTRIES.has(value) && (regionNames ??= new Intl.DisplayNames(['en'], { type: 'region' })).of(value) !== value;
  return known ? [] : [`"${value}" is not a valid choice.`];
}

/** `name` wins over first/last: the first word is the first name, the rest the last name. */
export function splitName(name: string): { first_name: string; last_name: string } {
  const words = name.trim().split(/\s+/).filter(Boolean);
  const first = words[0] ?? '';
  const rest = words.slice(1).join(' ');
  return { first_name: [...first].slice(0, 30).join(''), last_name: [...rest].slice(0, 30).join('') };
}

// A short list of the passwords most often seen in breaches; enough to refuse the obvious ones.
const COMMON_PASSWORDS = new Set([
  '123456789', '1234567890', 'password', 'password1', 'password12', 'password123', 'qwertyuiop',
  'iloveyou1', '123123123', '987654321', 'qwerty123', 'qwerty1234', '1q2w3e4r5t', 'abcdefghi',
  'abc123456', 'football1', 'baseball1', 'superman1', 'princess1', 'sunshine1', 'letmein12',
  'trustno1!', 'welcome12', 'welcome123', 'passw0rd1', 'p@ssw0rd1', 'administrator', 'changeme1',
  'monkey123', 'dragon123', 'master123', 'starwars1', 'whatever1', 'michael12', 'jennifer1',
  'computer1', 'internet1', 'zaq12wsx3', '1qaz2wsx3', 'asdfghjkl', 'zxcvbnm12', 'aaaaaaaaa',
  '111111111', '000000000', '11111111111', 'secret123', 'letmein123', 'welcome1!', 'admin1234',
]);

export interface PasswordContext {
  username?: string;
  first_name?: string;
  last_name?: string;
  email?: string;
}

export function passwordProblems(password: string, context: PasswordContext): string[] {
  const problems: string[] = [];
  const lower = password.toLowerCase();
  for (const [key, label] of [
    ['username', 'username'],
    ['first_name', 'first name'],
    ['last_name', 'last name'],
    ['email', 'email address'],
  ] as const) {
    const attribute = context[key]?.toLowerCase();
    if (!attribute) continue;
    const parts = [attribute, ...attribute.split(/\W+/)].filter((p) => p.length >= 3);
    // Capped: the measure is quadratic and a password may be long.
    if (parts.some((part) => similarity(lower.slice(0, 128), part.slice(0, 128)) >= 0.7)) {
      problems.push(`The password is too similar to the ${label}.`);
      break;
    }
  }
  if ([...password].length < 9) problems.push('This password is too short. It must contain at least 9 characters.');
  if (COMMON_PASSWORDS.has(lower)) problems.push('This password is too common.');
  if (/^\d+$/.test(password)) problems.push('This password is entirely numeric.');
  return problems;
}

export function addError(target: FieldErrors, field: string, messages: readonly string[]): void {
  if (messages.length === 0) return;
  (target[field] ??= []).push(...messages);
}

/** Ratcliff/Obershelp similarity (2·matches / total length), the measure Django's validator uses. */
export function similarity(a: string, b: string): number {
  const total = a.length + b.length;
  return total === 0 ? 1 : (2 * matchingCharacters(a, b)) / total;
}

function matchingCharacters(a: string, b: string): number {
  if (!a || !b) return 0;
  let bestLength = 0;
  let bestA = 0;
  let bestB = 0;
  for (let i = 0; i < a.length; i++) {
    for (let j = 0; j < b.length; j++) {
      let k = 0;
      while (i + k < a.length && j + k < b.length && a[i + k] === b[j + k]) k++;
      if (k > bestLength) {
        bestLength = k;
        bestA = i;
        bestB = j;
      }
    }
  }
  if (bestLength === 0) return 0;
  return (
    bestLength +
    matchingCharacters(a.slice(0, bestA), b.slice(0, bestB)) +
    matchingCharacters(a.slice(bestA + bestLength), b.slice(bestB + bestLength))
  );
}
