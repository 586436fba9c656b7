import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { convert } from '../../../packages/xlsform/src/index.ts';
import { buildFormModel, labelText, repeatAncestors, sectionQuestions, type FormModel, type FormNode, type FormQuestion } from './model.ts';
import { usesOf } from './type-table.ts';

function modelOf(form: string, fileName = 'form.md'): FormModel {
  const result = convert(form, { fileName });
  if (!result.ok) assert.fail(result.errors.map((e) => e.message).join('; '));
  return buildFormModel(result.formJson);
}

function nodeAt(form: FormModel, path: string): FormNode | undefined {
  let nodes: readonly FormNode[] = form.root.children;
  let found: FormNode | undefined;
  for (const name of path.split('/')) {
    found = nodes.find((n) => n.name === name);
    if (!found) return undefined;
    nodes = found.kind === 'question' ? [] : found.children;
  }
  return found;
}

function questionAt(form: FormModel, path: string): FormQuestion {
  const node = nodeAt(form, path);
  assert.ok(node?.kind === 'question', `${path} is a question`);
  return node;
}

describe('buildFormModel', () => {
  test('tutorial_w_repeats: identity, repeats, numbers, media, geopoints, start and end', () => {
    const bytes = readFileSync(new URL('../../../test/fixtures/submissions/tutorial_w_repeats.csv', import.meta.url));
    const result = convert(bytes, { fileName: 'tutorial_w_repeats.csv' });
    if (!result.ok) assert.fail(result.errors.map((e) => e.message).join('; '));
    const form = buildFormModel(result.formJson);
    assert.equal(form.rootName, 'data');
    assert.equal(form.idString, 'tutorial_w_repeats');
    assert.equal(form.version, '2014111');
    assert.deepEqual(form.repeats.map((r) => r.path), ['children']);
    assert.deepEqual([...form.numberPaths], ['age', 'children/childs_age']);
    assert.deepEqual(form.mediaPaths, ['picture']);
    assert.deepEqual(form.geopointPaths, ['gps']);
    assert.equal(questionAt(form, 'web_browsers').uses.selectMultiple, true);
    assert.equal(form.startPath, 'start');
    assert.equal(form.endPath, 'end');
    assert.equal(form.encrypted, false);
  });

  test('paths run through groups and nested repeats; choices are not elements', () => {
    const form = modelOf(`
      | survey |
      |        | type                | name      | label |
      |        | start               | began     |       |
      |        | end                 | finished  |       |
      |        | begin group         | hh        | H     |
      |        | int                 | size      | S     |
      |        | gps                 | where     | W     |
      |        | begin repeat        | member    | M     |
      |        | decimal             | income    | I     |
      |        | select_one yn       | yes       | Y     |
      |        | begin repeat        | visit     | V     |
      |        | photo               | shot      | P     |
      |        | audio               | voice     | A     |
      |        | end repeat          |           |       |
      |        | end repeat          |           |       |
      |        | end group           |           |       |
      |        | osm                 | building  | B     |
      |        | file                | doc       | D     |
      | choices |
      |         | list_name | name | label |
      |         | yn        | yes  | Yes   |
      |         | yn        | no   | No    |
    `);
    assert.deepEqual(form.repeats.map((r) => r.path), ['hh/member', 'hh/member/visit']);
    assert.deepEqual([...form.numberPaths], ['hh/size', 'hh/member/income']);
    assert.deepEqual(form.geopointPaths, ['hh/where']);
    assert.deepEqual(form.mediaPaths, ['hh/member/visit/shot', 'hh/member/visit/voice', 'building', 'doc']);
    assert.deepEqual(form.topLevelOsmPaths, ['building']);
    assert.equal(form.startPath, 'began');
    assert.equal(form.endPath, 'finished');
    assert.equal(nodeAt(form, 'hh/member/yes/yes'), undefined);
    const visit = nodeAt(form, 'hh/member/visit');
    assert.equal(visit?.kind, 'repeat');
    assert.ok(visit?.kind === 'repeat');
    assert.deepEqual(repeatAncestors(visit).map((r) => r.path), ['hh/member']);
    assert.equal(questionAt(form, 'hh/member/visit/shot').repeat, visit);
    assert.equal(questionAt(form, 'hh/size').repeat, null);
    assert.deepEqual(sectionQuestions(form.root.children).map((q) => q.path), ['began', 'finished', 'hh/size', 'hh/where', 'building', 'doc', 'meta/instanceID']);
  });

  test('groups flatten into paths, nested groups too, and keep their labels', () => {
    const form = modelOf(`
      | survey |
      |        | type        | name  | label |
      |        | begin group | outer | Outer |
      |        | begin group | inner | Inner |
      |        | text        | q     | Q     |
      |        | end group   |       |       |
      |        | end group   |       |       |
    `);
    const outer = nodeAt(form, 'outer');
    assert.equal(outer?.kind, 'group');
    assert.equal(outer?.label, 'Outer');
    assert.equal(questionAt(form, 'outer/inner/q').path, 'outer/inner/q');
    assert.equal(form.repeats.length, 0);
  });

  test('select_multiple: choices from the list, with labels by language', () => {
    const form = modelOf(`
      | survey |
      |        | type                 | name   | label::English | label::French |
      |        | select_multiple fr   | fruit  | Fruit          | Fruit         |
      |        | select_one fr        | best   | Best           | Meilleur      |
      |        | note                 | hello  | Hello          | Bonjour       |
      | choices |
      |         | list_name | name   | label::English | label::French |
      |         | fr        | apple  | Apple          | Pomme         |
      |         | fr        | pear   | Pear           | Poire         |
      | settings |
      |          | default_language |
      |          | English          |
    `);
    const fruit = questionAt(form, 'fruit');
    assert.equal(fruit.uses.selectMultiple, true);
    assert.equal(fruit.uses.importValue, 'select_multiple');
    assert.deepEqual(fruit.choiceNames, ['apple', 'pear']);
    assert.deepEqual(fruit.choices.map((c) => labelText(c.label, 'French', form.defaultLanguage)), ['Pomme', 'Poire']);
    const best = questionAt(form, 'best');
    assert.equal(best.uses.selectOne, true);
    assert.equal(labelText(best.label, 'French', form.defaultLanguage), 'Meilleur');
    assert.equal(labelText(best.label, undefined, form.defaultLanguage), 'Best');
    assert.equal(labelText(best.label, 'Klingon', form.defaultLanguage), 'Best');
    // Notes hold no answer in any use.
    assert.equal(nodeAt(form, 'hello'), undefined);
  });

  test('choices from a file are not in the form: nothing to check values against', () => {
    const form = modelOf(`
      | survey |
      |        | type                               | name  | label |
      |        | select_one_from_file places.csv    | place | Place |
      |        | select_multiple_from_file tags.xml | tags  | Tags  |
    `);
    const place = questionAt(form, 'place');
    assert.equal(place.uses.selectOne, true);
    assert.deepEqual(place.choices, []);
    assert.equal(place.choiceNames, null);
    assert.equal(questionAt(form, 'tags').choiceNames, null);
  });

  test('a form with a public key takes encrypted submissions', () => {
    const form = modelOf(`
      | survey |
      |        | type | name | label |
      |        | text | a    | A     |
      | settings |
      |          | public_key |
      |          | MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA |
    `);
    assert.equal(form.encrypted, true);
  });

  test('odd form JSON is tolerated: missing names, non-array children', () => {
    const form = buildFormModel({ name: 'survey_root', children: [{ type: 'integer' }, { name: 'g', type: 'group', children: 'x' }, 5] });
    assert.equal(form.rootName, 'survey_root');
    assert.equal(form.idString, 'survey_root');
    assert.equal(form.numberPaths.size, 0);
    assert.deepEqual(form.root.children.map((c) => c.path), ['g']);
  });
});

describe('the type table', () => {
  test('where the uses differ, each gets what it needs', () => {
    // Parsing stores numbers by type only; exports also type a column by its bind.
    const range = usesOf('range', 'int');
    assert.equal(range.numberInRecord, false);
    assert.equal(range.exportValue, 'int');
    assert.equal(range.importValue, 'decimal');
    // Imports check date-times; exports write them as text; OData types a few as DateTimeOffset.
    assert.equal(usesOf('date time', 'dateTime').importValue, 'datetime');
    assert.equal(usesOf('date time', 'dateTime').exportValue, 'text');
    assert.equal(usesOf('dateTime', 'dateTime').odataDateTime, true);
    assert.equal(usesOf('start', 'dateTime').timestamp, 'start');
    // Notes under their other spellings hold no value in imports, but are columns in exports.
    assert.equal(usesOf('q note', 'string').importValue, null);
    // Exports match selects by prefix, imports by name.
    assert.equal(usesOf('select1', 'string').selectOne, true);
    assert.equal(usesOf('select1', 'string').importValue, 'text');
    // Every use agrees on geopoints (by type or bind) and media.
    assert.equal(usesOf('text', 'geopoint').geopoint, true);
    assert.equal(usesOf('text', 'geopoint').importValue, 'geopoint');
    assert.equal(usesOf('osm', 'binary').media, true);
  });
});
