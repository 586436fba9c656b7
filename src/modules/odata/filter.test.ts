import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FilterError, parseFilter } from './filter.ts';

test('and binds tighter than or, not tighter than and, parentheses override', () => {
  assert.deepEqual(parseFilter("a eq 1 or b eq 'x' and not c ne null"), {
    kind: 'logical', op: 'or',
    left: { kind: 'compare', op: 'eq', left: { kind: 'path', segments: ['a'] }, right: { kind: 'literal', type: 'number', value: 1 } },
    right: {
      kind: 'logical', op: 'and',
      left: { kind: 'compare', op: 'eq', left: { kind: 'path', segments: ['b'] }, right: { kind: 'literal', type: 'string', value: 'x' } },
      right: { kind: 'not', operand: { kind: 'compare', op: 'ne', left: { kind: 'path', segments: ['c'] }, right: { kind: 'literal', type: 'null', value: null } } },
    },
  });
  const grouped = parseFilter('(a eq 1 or b eq 2) and c eq 3');
  assert.equal(grouped.kind === 'logical' && grouped.op, 'and');
});

test('dates, date-times, quoted quotes, paths and the functions Power BI sends', () => {
  assert.deepEqual(parseFilter("year(__system/submissionDate) ge 2020 and date(__system/submissionDate) lt 2020-03-01 and s eq 'O''Brien' and t lt 2020-01-01T10:00:00.5+03:00 and x le now()"), parseFilter("year(__system/submissionDate) ge 2020 and date(__system/submissionDate) lt 2020-03-01 and s eq 'O''Brien' and t lt 2020-01-01T10:00:00.5+03:00 and x le now()"));
  const call = parseFilter("contains(grp/name, 'a''b')");
  assert.deepEqual(call, { kind: 'call', name: 'contains', args: [{ kind: 'path', segments: ['grp', 'name'] }, { kind: 'literal', type: 'string', value: "a'b" }] });
  const date = parseFilter('d eq 2020-02-29');
  assert.deepEqual(date.kind === 'compare' && date.right, { kind: 'literal', type: 'date', value: '2020-02-29' });
  const negative = parseFilter('n gt -1.5e2');
  assert.deepEqual(negative.kind === 'compare' && negative.right, { kind: 'literal', type: 'number', value: -150 });
});

test('malformed expressions are FilterErrors, never anything else', () => {
  for (const bad of ['', 'a eq', "a eq 'x", 'a eq 1)', '(a eq 1', 'a eq 1 b', 'f(a)', 'year(a, b) eq 1', 'a eq 2020-13-45', 'a # 1', 'eq eq 1', '('.repeat(60) + 'a' + ')'.repeat(60), 'x'.repeat(5000)]) {
    assert.throws(() => parseFilter(bad), FilterError, bad);
  }
});
