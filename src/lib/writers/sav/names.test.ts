import assert from 'node:assert/strict';
import { test } from 'node:test';
import { shortNamesFor, uniqueSpssNames, validSpssName } from './names.ts';
import { utf8Length } from './utf8.ts';

test('onadata replacements turn xpaths into SPSS names', () => {
  assert.equal(validSpssName('group/sub-group/q:1{x}'), 'group.sub_group.q_1x');
  assert.equal(validSpssName('_submission_time'), '@_submission_time');
});

test('names get a valid first character, no trailing dot and no reserved word', () => {
  assert.equal(validSpssName('1st'), '@1st');
  assert.equal(validSpssName('.hidden'), '@.hidden');
  assert.equal(validSpssName('#scratch'), '@#scratch');
  assert.equal(validSpssName('$sys'), '@$sys');
  assert.equal(validSpssName('ends.'), 'ends_');
  assert.equal(validSpssName('with'), 'with_');
  assert.equal(validSpssName('And'), 'And_');
  assert.equal(validSpssName('my name (kg)'), 'my_name__kg_');
  assert.equal(validSpssName(''), 'var');
});

test('letters from any script are kept and emoji become one underscore', () => {
  assert.equal(validSpssName('âge_年龄'), 'âge_年龄');
  assert.equal(validSpssName('love❤️it'), 'love_it');
  assert.equal(validSpssName('family👨‍👩‍👧name'), 'family_name');
});

test('names are cut to 64 bytes at a character boundary', () => {
  const name = validSpssName(`a${'é'.repeat(40)}`);
  assert.equal(utf8Length(name), 63);
  assert.equal(name, `a${'é'.repeat(31)}`);
});

test('duplicates, also after truncation and without regard to case, get @1, @2', () => {
  const long = 'x'.repeat(70);
  assert.deepEqual(uniqueSpssNames(['q', 'Q', 'q', 'q@1', long, `${long}y`]), [
    'q', 'Q@1', 'q@2', 'q@1@1', 'x'.repeat(64), `${'x'.repeat(62)}@1`,
  ]);
});

test('short names are unique ASCII and never another variable\'s long name', () => {
  const longNames = ['questionnaire_a', 'questionnaire_b', 'QUESTION', 'été', 'long_text', 'and_'];
  const names = shortNamesFor(longNames, [1, 1, 1, 1, 3, 1]);
  assert.deepEqual(names, [['QUESTIO1'], ['QUESTIO2'], ['QUESTION'], ['T'], ['LONG_TEX', 'LONG_1', 'LONG_2'], ['AND_']]);
});
