// Random dictionaries and rows (fixed seeds, so failures reproduce), written compressed and
// uncompressed and read back by GNU PSPP: every value must come back exactly.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createSavWriter } from './sav-writer.ts';
import { psppUnavailableReason, readWithPspp } from './testing/pspp.ts';
import type { SavCell, SavRow, SavVariable } from './types.ts';
import { encodeUtf8 } from './utf8.ts';

const unavailable = psppUnavailableReason();
const skip = unavailable !== undefined && !process.env.CI ? unavailable : false;

/** mulberry32: a tiny seeded generator. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = ['a', 'Z', '0', ' ', ',', '"', "'", 'é', 'ß', '日本', '😀', '\t', 'x'.repeat(50), ' '.repeat(9)];

function pick<T>(next: () => number, items: ReadonlyArray<T>): T {
  const item = items[Math.floor(next() * items.length)];
  if (item === undefined) throw new Error('empty choice');
  return item;
}

function randomNumber(next: () => number): SavCell {
  const kind = Math.floor(next() * 6);
  if (kind === 0) return null;
  if (kind === 1) return Math.floor(next() * 300) - 120; // around the inline range -99…151
  if (kind === 2) return (next() - 0.5) * 1e6;
  if (kind === 3) return next() < 0.5 ? -0 : 1e300 * next();
  if (kind === 4) return Math.round(next() * 1e12);
  return next();
}

function randomText(next: () => number, width: number): SavCell {
  if (next() < 0.15) return next() < 0.5 ? null : '';
  let text = '';
  const target = Math.floor(next() * width * 1.3);
  while (encodeUtf8(text).length < target) text += pick(next, PIECES);
  return text;
}

/** What PSPP's CSV shows: the value cut to the width at a character boundary, trailing blanks gone. */
function expectedText(cell: SavCell, width: number): string {
  if (cell === null || cell === undefined) return '';
  return new TextDecoder().decode(encodeUtf8(String(cell), width)).replace(/ +$/, '');
}

function expectedNumber(cell: SavCell): string {
  if (typeof cell !== 'number') return ' ';
  return Object.is(cell, -0) ? '-0' : String(cell);
}

for (const seed of [1, 2, 3, 4]) {
  test(`random dictionary and rows, seed ${seed}, read back exactly`, { skip }, () => {
    const next = random(seed);
    const variables: SavVariable[] = Array.from({ length: 5 + Math.floor(next() * 25) }, (_, i) =>
      next() < 0.5
        ? { name: `n${i}`, type: 'numeric' }
        : { name: `s${i}`, type: 'string', width: pick(next, [1, 3, 8, 9, 16, 100, 255, 256, 300, 509, 510, 700]) },
    );
    const rows: SavRow[] = Array.from({ length: 150 }, () =>
      variables.map((v) => (v.type === 'numeric' ? randomNumber(next) : randomText(next, v.width ?? 255))),
    );
    const expected = rows.map((row) => row.map((cell, i) => {
      const variable = variables[i];
      return variable?.type === 'string' ? expectedText(cell, variable.width ?? 255) : expectedNumber(cell);
    }));
    for (const compression of [true, false]) {
      const writer = createSavWriter(variables, { compression });
      const report = readWithPspp([writer.header(), ...rows.map((row) => writer.row(row)), writer.end()]);
      assert.deepEqual(report.data.slice(1), expected, `seed ${seed}, compression ${String(compression)}`);
    }
  });
}
