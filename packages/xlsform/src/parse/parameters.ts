// The survey sheet's `parameters` column: "key=value" pairs separated by
// spaces, commas or semicolons. Keys are case-insensitive; values are too,
// except file column names (label, value).
import { XlsFormError, rowPrefix } from '../errors.ts';

export type Parameters = Record<string, string>;

const CASE_SENSITIVE = new Set(['label', 'value']);
const PAIR_TOKEN = /[^\s=,;]+/y;
const DELIMITERS = /[\s,;]+/y;

function invalid(row: number): XlsFormError {
  return new XlsFormError(
    `${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. Parameters must be in the form of 'key1=value1 key2=value2.`,
    { code: 'invalid_parameters', sheet: 'survey', row, column: 'parameters' },
  );
}

export function parseParameters(raw: unknown, row: number): Parameters {
  if (typeof raw !== 'string' || raw.trim() === '') return {};
  const out: Parameters = {};
  let pos = 0;
  const skip = (): void => {
    DELIMITERS.lastIndex = pos;
    if (DELIMITERS.exec(raw)) pos = DELIMITERS.lastIndex;
  };
  const token = (): string | undefined => {
    PAIR_TOKEN.lastIndex = pos;
    const m = PAIR_TOKEN.exec(raw);
    if (!m) return undefined;
    pos = PAIR_TOKEN.lastIndex;
    return m[0];
  };
  skip();
  while (pos < raw.length) {
    const key = token();
    if (key === undefined || raw[pos] !== '=') throw invalid(row);
    pos++;
    const value = token();
    if (value === undefined) throw invalid(row);
    const name = key.toLowerCase();
    out[name] = CASE_SENSITIVE.has(name) ? value : value.toLowerCase();
    skip();
  }
  return out;
}

export function checkParameters(params: Parameters, accepted: readonly string[], row: number): void {
  const rejected = Object.keys(params).filter((k) => !accepted.includes(k)).sort();
  if (rejected.length > 0) {
    throw new XlsFormError(
      `${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. The accepted parameter keys for this question type are '${[...accepted].sort().join(', ')}'. The following are invalid parameter key(s): '${rejected.join(', ')}'.`,
      { code: 'invalid_parameters', sheet: 'survey', row, column: 'parameters' },
    );
  }
}

export const PARAMETER_KEYS = {
  audio: ['quality'],
  audit: ['identify-user', 'location-max-age', 'location-min-interval', 'location-priority', 'track-changes', 'track-changes-reasons'],
  geo: ['allow-mock-accuracy', 'incremental', 'reference-geometry'],
  geopoint: ['allow-mock-accuracy', 'capture-accuracy', 'reference-geometry', 'warning-accuracy'],
  image: ['app', 'max-pixels'],
  range: ['end', 'placeholder', 'start', 'step', 'tick_interval', 'tick_labelset'],
  select: ['randomize', 'seed'],
  selectFromFile: ['label', 'randomize', 'seed', 'value'],
  text: ['rows'],
} as const;
