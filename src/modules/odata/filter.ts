// The $filter expression language, the part of OData v4 this feed answers: comparisons (eq ne gt
// ge lt le), and/or/not, parentheses, literals (strings, numbers, dates, date-times, true, false,
// null), property paths (`age`, `household/hh_size`, `__system/submissionDate`) and the functions
// Excel and Power BI send (year month day hour minute second date now, contains startswith
// endswith, tolower toupper). Parsing only: what a path means is decided by the compiler.

export type CompareOp = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';
export type FunctionName = 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second' | 'date' | 'now' | 'contains' | 'startswith' | 'endswith' | 'tolower' | 'toupper';

export type Literal =
  | { readonly kind: 'literal'; readonly type: 'string'; readonly value: string }
  | { readonly kind: 'literal'; readonly type: 'number'; readonly value: number }
  | { readonly kind: 'literal'; readonly type: 'date' | 'datetime'; readonly value: string }
  | { readonly kind: 'literal'; readonly type: 'boolean'; readonly value: boolean }
  | { readonly kind: 'literal'; readonly type: 'null'; readonly value: null };

export type FilterNode =
  | Literal
  | { readonly kind: 'path'; readonly segments: readonly string[] }
  | { readonly kind: 'call'; readonly name: FunctionName; readonly args: readonly FilterNode[] }
  | { readonly kind: 'compare'; readonly op: CompareOp; readonly left: FilterNode; readonly right: FilterNode }
  | { readonly kind: 'logical'; readonly op: 'and' | 'or'; readonly left: FilterNode; readonly right: FilterNode }
  | { readonly kind: 'not'; readonly operand: FilterNode };

export class FilterError extends Error {}

const COMPARE_OPS = new Set<string>(['eq', 'ne', 'gt', 'ge', 'lt', 'le']);
const ARITY: Readonly<Record<FunctionName, number>> = {
  year: 1, month: 1, day: 1, hour: 1, minute: 1, second: 1, date: 1, now: 0,
  contains: 2, startswith: 2, endswith: 2, tolower: 1, toupper: 1,
};
const MAX_LENGTH = 4000;
const MAX_DEPTH = 40;

type Token =
  | { kind: 'punct'; text: '(' | ')' | ',' }
  | { kind: 'word'; text: string }
  | { kind: 'literal'; literal: Literal };

const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,12})?)?(Z|[+-]\d{2}:\d{2})/;
const DATE = /^\d{4}-\d{2}-\d{2}(?![\w:])/;
const NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?(?![\w.])/;
const WORD = /^[A-Za-z_$][\w.$-]*(\/[A-Za-z_$][\w.-]*)*/;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let rest = text;
  while (rest.length > 0) {
    const space = /^\s+/.exec(rest);
    if (space) {
      rest = rest.slice(space[0].length);
      continue;
    }
    const first = rest[0];
    if (first === '(' || first === ')' || first === ',') {
      tokens.push({ kind: 'punct', text: first });
      rest = rest.slice(1);
      continue;
    }
    if (first === "'") {
      let value = '';
      let i = 1;
      for (;;) {
        if (i >= rest.length) throw new FilterError('Unterminated string literal in $filter.');
        if (rest[i] === "'") {
          if (rest[i + 1] === "'") {
            value += "'";
            i += 2;
            continue;
          }
          break;
        }
        value += rest[i];
        i += 1;
      }
      tokens.push({ kind: 'literal', literal: { kind: 'literal', type: 'string', value } });
      rest = rest.slice(i + 1);
      continue;
    }
    const datetime = DATETIME.exec(rest);
    if (datetime) {
      if (Number.isNaN(Date.parse(datetime[0]))) throw new FilterError(`Invalid date-time ${datetime[0]} in $filter.`);
      tokens.push({ kind: 'literal', literal: { kind: 'literal', type: 'datetime', value: datetime[0] } });
      rest = rest.slice(datetime[0].length);
      continue;
    }
    const date = DATE.exec(rest);
    if (date) {
      if (Number.isNaN(Date.parse(`${date[0]}T00:00:00Z`))) throw new FilterError(`Invalid date ${date[0]} in $filter.`);
      tokens.push({ kind: 'literal', literal: { kind: 'literal', type: 'date', value: date[0] } });
      rest = rest.slice(date[0].length);
      continue;
    }
    const number = NUMBER.exec(rest);
    if (number) {
      const value = Number(number[0]);
      if (!Number.isFinite(value)) throw new FilterError(`Invalid number ${number[0]} in $filter.`);
      tokens.push({ kind: 'literal', literal: { kind: 'literal', type: 'number', value } });
      rest = rest.slice(number[0].length);
      continue;
    }
    const word = WORD.exec(rest);
    if (word) {
      tokens.push({ kind: 'word', text: word[0] });
      rest = rest.slice(word[0].length);
      continue;
    }
    throw new FilterError(`Unexpected character ${JSON.stringify(first)} in $filter.`);
  }
  return tokens;
}

class Parser {
  #position = 0;
  #depth = 0;
  constructor(private readonly tokens: readonly Token[]) {}

  parse(): FilterNode {
    const node = this.or();
    const extra = this.tokens[this.#position];
    if (extra) throw new FilterError(`Unexpected ${describe(extra)} in $filter.`);
    return node;
  }

  private peekWord(text: string): boolean {
    const token = this.tokens[this.#position];
    return token?.kind === 'word' && token.text === text;
  }

  private expectPunct(text: '(' | ')' | ','): void {
    const token = this.tokens[this.#position];
    if (token?.kind !== 'punct' || token.text !== text) throw new FilterError(`Expected "${text}" but found ${token ? describe(token) : 'the end'} in $filter.`);
    this.#position += 1;
  }

  private nested<T>(read: () => T): T {
    this.#depth += 1;
    if (this.#depth > MAX_DEPTH) throw new FilterError('$filter is nested too deeply.');
    try {
      return read();
    } finally {
      this.#depth -= 1;
    }
  }

  private or(): FilterNode {
    let left = this.and();
    while (this.peekWord('or')) {
      this.#position += 1;
      left = { kind: 'logical', op: 'or', left, right: this.and() };
    }
    return left;
  }

  private and(): FilterNode {
    let left = this.not();
    while (this.peekWord('and')) {
      this.#position += 1;
      left = { kind: 'logical', op: 'and', left, right: this.not() };
    }
    return left;
  }

  private not(): FilterNode {
    if (this.peekWord('not')) {
      this.#position += 1;
      return this.nested(() => ({ kind: 'not', operand: this.not() }));
    }
    return this.comparison();
  }

  private comparison(): FilterNode {
    const left = this.primary();
    const token = this.tokens[this.#position];
    if (token?.kind === 'word' && COMPARE_OPS.has(token.text)) {
      this.#position += 1;
      return { kind: 'compare', op: token.text as CompareOp, left, right: this.primary() };
    }
    return left;
  }

  private primary(): FilterNode {
    const token = this.tokens[this.#position];
    if (!token) throw new FilterError('$filter ends too early.');
    this.#position += 1;
    if (token.kind === 'literal') return token.literal;
    if (token.kind === 'punct') {
      if (token.text !== '(') throw new FilterError(`Unexpected ${describe(token)} in $filter.`);
      const inner = this.nested(() => this.or());
      this.expectPunct(')');
      return inner;
    }
    if (token.text === 'true' || token.text === 'false') return { kind: 'literal', type: 'boolean', value: token.text === 'true' };
    if (token.text === 'null') return { kind: 'literal', type: 'null', value: null };
    const next = this.tokens[this.#position];
    if (next?.kind === 'punct' && next.text === '(') return this.call(token.text);
    if (['and', 'or', 'not', ...COMPARE_OPS].includes(token.text)) throw new FilterError(`Unexpected "${token.text}" in $filter.`);
    return { kind: 'path', segments: token.text.split('/') };
  }

  private call(name: string): FilterNode {
    if (!Object.hasOwn(ARITY, name)) throw new FilterError(`The function ${name}() is not supported in $filter.`);
    const fn = name as FunctionName;
    this.expectPunct('(');
    const args: FilterNode[] = [];
    const close = this.tokens[this.#position];
    if (!(close?.kind === 'punct' && close.text === ')')) {
      args.push(this.nested(() => this.or()));
      while (this.tokens[this.#position]?.kind === 'punct' && (this.tokens[this.#position] as { text: string }).text === ',') {
        this.#position += 1;
        args.push(this.nested(() => this.or()));
      }
    }
    this.expectPunct(')');
    if (args.length !== ARITY[fn]) throw new FilterError(`${fn}() takes ${ARITY[fn]} argument${ARITY[fn] === 1 ? '' : 's'}.`);
    return { kind: 'call', name: fn, args };
  }
}

function describe(token: Token): string {
  if (token.kind === 'literal') return `the value ${JSON.stringify(token.literal.value)}`;
  return `"${token.text}"`;
}

/** Parses a $filter expression; a FilterError says what is wrong with it. */
export function parseFilter(text: string): FilterNode {
  if (text.length > MAX_LENGTH) throw new FilterError(`$filter is longer than ${MAX_LENGTH} characters.`);
  const tokens = tokenize(text);
  if (tokens.length === 0) throw new FilterError('$filter is empty.');
  return new Parser(tokens).parse();
}
