import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inRecordScope, mayReplaceRecord, recordReadScope, recordWriteScope, ROLES, type Role } from './index.ts';

const facts = (role: Role | undefined) => ({ shared: false, role });

test('public data widens reading every record, never changing them', () => {
  assert.equal(recordReadScope({ ...facts('editor-minor'), sharedData: true }, true), 'all');
  assert.equal(recordReadScope({ ...facts(undefined), sharedData: true }, false), 'all');
  assert.equal(recordWriteScope(facts('editor-minor')), 'own');
  assert.equal(recordReadScope({ ...facts('editor-minor'), sharedData: false }, true), 'own');
  assert.equal(recordReadScope({ ...facts('dataentry-only'), sharedData: false }, true), 'none');
});

test('roles that do not read every record change only their own', () => {
  for (const role of ROLES) {
    const reads = recordReadScope({ ...facts(role), sharedData: false }, true);
    assert.equal(recordWriteScope(facts(role)), reads === 'all' ? 'all' : 'own', role);
  }
  assert.equal(inRecordScope('own', 7, 7), true);
  assert.equal(inRecordScope('own', 7, 8), false);
  assert.equal(inRecordScope('own', undefined, null), false);
  assert.equal(inRecordScope('none', 7, 7), false);
});

test('replacing a record: change_xform where the owner requires auth; own records for own-records roles', () => {
  // onadata: require_auth asks for change_xform.
  assert.equal(mayReplaceRecord(facts('dataentry'), true, 1, 1), false);
  assert.equal(mayReplaceRecord(facts('editor'), true, 1, 2), true);
  assert.equal(mayReplaceRecord(facts('editor-minor'), true, 1, 1), true);
  assert.equal(mayReplaceRecord(facts('editor-minor'), true, 1, 2), false);
  // An open account lets anyone replace a record (onadata), but not widen an own-records role.
  assert.equal(mayReplaceRecord(facts(undefined), false, 1, 2), true);
  assert.equal(mayReplaceRecord(facts('dataentry'), false, 1, 2), true);
  assert.equal(mayReplaceRecord(facts('dataentry-minor'), false, 1, 2), false);
  assert.equal(mayReplaceRecord(facts('dataentry-only'), false, 1, 1), true);
  assert.equal(mayReplaceRecord(facts('dataentry-only'), false, 1, null), false);
});
