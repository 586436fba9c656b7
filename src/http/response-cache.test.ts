import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResponseCache } from './response-cache.ts';

const response = (body: string) => ({ body, headers: {} });

test('an entry is served until it expires', () => {
  const cache = new ResponseCache(2000);
  cache.set('k', cache.epoch, 1000, response('a'));
  assert.equal(cache.get('k', 2999)?.body, 'a');
  assert.equal(cache.get('k', 3000), undefined);
});

test('a write clears what was computed before it, even a response still being computed', () => {
  const cache = new ResponseCache(2000);
  cache.set('k', cache.epoch, 0, response('a'));
  const epochBeforeCompute = cache.epoch;
  cache.invalidate(); // a write commits while the next response is being computed
  assert.equal(cache.get('k', 1), undefined);
  cache.set('k', epochBeforeCompute, 1, response('stale'));
  assert.equal(cache.get('k', 2), undefined, 'a response computed across a write is not kept');
  cache.set('k', cache.epoch, 2, response('fresh'));
  assert.equal(cache.get('k', 3)?.body, 'fresh');
});

test('a zero lifetime turns the cache off', () => {
  const cache = new ResponseCache(0);
  cache.set('k', cache.epoch, 0, response('a'));
  assert.equal(cache.get('k', 0), undefined);
});
