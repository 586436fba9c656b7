import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pickOf, submissionText, type EntityContext, type RecordMeta } from './entities.ts';
import { EntityMemo, shapeOf, submissionWriter } from './memo.ts';
import { odataModelOf } from './model.ts';

const FORM = {
  name: 'data', id_string: 'memo', title: 'Memo', type: 'survey',
  children: [
    { type: 'text', name: 'name' },
    { type: 'integer', name: 'age' },
    { type: 'group', name: 'grp', children: [{ type: 'text', name: 'place' }] },
    { type: 'repeat', name: 'kids', children: [{ type: 'text', name: 'kid' }] },
  ],
};
const model = odataModelOf(FORM);
const all: EntityContext = { expand: new Map(), pick: true };

function meta(id: number, changes: Partial<RecordMeta> = {}): RecordMeta {
  return {
    id, uuid: `u${id}`, submitted: '2026-11-28T06:00:00.000000+00:00', modified: '2026-11-28T06:00:00.000000+00:00',
    submitter: 'bob', edited: false, media_count: 0, total_media: 0, status: 'submitted_via_web', version: '1', ...changes,
  };
}

function record(name: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ name, age: 30, 'grp/place': 'Kisumu', kids: [{ 'kids/kid': 'Tom' }], ...extra });
}

test('the memo gives back a text only for the same shape, stored text and columns', () => {
  const memo = new EntityMemo(1 << 20);
  const json = record('Ann');
  memo.remember(1, json, meta(7), 'text of 7');
  assert.equal(memo.find(1, json, meta(7)), 'text of 7');
  // The same record text as another string (as the next query reads it).
  assert.equal(memo.find(1, ` ${json}`.slice(1), meta(7)), 'text of 7');
  assert.equal(memo.find(2, json, meta(7)), undefined, 'another shape');
  assert.equal(memo.find(1, record('Ann', { _review_status: '1' }), meta(7)), undefined, 'the stored text changed');
  for (const changes of [{ uuid: 'v7' }, { submitted: 'x' }, { modified: 'x' }, { submitter: 'ann' }, { submitter: null }, { edited: true }, { media_count: 1 }, { total_media: 2 }, { status: 'x' }, { version: '2' }] satisfies Array<Partial<RecordMeta>>) {
    assert.equal(memo.find(1, json, meta(7, changes)), undefined, JSON.stringify(changes));
  }
  assert.equal(memo.find(1, json, meta(8)), undefined, 'another record');
  memo.remember(1, json, meta(7, { submitter: 'ann' }), 'renamed');
  assert.equal(memo.find(1, json, meta(7)), undefined);
  assert.equal(memo.find(1, json, meta(7, { submitter: 'ann' })), 'renamed');
  assert.equal(memo.size, 1);
});

test('the memo stays within its bytes, the least recently used out first', () => {
  const json = record('x'.repeat(100));
  const text = 'y'.repeat(200);
  const one = new EntityMemo(1 << 20);
  one.remember(1, json, meta(1), text);
  const entryBytes = one.bytes;
  assert.ok(entryBytes >= 2 * (json.length + text.length));
  const memo = new EntityMemo(3 * entryBytes);
  for (const id of [1, 2, 3]) memo.remember(1, json, meta(id), text);
  assert.equal(memo.size, 3);
  assert.equal(memo.find(1, json, meta(1)), text); // 1 is now the most recently used
  memo.remember(1, json, meta(4), text);
  assert.equal(memo.size, 3);
  assert.ok(memo.bytes <= 3 * entryBytes);
  assert.equal(memo.find(1, json, meta(2)), undefined, 'the least recently used went');
  for (const id of [1, 3, 4]) assert.equal(memo.find(1, json, meta(id)), text);
  // An entity larger than the whole memo is not kept, and pushes nothing out.
  memo.remember(1, record('z'.repeat(3 * entryBytes)), meta(5), text);
  assert.equal(memo.size, 3);
  assert.equal(memo.find(1, json, meta(1)), text);
});

test('a shape is the same for the same model and options, and differs when either does', () => {
  const again = odataModelOf(FORM);
  assert.equal(shapeOf(model.root, all), shapeOf(again.root, { expand: new Map(), pick: true }));
  const shapes = new Set([
    shapeOf(model.root, all),
    shapeOf(model.root, { expand: '*', pick: true }),
    shapeOf(model.root, { expand: new Map(), pick: pickOf([['name']]) }),
    shapeOf(model.root, { expand: new Map(), pick: pickOf([['age']]) }),
    shapeOf(odataModelOf({ ...FORM, children: [{ type: 'decimal', name: 'name' }, ...FORM.children.slice(1)] }).root, all),
    shapeOf(odataModelOf({ ...FORM, children: [{ type: 'text', name: 'given' }, ...FORM.children.slice(1)] }).root, all),
  ]);
  assert.equal(shapes.size, 6);
});

test('records written through the memo are the texts written without it, and an edit shows at once', () => {
  const memo = new EntityMemo(1 << 20);
  for (const context of [all, { expand: '*', pick: true }, { expand: new Map(), pick: pickOf([['__system', 'reviewState'], ['grp']]) }] satisfies EntityContext[]) {
    const write = submissionWriter(model.root, context, true, memo);
    const direct = (json: string, m: RecordMeta): string => submissionText(model.root, JSON.parse(json) as Record<string, unknown>, m, context);
    const json = record('Ann');
    assert.equal(write(json, meta(1)), direct(json, meta(1)));
    assert.equal(write(json, meta(1)), direct(json, meta(1)));
    const reviewed = record('Ann', { _review_status: '1' });
    assert.equal(write(reviewed, meta(1)), direct(reviewed, meta(1)));
    assert.notEqual(direct(reviewed, meta(1)), direct(json, meta(1)));
    assert.equal(write(json, meta(1, { submitter: 'ann' })), direct(json, meta(1, { submitter: 'ann' })));
  }
  const unremembered = new EntityMemo(1 << 20);
  submissionWriter(model.root, all, false, unremembered)(record('Ann'), meta(1));
  assert.equal(unremembered.size, 0);
});
