import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pickOf, submissionText, type EntityContext, type RecordMeta } from './entities.ts';
import { EntityMemo, recordWriter, shapeOf, type StampedRecord } from './memo.ts';
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

test('the memo gives back a text only for the same shape, record version and columns', () => {
  const memo = new EntityMemo(1 << 20);
  memo.remember(1, 's1', meta(7), Buffer.from('text of 7'));
  assert.equal(memo.find(1, 's1', meta(7))?.toString(), 'text of 7');
  assert.equal(memo.find(2, 's1', meta(7)), undefined, 'another shape');
  assert.equal(memo.find(1, 's2', meta(7)), undefined, 'another version of the record');
  for (const changes of [{ uuid: 'v7' }, { submitted: 'x' }, { modified: 'x' }, { submitter: 'ann' }, { submitter: null }, { edited: true }, { media_count: 1 }, { total_media: 2 }, { status: 'x' }, { version: '2' }] satisfies Array<Partial<RecordMeta>>) {
    assert.equal(memo.find(1, 's1', meta(7, changes)), undefined, JSON.stringify(changes));
  }
  assert.equal(memo.find(1, 's1', meta(8)), undefined, 'another record');
  memo.remember(1, 's1', meta(7, { submitter: 'ann' }), Buffer.from('renamed'));
  assert.equal(memo.find(1, 's1', meta(7)), undefined);
  assert.equal(memo.find(1, 's1', meta(7, { submitter: 'ann' }))?.toString(), 'renamed');
  assert.equal(memo.size, 1);
  memo.remember(2, 's1', meta(9), Buffer.from('text of 9'));
  assert.deepEqual([...memo.entriesOf(1).keys()], [7]);
  assert.deepEqual([...memo.entriesOf(2, [7, 9]).keys()], [9]);
});

test('the memo stays within its bytes, the least recently used out first', () => {
  const text = 'y'.repeat(200);
  const one = new EntityMemo(1 << 20);
  one.remember(1, 's', meta(1), Buffer.from(text));
  const entryBytes = one.bytes;
  assert.ok(entryBytes >= text.length);
  const memo = new EntityMemo(3 * entryBytes);
  for (const id of [1, 2, 3]) memo.remember(1, 's', meta(id), Buffer.from(text));
  assert.equal(memo.size, 3);
  assert.equal(memo.find(1, 's', meta(1))?.toString(), text); // 1 is now the most recently used
  memo.remember(1, 's', meta(4), Buffer.from(text));
  assert.equal(memo.size, 3);
  assert.ok(memo.bytes <= 3 * entryBytes);
  assert.equal(memo.find(1, 's', meta(2)), undefined, 'the least recently used went');
  for (const id of [1, 3, 4]) assert.equal(memo.find(1, 's', meta(id))?.toString(), text);
  // An entity larger than the whole memo is not kept, and pushes nothing out.
  memo.remember(1, 's', meta(5), Buffer.from('z'.repeat(3 * entryBytes)));
  assert.equal(memo.size, 3);
  assert.equal(memo.find(1, 's', meta(1))?.toString(), text);
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

test('records written through the memo are the texts written without it; a record read without its text is written from it', () => {
  const memo = new EntityMemo(1 << 20);
  for (const context of [all, { expand: '*', pick: true }, { expand: new Map(), pick: pickOf([['__system', 'reviewState'], ['grp']]) }] satisfies EntityContext[]) {
    const direct = (json: string, m: RecordMeta): string => submissionText(model.root, JSON.parse(json) as Record<string, unknown>, m, context);
    const json = record('Ann');
    const read = (stamp: string, text: string | null, changes: Partial<RecordMeta> = {}): StampedRecord => ({ ...meta(1, changes), json: text, stamp });
    const first = recordWriter(model.root, context, true, undefined, memo);
    assert.deepEqual(first.known, []);
    assert.equal(first.write(read('s1', json)).toString(), direct(json, meta(1)));
    // The next request tells the read which version it has, and writes it without its text.
    const next = recordWriter(model.root, context, true, undefined, memo);
    assert.deepEqual(next.known, ['1:s1']);
    assert.ok(next.writable(read('s1', null)));
    assert.equal(next.write(read('s1', null)).toString(), direct(json, meta(1)));
    // A submitter renamed since: the text must be read after all.
    assert.equal(next.writable(read('s1', null, { submitter: 'ann' })), false);
    assert.equal(next.write(read('s1', json, { submitter: 'ann' })).toString(), direct(json, meta(1, { submitter: 'ann' })));
    // A new version of the record (a review) comes with its text.
    const reviewed = record('Ann', { _review_status: '1' });
    assert.equal(next.write(read('s2', reviewed)).toString(), direct(reviewed, meta(1)));
    assert.notEqual(direct(reviewed, meta(1)), direct(json, meta(1)));
    assert.equal(recordWriter(model.root, context, true, [1], memo).known?.[0], '1:s2');
    assert.deepEqual(recordWriter(model.root, context, true, [2], memo).known, []);
  }
  const unremembered = new EntityMemo(1 << 20);
  const writer = recordWriter(model.root, all, false, undefined, unremembered);
  assert.equal(writer.known, undefined);
  writer.write({ ...meta(1), json: record('Ann'), stamp: 's1' });
  assert.equal(unremembered.size, 0);
});

test('an entity with characters beyond ASCII is remembered as its UTF-8 bytes, whole', () => {
  const memo = new EntityMemo(1 << 20);
  const json = record('Zoë — 名前 🌍');
  const text = submissionText(model.root, JSON.parse(json) as Record<string, unknown>, meta(3), all);
  const first = recordWriter(model.root, all, true, undefined, memo);
  const written = first.write({ ...meta(3), json, stamp: 's1' });
  assert.deepEqual(written, Buffer.from(text, 'utf8'));
  const again = recordWriter(model.root, all, true, undefined, memo);
  assert.equal(again.write({ ...meta(3), json: null, stamp: 's1' }).toString('utf8'), text);
});
