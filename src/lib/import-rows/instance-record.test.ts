import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseInstance } from '../instance-xml.ts';
import { buildFormModel } from '../form-model/model.ts';
import { topLevelQuestions } from './answers.ts';
import { planHeaders } from './header-plan.ts';
import { RowBuilder } from './row-builder.ts';

// Every shape an import writes: groups in groups, a repeat in a group with a repeat inside it,
// numbers (and a range, which the parser keeps as text), dates, start/end, both kinds of select,
// geopoints at the top and in a repeat, media, a note, and the meta group with instanceName.
const FORM_JSON = {
  name: 'survey',
  id_string: 'survey',
  children: [
    { type: 'start', name: 'start' },
    { type: 'end', name: 'end' },
    { type: 'text', name: 'name' },
    { type: 'integer', name: 'age' },
    { type: 'decimal', name: 'weight' },
    { type: 'range', name: 'score' },
    { type: 'date', name: 'born' },
    { type: 'select one', name: 'colour', children: [{ name: 'red' }, { name: 'blue' }] },
    { type: 'select all that apply', name: 'pets', children: [{ name: 'cat' }, { name: 'dog' }, { name: 'fish' }] },
    { type: 'select all that apply', name: 'foods', children: [{ name: 'rice' }, { name: 'beans' }] },
    { type: 'geopoint', name: 'home' },
    { type: 'photo', name: 'picture' },
    { type: 'note', name: 'hello' },
    {
      type: 'group', name: 'hh', children: [
        { type: 'integer', name: 'size' },
        { type: 'group', name: 'inner', children: [{ type: 'text', name: 'remark' }, { type: 'decimal', name: 'income' }] },
        {
          type: 'repeat', name: 'member', children: [
            { type: 'text', name: 'm_name' },
            { type: 'integer', name: 'm_age' },
            { type: 'geopoint', name: 'm_gps' },
            { type: 'image', name: 'm_photo' },
            { type: 'repeat', name: 'visit', children: [{ type: 'date', name: 'when' }, { type: 'text', name: 'why' }] },
          ],
        },
      ],
    },
    { type: 'group', name: 'meta', children: [{ type: 'calculate', name: 'instanceID' }, { type: 'calculate', name: 'instanceName' }] },
  ],
};

const HEADERS = [
  'start', 'end', 'name', 'age', 'weight', 'score', 'born', 'colour', 'pets/cat', 'pets/dog', 'pets/fish', 'foods',
  'home', '_home_latitude', '_home_longitude', '_home_altitude', '_home_precision', 'picture',
  'hh/size', 'hh/inner/remark', 'hh/inner/income',
  ...[1, 2, 3].flatMap((m) => [
    `hh/member[${m}]/m_name`, `hh/member[${m}]/m_age`, `hh/member[${m}]/m_gps`, `hh/member[${m}]/m_photo`,
    ...[1, 2].flatMap((v) => [`hh/member[${m}]/visit[${v}]/when`, `hh/member[${m}]/visit[${v}]/why`]),
  ]),
  'meta/instanceName', 'meta/instanceID', '_uuid',
];

/** A small deterministic generator (mulberry32), so that a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TEXTS = [
  'plain', '  padded  ', 'A & B <c> "d" \'e\'', 'line\r\nbreak', 'cr\ronly', 'lf\nonly', '   ', '\u00a0', '\u3000\u2003', 'x\u00a0',
  '\t', 'ünïcødé ✓ 😀', ']]>', '&amp;', '12', '3.50', 'n/a', '', 'uuid:weird', '__proto__', '<![CDATA[x]]>', 'a\u2028b',
];
const INTEGERS = ['0', '007', '-3', '+4', ' 12 ', '9007199254740993', '42', '', 'n/a', '-0'];
const DECIMALS = ['1.5', '.5', '3.', '-0.0', '1e5', '2E-3', ' 7 ', '10', '', '123456789.123456789'];
const DATES = ['2026-01-31', '2026/1/2', '1/31/2026', '2024-02-29', ''];
const DATE_TIMES = ['2026-11-01T08:00:00.000+03:00', '2026-11-01T08:20:00Z', '2026-11-01 09:30', '2026-11-01T08:00:00', '2026/11/2 7:05:09', ''];
const GEOPOINTS = ['-1.2 36.8', '-1.2 36.8 1650 5', '  10 20  ', '0 0 0 0', '1e1 2', ''];
const PARTS = ['-1.25', '36.5', '1650', '5', '', '0', '.5'];
const MEDIA = ['a.jpg', 'b.png', 'a.jpg', '', 'with space.jpg'];

function row(next: () => number): string[] {
  const pick = (items: readonly string[]): string => items[Math.floor(next() * items.length)] ?? '';
  const values: Record<string, () => string> = {
    start: () => pick(DATE_TIMES), end: () => pick(DATE_TIMES), name: () => pick(TEXTS), age: () => pick(INTEGERS),
    weight: () => pick(DECIMALS), score: () => pick(DECIMALS), born: () => pick(DATES), colour: () => pick(['red', 'blue', '', ' red ']),
    foods: () => pick(['rice', 'rice beans', ' beans  rice ', '', 'n/a']), home: () => pick(GEOPOINTS), picture: () => pick(MEDIA),
    'meta/instanceName': () => pick(TEXTS), 'meta/instanceID': () => pick(['', 'uuid:abc', 'def']), _uuid: () => pick(['', 'uuid:xyz', '  ']),
  };
  return HEADERS.map((header) => {
    const make = values[header];
    if (make) return make();
    if (header.startsWith('pets/')) return pick(['True', 'False', '1', '0', '', 'TRUE', header.slice(5)]);
    if (header.startsWith('_home_')) return pick(PARTS);
    // Often leave a whole repeat entry or group empty, so that empty entries are exercised.
    if (next() < 0.3) return '';
    if (header.endsWith('/size') || header.endsWith('/m_age')) return pick(INTEGERS);
    if (header.endsWith('/income')) return pick(DECIMALS);
    if (header.endsWith('/m_gps')) return pick(GEOPOINTS);
    if (header.endsWith('/m_photo')) return pick(MEDIA);
    if (header.endsWith('/when')) return pick(DATES);
    return pick(TEXTS);
  });
}

test('records built from rows equal what the submission parser reads from the same rows\' XML', () => {
  const form = buildFormModel(FORM_JSON);
  const planned = planHeaders(form, HEADERS);
  assert.ok(planned.ok, planned.ok ? '' : planned.error);
  const builder = new RowBuilder(form, planned.plan, { rootName: 'survey', idString: 'survey', formUuid: 'f0rm-uuid' });
  const next = random(7);
  let compared = 0;
  let withRepeats = 0;
  let withGeolocation = 0;
  let withDuration = 0;
  for (let n = 0; n < 3000; n++) {
    const cells = row(next);
    const prepared = builder.prepare(cells);
    if (!prepared.ok) continue;
    const deprecated = n % 3 === 0 ? `old-${n}` : null;
    const xml = prepared.row.render(`new-${n}`, deprecated);
    const parsed = parseInstance(xml, form, { maxBytes: 1 << 20 });
    assert.ok(parsed.ok, `row ${n}: ${xml}`);
    const json = prepared.row.recordJson(`new-${n}`, deprecated, {});
    assert.ok(json !== null, 'this form is built directly');
    // Compared as stored: through JSON text (where -0 is 0).
    const stored = JSON.parse(JSON.stringify(parsed.record)) as unknown;
    assert.deepEqual(JSON.parse(json), stored, `row ${n}: ${JSON.stringify(cells)}`);
    const { geolocation, duration, mediaFiles, repeatCounts } = parsed.meta;
    assert.deepEqual(prepared.row.facts, { geolocation, duration, mediaFiles, repeatCounts }, `row ${n}: ${JSON.stringify(cells)}`);
    // Keys added for storage come after the answers and win over them, as in jsonb.
    const extra = { _uuid: 'x', 'meta/instanceID': 'not this', _tags: [] };
    assert.deepEqual(JSON.parse(prepared.row.recordJson(`new-${n}`, deprecated, extra) ?? ''), { ...(stored as object), ...extra });
    compared++;
    if (Array.isArray(parsed.record['hh/member'])) withRepeats++;
    if (geolocation[0] !== null) withGeolocation++;
    if (duration !== '') withDuration++;
  }
  // The generator must reach the interesting cases, not only refused rows.
  assert.ok(compared > 1000, `only ${compared} rows were valid`);
  assert.ok(withRepeats > 500 && withGeolocation > 200 && withDuration > 200, `${withRepeats} ${withGeolocation} ${withDuration}`);
});

test('forms whose XML does not map one element to one answer are left to the parser', () => {
  const twice = { name: 'data', children: [{ type: 'text', name: 'a' }, { type: 'repeat', name: 'r', children: [{ type: 'text', name: 'b' }, { type: 'integer', name: 'b' }] }] };
  const prefixed = { name: 'data', children: [{ type: 'integer', name: 'x:a' }] };
  const ownFormhub = { name: 'data', children: [{ type: 'text', name: 'a' }, { type: 'group', name: 'formhub', children: [{ type: 'calculate', name: 'uuid' }] }] };
  const metaQuestion = { name: 'data', children: [{ type: 'text', name: 'meta' }] };
  for (const json of [twice, prefixed, ownFormhub, metaQuestion]) {
    const form = buildFormModel(json);
    const headers = topLevelQuestions(form).map((q) => q.path);
    const planned = planHeaders(form, headers);
    assert.ok(planned.ok, planned.ok ? '' : planned.error);
    const builder = new RowBuilder(form, planned.plan, { rootName: 'data', idString: 'data', formUuid: 'f' });
    const prepared = builder.prepare(headers.map(() => '1'));
    assert.ok(prepared.ok);
    assert.equal(prepared.row.recordJson('u', null, {}), null, JSON.stringify(json));
    assert.equal(prepared.row.facts, null);
  }
});

test('a half surrogate pair, which XML cannot carry, is refused as a bad character', () => {
  const form = buildFormModel(FORM_JSON);
  const planned = planHeaders(form, HEADERS);
  assert.ok(planned.ok);
  const builder = new RowBuilder(form, planned.plan, { rootName: 'survey', idString: 'survey', formUuid: 'f' });
  const cells = HEADERS.map((h) => (h === 'name' ? 'bad \ud800 text' : ''));
  assert.deepEqual(builder.prepare(cells), { ok: false, problems: [{ column: 'name', value: 'bad \ud800 text', problem: 'character' }] });
});
