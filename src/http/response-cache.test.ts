import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResponseCache } from './response-cache.ts';

const response = (body: string) => ({ body: Buffer.from(body), headers: {} });
const bodyOf = (cache: ResponseCache, key: string, now: number) => cache.lookup(key, now)?.response.body.toString();

test('an entry is fresh for its lifetime, then stale until replaced', () => {
  const cache = new ResponseCache(2000);
  cache.set('k', cache.epoch, 1000, response('a'));
  assert.deepEqual(cache.lookup('k', 2999)?.stale, false);
  assert.deepEqual(cache.lookup('k', 3000)?.stale, true);
  assert.equal(cache.beginRefresh('k'), true);
  assert.equal(cache.beginRefresh('k'), false, 'one background refresh at a time');
  cache.set('k', cache.epoch, 3100, response('b'));
  cache.endRefresh('k');
  assert.equal(bodyOf(cache, 'k', 3200), 'b');
  assert.equal(cache.lookup('k', 3200)?.stale, false);
});

test('a write clears what was computed before it, even a response still being computed', () => {
  const cache = new ResponseCache(2000);
  cache.set('k', cache.epoch, 0, response('a'));
  const epochBeforeCompute = cache.epoch;
  cache.invalidate(); // a write commits while the next response is being computed
  assert.equal(cache.lookup('k', 1), undefined);
  cache.set('k', epochBeforeCompute, 1, response('stale'));
  assert.equal(cache.lookup('k', 2), undefined, 'a response computed across a write is not kept');
  cache.set('k', cache.epoch, 2, response('fresh'));
  assert.equal(bodyOf(cache, 'k', 3), 'fresh');
});

test('a zero lifetime turns the cache off', () => {
  const cache = new ResponseCache(0);
  cache.set('k', cache.epoch, 0, response('a'));
  assert.equal(cache.lookup('k', 0), undefined);
});
