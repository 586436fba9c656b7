// Just enough XPath lexing to tell a literal default from an expression, plus
// the ${name} reference syntax.

const NAME_START =
  'A-Z_a-z\\u00c0-\\u00d6\\u00d8-\\u00f6\\u00f8-\\u02ff\\u0370-\\u037d\\u037f-\\u1fff\\u200c-\\u200d\\u2070-\\u218f\\u2c00-\\u2fef\\u3001-\\ud7ff\\uf900-\\ufdcf\\ufdf0-\\ufffd';
const NAME_CHAR = `${NAME_START}\\-.0-9\\u00b7\\u0300-\\u036f\\u203f-\\u2040`;
export const NCNAME = `[${NAME_START}][${NAME_CHAR}]*`;
const NCNAME_NS = `${NCNAME}(?::${NCNAME})?`;

// The name classes hold combining marks on purpose (XML NameChar allows them).
// eslint-disable-next-line no-misleading-character-class
const XML_TAG = new RegExp(`^${NCNAME_NS}$`);
/** A valid XML element name (optionally prefixed). */
export function isXmlTag(value: string): boolean {
  return value.length > 0 && XML_TAG.test(value);
}

/** `${name}` or `${last-saved#name}`. */
// eslint-disable-next-line no-misleading-character-class
export const PYXFORM_REF = new RegExp(`\\$\\{(last-saved#)?(${NCNAME})\\}`, 'g');
// eslint-disable-next-line no-misleading-character-class
const REF_INNER = new RegExp(`^(last-saved#)?(${NCNAME})$`);

export interface ParsedReference {
  name: string;
  lastSaved: boolean;
}

/**
 * The `${...}` candidates in the text: the inside of each (undefined for an
 * unterminated one). `${}` is not a candidate. Found with indexOf, so a text
 * full of `${` stays linear.
 */
function referenceCandidates(value: string, limit = Infinity): Array<string | undefined> {
  const out: Array<string | undefined> = [];
  let from = 0;
  while (out.length < limit) {
    const start = value.indexOf('${', from);
    if (start < 0) break;
    const end = value.indexOf('}', start + 2);
    if (end < 0) {
      out.push(undefined);
      break;
    }
    if (end === start + 2) {
      from = start + 1;
      continue;
    }
    out.push(value.slice(start + 2, end));
    from = end + 1;
  }
  return out;
}

/** Every reference in the text, or 'malformed' at the first bad `${...}`. */
export function parseReferences(value: string): ParsedReference[] | 'malformed' {
  if (value.length <= 2 || !value.includes('${')) return [];
  const refs: ParsedReference[] = [];
  for (const candidate of referenceCandidates(value)) {
    const inner = candidate === undefined ? undefined : REF_INNER.exec(candidate);
    if (!inner) return 'malformed';
    refs.push({ name: inner[2] ?? '', lastSaved: inner[1] !== undefined });
  }
  return refs;
}

/** The text holds a well-formed reference (the first `${` must be well formed). */
export function hasReference(value: string): boolean {
  if (value.length <= 2 || !value.includes('${')) return false;
  const [first] = referenceCandidates(value, 1);
  return first !== undefined && REF_INNER.test(first);
}

const WHOLE_REF = /^\$\{([^}]+)\}$/;
/** The text is exactly one reference, e.g. `${q1}`. */
export function isReference(value: string): boolean {
  const m = WHOLE_REF.exec(value);
  return m !== null && m[1] !== undefined && REF_INNER.test(m[1]);
}

export function hasLastSavedReference(value: string): boolean {
  // Every question's expressions are asked: most have no last-saved reference to parse for.
  if (value.length <= 14 || !value.includes('${last-saved#')) return false;
  const refs = parseReferences(value);
  return refs !== 'malformed' && refs.some((r) => r.lastSaved);
}

// Lexer rules in priority order: at each position the first rule that matches wins.
const TOKEN_RULES: ReadonlyArray<[string, RegExp]> = (
  [
    ['DATETIME', '-?\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\s+)?(((\\+|\\-)\\d{2}:\\d{2})|Z)?'],
    ['DATE', '-?\\d{4}-\\d{2}-\\d{2}'],
    ['TIME', '\\d{2}:\\d{2}:\\d{2}(\\.\\s+)?(((\\+|\\-)\\d{2}:\\d{2})|Z)?'],
    ['NUMBER', '-?\\d+\\.\\d*|-?\\.\\d+|-?\\d+'],
    ['OPS_MATH', '[*+\\-]| mod | div '],
    ['OPS_COMP', '=|!=|<|>|<=|>='],
    ['OPS_BOOL', ' and | or '],
    ['OPS_UNION', '\\|'],
    ['OPEN_PAREN', '\\('],
    ['CLOSE_PAREN', '\\)'],
    ['BRACKET', '[[{}]'],
    ['PARENT_REF', '\\.\\.'],
    ['SELF_REF', '\\.'],
    ['PATH_SEP', '/'],
    ['SYSTEM_LITERAL', '"[^"]*"|\'[^\']*\''],
    ['COMMA', ','],
    ['WHITESPACE', '\\s+'],
    ['PYXFORM_REF', `\\$\\{(?:last-saved#)?${NCNAME}\\}`],
    ['FUNC_CALL', `${NCNAME_NS}\\(`],
    ['XPATH_PRED_START', `${NCNAME_NS}\\[`],
    ['XPATH_PRED_END', '\\]'],
    ['URI_SCHEME', `${NCNAME}://`],
    ['NAME', NCNAME_NS],
    ['PYXFORM_REF_START', '\\$\\{'],
    ['PYXFORM_REF_END', '\\}'],
    ['OTHER', '[\\s\\S]'],
  ] as const
).map(([type, source]) => [type, new RegExp(source, 'y')]);

export interface Token {
  type: string;
  value: string;
  start: number;
  end: number;
}

export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  while (pos < text.length) {
    let matched = false;
    for (const [type, rule] of TOKEN_RULES) {
      rule.lastIndex = pos;
      const m = rule.exec(text);
      if (m && m[0].length > 0) {
        tokens.push({ type, value: m[0], start: pos, end: pos + m[0].length });
        pos += m[0].length;
        matched = true;
        break;
      }
    }
    if (!matched) pos++;
  }
  return tokens;
}

const DASHED_TYPES: ReadonlySet<string> = new Set(['date', 'dateTime', 'geopoint', 'geotrace', 'geoshape']);
const DYNAMIC_TOKENS: ReadonlySet<string> = new Set(['OPS_MATH', 'OPS_UNION', 'XPATH_PRED', 'PYXFORM_REF', 'FUNC_CALL']);

/** A default that must be computed (setvalue) rather than written into the instance. */
export function defaultIsDynamic(value: unknown, questionType?: string): boolean {
  if (typeof value !== 'string' || value === '') return false;
  const dashed = questionType !== undefined && DASHED_TYPES.has(questionType);
  for (const token of tokenize(value)) {
    if (dashed && token.type === 'OPS_MATH' && token.value === '-') return false;
    if (DYNAMIC_TOKENS.has(token.type)) return true;
  }
  return false;
}
