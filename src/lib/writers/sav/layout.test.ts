import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveLayout } from './layout.ts';

test('a very long string is cut into 255-byte segments plus a remainder, packed 255 bytes apiece', () => {
  const [variable] = resolveLayout([{ name: 's', type: 'string', width: 20_000 }], 255).variables;
  const segments = variable?.segments ?? [];
  assert.equal(segments.length, 80);
  assert.deepEqual(segments.slice(0, 2).map((s) => [s.width, s.slotCount, s.dataStart, s.dataLength]), [[255, 32, 0, 255], [255, 32, 255, 255]]);
  // The 79th segment holds the last 110 bytes; the 80th (92 wide) holds none.
  assert.deepEqual(segments.slice(-2).map((s) => [s.width, s.slotCount, s.dataStart, s.dataLength]), [[255, 32, 19_890, 110], [92, 12, 20_000, 0]]);
});

test('slots are counted per 8 bytes, across segments', () => {
  const layout = resolveLayout([
    { name: 'n', type: 'numeric' },
    { name: 's', type: 'string', width: 9 },
    { name: 'v', type: 'string', width: 256 },
  ], 255);
  assert.deepEqual(layout.variables.map((v) => v.segments.map((s) => [s.shortName, s.firstSlot, s.slotCount])), [
    [['N', 0, 1]],
    [['S', 1, 2]],
    [['V', 3, 32], ['V1', 35, 1]],
  ]);
  assert.equal(layout.slotCount, 36);
});

test('missing, zero, fractional, huge or NaN widths and decimals fall back to something valid', () => {
  const layout = resolveLayout([
    { name: 'a', type: 'string' },
    { name: 'b', type: 'string', width: 0 },
    { name: 'c', type: 'string', width: Number.NaN },
    { name: 'd', type: 'string', width: 12.7 },
    { name: 'e', type: 'string', width: 100_000 },
    { name: 'f', type: 'numeric', decimals: Number.NaN },
    { name: 'g', type: 'numeric', decimals: 40 },
  ], 100);
  assert.deepEqual(layout.variables.map((v) => v.width), [100, 100, 100, 12, 32_767, 0, 0]);
  assert.deepEqual(layout.variables.slice(5).map((v) => v.segments[0]?.formatCode.toString(16)), ['50800', '51610']);
});

test('an empty dictionary is refused', () => {
  assert.throws(() => resolveLayout([], 255), /at least one variable/);
});
