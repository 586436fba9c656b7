import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pickOf } from './entities.ts';
import { odataModelOf } from './model.ts';
import { OptionError, parseExpand } from './options.ts';
import { parseResource, ResourceNotFound } from './resource.ts';

const FORM = {
  name: 'data', id_string: 'nested', title: 'Nested', type: 'survey',
  children: [
    { type: 'text', name: 'place' },
    { type: 'group', name: 'grp', children: [{ type: 'repeat', name: 'kids', children: [
      { type: 'text', name: 'kid' },
      { type: 'repeat', name: 'shots', children: [{ type: 'date', name: 'shot_date' }] },
    ] }] },
  ],
};
const model = odataModelOf(FORM);

test('resource paths: sets, keys, navigation through groups and down the levels', () => {
  assert.deepEqual(parseResource(model, 'Submissions'), { entity: model.root, uuid: undefined, positions: [], single: false });
  const one = parseResource(model, "Submissions('uuid:a-b')");
  assert.deepEqual([one.uuid, one.positions, one.single], ['a-b', [], true]);
  const kids = parseResource(model, "Submissions('uuid:a')/kids");
  assert.deepEqual([kids.entity.setName, kids.uuid, kids.positions, kids.single], ['Submissions.kids', 'a', [], false]);
  const shots = parseResource(model, "Submissions.kids('uuid:a/kids/2')/shots");
  assert.deepEqual([shots.entity.setName, shots.uuid, shots.positions, shots.single], ['Submissions.kids.shots', 'a', [2], false]);
  const shot = parseResource(model, "Submissions('uuid:a')/kids('uuid:a/kids/2')/shots('uuid:a/kids/2/shots/3')");
  assert.deepEqual([shot.entity.setName, shot.positions, shot.single], ['Submissions.kids.shots', [2, 3], true]);
  const quoted = parseResource(model, "Submissions('uuid:it''s')");
  assert.equal(quoted.uuid, "it's");
});

test('resource paths that name nothing are ResourceNotFound; malformed ones OptionError', () => {
  for (const path of ['Nothing', "Submissions('a')", "Submissions('uuid:a')/nosuch", "Submissions.kids('uuid:a/shots/1')", "Submissions.kids('uuid:a/kids/0')", "Submissions('uuid:a')/kids('uuid:b/kids/1')", "Submissions.kids.shots('uuid:a/kids/1')"]) {
    assert.throws(() => parseResource(model, path), ResourceNotFound, path);
  }
  for (const path of ['Submissions/kids', 'Submissions(1)', "Submissions('a", "Submissions('a')x", 'Submissions/', '/Submissions']) {
    assert.throws(() => parseResource(model, path), OptionError, path);
  }
});

test('$expand trees and $select picks', () => {
  assert.equal(parseExpand('*'), '*');
  assert.deepEqual(parseExpand('kids($expand=shots),other'), new Map([['kids', new Map([['shots', new Map()]])], ['other', new Map()]]));
  for (const bad of ['kids(', 'kids($select=x)', 'kids)', '1x']) assert.throws(() => parseExpand(bad), OptionError, bad);
  assert.equal(pickOf(undefined), true);
  assert.deepEqual(pickOf([['grp', 'a'], ['grp', 'b'], ['place'], ['__system', 'submissionDate']]), new Map<string, unknown>([
    ['grp', new Map([['a', true], ['b', true]])],
    ['place', true],
    ['__system', new Map([['submissionDate', true]])],
  ]));
  assert.deepEqual(pickOf([['grp', 'a'], ['grp']]), new Map([['grp', true]]));
});
