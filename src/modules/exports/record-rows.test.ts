import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IsoSeconds } from './record-rows.ts';

test('times read as seconds since 1970 print as onadata prints them, fractions cut, before 1970 too', () => {
  const times = new IsoSeconds();
  assert.equal(times.format(0), '1970-01-01T00:00:00+00:00');
  assert.equal(times.format(1_795_000_000.999), '2026-11-18T11:06:40+00:00');
  assert.equal(times.format(-0.5), '1969-12-31T23:59:59+00:00');
  // Days out of order, and many times of one day, against the Date formatting it replaces.
  let seed = 7;
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  for (let i = 0; i < 20_000; i += 1) {
    const epoch = i % 2 === 0 ? 1_790_000_000 + random() * 86_400 : (random() - 0.3) * 4e9;
    assert.equal(times.format(epoch), `${new Date(Math.floor(epoch) * 1000).toISOString().slice(0, 19)}+00:00`, String(epoch));
  }
});
