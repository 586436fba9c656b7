import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pickOf, submissionText, submissionWriter, type EntityContext, type RecordMeta } from './entities.ts';
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
