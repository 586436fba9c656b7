import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RENDER_WINDOW, renderRanges, type RangeRenderer, type RenderedRange } from './csv-threads.ts';
import type { IdRange } from './source.ts';

const ranges: IdRange[] = Array.from({ length: 40 }, (_, i) => ({ after: i * 10, through: i * 10 + 10 }));

function rendered(range: IdRange, by: string): RenderedRange {
  const chunks = [new TextEncoder().encode(`${range.after}-${range.through} ${by}\n`)];
  return { records: 10, take: () => chunks };
}

const mainThread = { read: async (range: IdRange) => range, render: (range: IdRange) => rendered(range, 'main') };

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A renderer that takes `delay(seq)` ms a range and works on two at once. */
function slowHelper(name: string, delay: (seq: number) => number, log: number[] = []): RangeRenderer {
  let working = 0;
  return {
    get busy() {
      return working >= 2;
    },
    async render(seq, range) {
      working += 1;
      log.push(seq);
      await pause(delay(seq));
      working -= 1;
      return rendered(range, name);
    },
  };
}

async function collect(iterable: AsyncIterable<RenderedRange>): Promise<string[]> {
  const out: string[] = [];
  for await (const range of iterable) out.push(Buffer.concat(range.take()).toString('utf8').trim());
  return out;
}

test('ranges come out in order whoever renders them and however long each takes', async () => {
  const helpers = [slowHelper('a', (seq) => (seq * 7) % 5), slowHelper('b', (seq) => (seq * 3) % 4)];
  const here: number[] = [];
  const out = await collect(
    renderRanges(ranges, helpers, {
      read: async (range) => {
        here.push(range.after);
        await pause(1);
        return range;
      },
      render: (range) => rendered(range, 'main'),
    }),
  );
  assert.deepEqual(out.map((line) => line.split(' ')[0]), ranges.map((r) => `${r.after}-${r.through}`));
  assert.ok(out.some((line) => line.endsWith(' a')) && out.some((line) => line.endsWith(' b')), 'the helpers rendered ranges');
  assert.ok(here.length > 0, 'the main thread rendered ranges while the helpers were busy');
});

test('with no helpers the main thread renders every range', async () => {
  const out = await collect(renderRanges(ranges, [], mainThread));
  assert.equal(out.length, ranges.length);
  assert.ok(out.every((line) => line.endsWith(' main')));
});

test('no range is asked for further ahead of the one being written than the window allows', async () => {
  const asked: number[] = [];
  const helper = slowHelper('a', () => 2, asked);
  let written = 0;
  for await (const range of renderRanges(ranges, [helper], mainThread)) {
    assert.ok(range.records === 10);
    assert.ok(asked.every((seq) => seq < written + RENDER_WINDOW), `asked ${Math.max(...asked)} while writing ${written}`);
    written += 1;
  }
});

test('a helper failure reaches the reader, after the ranges under way have settled', async () => {
  let settled = 0;
  const failing: RangeRenderer = {
    busy: false,
    async render(seq, range) {
      await pause(2);
      settled += 1;
      if (seq === 5) throw new Error('helper thread lost its connection');
      return rendered(range, 'f');
    },
  };
  await assert.rejects(collect(renderRanges(ranges, [failing], mainThread)), /lost its connection/);
  const before = settled;
  await pause(20);
  assert.equal(settled, before, 'nothing still running after the failure');
});
