import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pickOf, submissionBytesWriter, submissionText, submissionWriter, type EntityContext, type RecordMeta } from './entities.ts';
import { odataModelOf } from './model.ts';

const FORM = {
  name: 'data', id_string: 'written', title: 'Written', type: 'survey',
  children: [
    { type: 'text', name: 'name' },
    { type: 'integer', name: 'age' },
    { type: 'decimal', name: 'income' },
    { type: 'date', name: 'born' },
    { type: 'geopoint', name: 'where' },
    { type: 'group', name: 'grp', children: [{ type: 'text', name: 'note' }] },
    { type: 'repeat', name: 'kids', children: [{ type: 'text', name: 'kid' }] },
  ],
};
const model = odataModelOf(FORM);
const all: EntityContext = { expand: new Map(), pick: true };
const META: RecordMeta = {
  id: 4, uuid: "a'b/c", submitted: '2026-11-28T06:00:00.000000+00:00', modified: '2026-11-28T07:00:00.000000+00:00',
  submitter: null, edited: true, media_count: 1, total_media: 2, status: 'submitted_via_web', version: 'v1',
};

function entity(answers: Record<string, unknown>, context: EntityContext = all, meta: RecordMeta = META): string {
  return submissionText(model.root, answers, meta, context);
}

test('entities are written as JSON.stringify writes them: escapes, numbers from text, dates, points', () => {
  const text = entity({
    name: 'say "hi"\\ \u0001 \ud800 😀 Zoë', age: '12', income: 'x', born: '2020-1-1', where: '-1.5 36.8 1650 5',
    'grp/note': { a: [1] }, kids: [{ 'kids/kid': 'Tom' }], _status: 'approved', _review_status: '2', _version: 7,
  });
  const expected = {
    __id: "uuid:a'b/c",
    __system: {
      submissionDate: META.submitted, updatedAt: META.modified, submitterName: null, attachmentsPresent: 1, attachmentsExpected: 2,
      status: 'approved', reviewState: 'rejected', edited: true, formVersion: 7, recordId: 4,
    },
    name: 'say "hi"\\ \u0001 \ud800 😀 Zoë', age: 12, income: null, born: null,
    where: { type: 'Point', coordinates: [36.8, -1.5, 1650], properties: { accuracy: 5 } },
    grp: { note: '{"a":[1]}' },
    'kids@odata.navigationLink': "Submissions('uuid%3Aa''b%2Fc')/kids",
  };
  assert.equal(text, JSON.stringify(expected));
  const other = entity({ name: 12.5, age: Number.NaN, income: '-0', born: '2020-01-01', where: '1 x' });
  const parsed = JSON.parse(other) as Record<string, unknown>;
  assert.deepEqual([parsed['name'], parsed['age'], parsed['income'], parsed['born'], parsed['where']], ['12.5', null, 0, '2020-01-01', null]);
  assert.equal((parsed['__system'] as Record<string, unknown>)['status'], 'submitted_via_web');
});

test('$select and $expand choose the members; commas and braces stay in place', () => {
  const answers = { name: 'Ann', 'grp/note': 'n', kids: [{ 'kids/kid': 'Tom' }, 'not an item', { 'kids/kid': 'Eve' }] };
  assert.equal(entity(answers, { expand: new Map(), pick: pickOf([['__id']]) }), `{"__id":"uuid:a'b/c","kids@odata.navigationLink":"Submissions('uuid%3Aa''b%2Fc')/kids"}`);
  assert.equal(
    entity(answers, { expand: '*', pick: pickOf([['__system', 'recordId'], ['grp'], ['kids']]) }),
    `{"__id":"uuid:a'b/c","__system":{"recordId":4},"grp":{"note":"n"},"kids":[{"__id":"uuid:a'b/c/kids/1","__Submissions-id":"uuid:a'b/c","kid":"Tom"},{"__id":"uuid:a'b/c/kids/2","__Submissions-id":"uuid:a'b/c","kid":"Eve"}]}`,
  );
  // Expanded but not selected: neither the rows nor a link.
  assert.equal(entity(answers, { expand: '*', pick: pickOf([['name']]) }), `{"__id":"uuid:a'b/c","name":"Ann"}`);
});

test('numbers, long texts and many rows are written as JSON.stringify writes them, through one reused buffer', () => {
  const numbers = [0, -0, 7, 10, 99, 100, 2147483647, 2147483648, 1e15, 1e21, -3, 0.1, 1.5e-7, -2.25];
  const kids = Array.from({ length: 300 }, (_, i) => ({ 'kids/kid': `kid ${i} ${'é'.repeat(i % 7)}` }));
  const writer = submissionWriter(model.root, { expand: '*', pick: true });
  for (const [index, n] of numbers.entries()) {
    const long = `${'x'.repeat(20_000 * (index % 3))}"${'ü'.repeat(index)}`;
    const meta = { ...META, id: n, media_count: n };
    const bytes = writer({ age: n, income: n, name: long, kids: index % 2 === 0 ? kids : [] }, meta);
    const parsed = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
    assert.equal(bytes.toString('utf8'), entity({ age: n, income: n, name: long, kids: index % 2 === 0 ? kids : [] }, { expand: '*', pick: true }, meta));
    assert.deepEqual([parsed['age'], parsed['income'], parsed['name'], (parsed['kids'] as unknown[]).length], [JSON.parse(JSON.stringify(n)), JSON.parse(JSON.stringify(n)), long, index % 2 === 0 ? 300 : 0]);
    // Byte for byte as JSON.stringify writes each number (-0 as 0, 1e21 as 1e+21).
    const text = bytes.toString('utf8');
    assert.ok(text.includes(`"age":${JSON.stringify(n)},"income":${JSON.stringify(n)},`), text.slice(0, 400));
    assert.ok(text.includes(`"recordId":${JSON.stringify(n)}}`));
  }
});

/** JSON text as PostgreSQL writes a jsonb value: a space after each colon and comma. */
function spaced(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(spaced).join(', ')}]`;
  if (typeof value === 'object' && value !== null) return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${spaced(v)}`).join(', ')}}`;
  return JSON.stringify(value);
}

test('entities written from a record\'s JSON text are those written from the parsed record, byte for byte', () => {
  const records: Array<Record<string, unknown>> = [
    {},
    { name: 'Ann', age: 12, income: 13244.5, born: '2020-01-01', where: '-1.062000 36.862000 1650 5', 'grp/note': 'n', kids: [{ 'kids/kid': 'Tom' }], _status: 'x', _version: '2026' },
    { name: 'say "hi"\\ \u0001 😀 Zoë', age: '12', income: 'x', born: '2020-1-1', where: '1 x', 'grp/note': { a: [1, '}]'] }, _status: null, _review_status: '2', _version: 7 },
    { name: 12.5, age: -0, income: 2.5, born: 20200101, where: null, 'grp/note': true, _review_status: 1, _status: 'é' },
    { name: true, age: 1e21, income: 1234567890123456, born: '2020-01-01x', 'grp/note': ['a', { b: null }], _version: null },
    { name: null, age: -17, income: 0, born: null, where: 5, kids: 'not items', _status: 'a\nb' },
    { name: 'Zoë "q"', age: 100000000000000, income: -0.5, born: '２０２０-01-01', _review_status: 'z', other: { name: 'not this' } },
    { age: '0012', income: ' 7 ', name: '', 'grp/note': '' },
    { age: 2 ** 53 + 2, income: '1e3' },
  ];
  const contexts: EntityContext[] = [
    all,
    { expand: new Map(), pick: pickOf([['__id'], ['age'], ['grp', 'note'], ['__system', 'status']]) },
    { expand: new Map(), pick: pickOf([['__system']]) },
    { expand: '*', pick: true },
  ];
  for (const context of contexts) {
    const fromBytes = submissionBytesWriter(model.root, context);
    for (const record of records) {
      const expected = submissionText(model.root, record, META, context);
      for (const text of [spaced(record), JSON.stringify(record), ` ${JSON.stringify(record, null, 2)}\n`]) {
        // Within a larger buffer, as a COPY reads it.
        const src = Buffer.from(`xx${text}yy`);
        assert.equal(fromBytes(src, 2, src.length - 2, META).toString('utf8'), expected, text);
      }
    }
  }
  // A form whose answer a parsed record would find on Object's prototype.
  const odd = odataModelOf({ ...FORM, children: [{ type: 'text', name: 'constructor' }, { type: 'integer', name: 'toString' }] });
  const writer = submissionBytesWriter(odd.root, all);
  for (const record of [{}, { constructor: 'c', toString: 3 }]) {
    const src = Buffer.from(spaced(record));
    assert.equal(writer(src, 0, src.length, META).toString('utf8'), submissionText(odd.root, record, META, all));
  }
});
