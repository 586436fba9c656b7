import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mdError } from './helpers.ts';

describe('rejected forms name the sheet, row and column', () => {
  it('a name that is not an XML name', () => {
    const { message, failure } = mdError(`| survey |\n| | type | name | label |\n| | text | 1st | Q |\n`);
    assert.match(message, /\[row : 2\] On the 'survey' sheet, the 'name' value is invalid. Names must begin with a letter or underscore/);
    assert.deepEqual({ ...failure.errors[0], message: undefined }, { code: 'invalid_name', message: undefined, sheet: 'survey', row: 2, column: 'name' });
  });

  it('a question without a type', () => {
    const { message } = mdError(`| survey |\n| | type | name | label |\n| | text | a | A |\n| | | b | B |\n`);
    assert.match(message, /^\[row : 3\] Question with no type\./);
  });

  it('two columns that mean the same thing', () => {
    const { message } = mdError(`| survey |\n| | type | name | label | relevant | relevance |\n| | text | a | A | 1 | 1 |\n`);
    assert.match(message, /Headers that are different names for the same column were found: 'relevant', 'relevance'/);
  });

  it('a survey sheet without a type column', () => {
    const { message } = mdError(`| survey |\n| | name | label |\n| | a | A |\n`);
    assert.match(message, /required column headers were not found: 'type'/);
  });

  it('a question without a label or hint', () => {
    const { message } = mdError(`| survey |\n| | type | name |\n| | text | a |\n`);
    assert.equal(message, "The survey element named 'a' has no label or hint.");
  });

  it("'meta' is reserved", () => {
    const { message } = mdError(`| survey |\n| | type | name | label |\n| | text | meta | M |\n`);
    assert.match(message, /'meta' is reserved for form metadata/);
  });

  it('multiple-choice names with spaces', () => {
    const { message } = mdError(`| survey |\n| | type | name | label |\n| | select_multiple l | q | Q |\n| choices |\n| | list_name | name | label |\n| | l | a b | AB |\n`);
    assert.match(message, /Choice names with spaces cannot be added to multiple choice selects/);
  });

  it('invalid parameter syntax', () => {
    const { message } = mdError(`| survey |\n| | type | name | label | parameters |\n| | range | r | R | start |\n`);
    assert.match(message, /\[row : 2\] On the 'survey' sheet, the 'parameters' value is invalid/);
  });

  it('a trigger naming an unknown question', () => {
    const { message } = mdError(`| survey |\n| | type | name | label | trigger |\n| | text | a | A | \${zz} |\n`);
    assert.match(message, /\[row : 2\] On the 'survey' sheet, the 'trigger' value is invalid.*'zz'/);
  });
});
