import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, nextCursor, parseCursor, parsePageSize } from './cursor.ts';

describe('submissionList cursor', () => {
  test('an empty or absent cursor starts at the first record, as does onadata’s 0', () => {
    assert.deepEqual(parseCursor(undefined), { ok: true, after: 0 });
    assert.deepEqual(parseCursor(''), { ok: true, after: 0 });
    assert.deepEqual(parseCursor('0'), { ok: true, after: 0 });
  });

  test('a record id resumes after that record', () => {
    assert.deepEqual(parseCursor('4711'), { ok: true, after: 4711 });
    assert.deepEqual(parseCursor(' 12 '), { ok: true, after: 12 });
  });

  test('anything else is refused with a message, never thrown', () => {
    for (const bad of ['-1', 'abc', '1.5', '99999999999', '2147483648', '<cursor/>', '1e3']) {
      const parsed = parseCursor(bad);
      assert.equal(parsed.ok, false, bad);
      if (!parsed.ok) assert.match(parsed.message, /Invalid cursor/);
    }
  });

  test('the next cursor is the page’s last id, or the one asked with after the last page', () => {
    assert.equal(nextCursor(0, [3, 7, 9]), '9');
    assert.equal(nextCursor(9, []), '9');
    assert.equal(nextCursor(0, []), '0');
  });

  test('each cursor round-trips through parseCursor', () => {
    for (const ids of [[1], [5, 2147483647], []]) {
      const parsed = parseCursor(nextCursor(0, ids));
      assert.deepEqual(parsed, { ok: true, after: ids[ids.length - 1] ?? 0 });
    }
  });

  test('numEntries defaults to Briefcase’s 100, is capped, and must be a positive integer', () => {
    assert.deepEqual(parsePageSize(undefined), { ok: true, size: DEFAULT_PAGE_SIZE });
    assert.deepEqual(parsePageSize('2'), { ok: true, size: 2 });
    assert.deepEqual(parsePageSize('999999'), { ok: true, size: MAX_PAGE_SIZE });
    for (const bad of ['0', '-3', 'ten', '2.5']) assert.equal(parsePageSize(bad).ok, false, bad);
  });
});
