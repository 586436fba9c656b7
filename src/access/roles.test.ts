import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyMetaPerms, isMetaPerms, remapByMetaPerms } from './roles.ts';

test('meta permissions: three known roles', () => {
  assert.equal(isMetaPerms('editor-minor|dataentry-only|readonly-no-download'), true);
  assert.equal(isMetaPerms('editor|dataentry'), false);
  assert.equal(isMetaPerms('editor|dataentry|reader'), false);
  assert.equal(isMetaPerms('editor|dataentry|readonly|owner'), false);
});

test('a share lands on a form as its meta-permission slot', () => {
  const perms = 'editor-no-download|dataentry-minor|readonly-no-download';
  assert.equal(applyMetaPerms('editor', perms), 'editor-no-download');
  assert.equal(applyMetaPerms('dataentry-only', perms), 'dataentry-minor');
  assert.equal(applyMetaPerms('readonly', perms), 'readonly-no-download');
  assert.equal(applyMetaPerms('manager', perms), 'manager');
});

test('changed meta permissions re-map members by role family', () => {
  const perms = 'editor-minor|dataentry-only|readonly-no-download';
  assert.equal(remapByMetaPerms('editor-no-download', perms, undefined), 'editor-minor');
  assert.equal(remapByMetaPerms('dataentry', perms, 'dataentry'), 'dataentry-only');
  assert.equal(remapByMetaPerms('readonly', perms, undefined), 'readonly-no-download');
  assert.equal(remapByMetaPerms('readonly', perms, 'readonly'), 'readonly-no-download');
  // A stricter read-only role held on the project is kept.
  assert.equal(remapByMetaPerms('readonly-no-download', 'editor|dataentry|readonly', 'readonly-no-download'), 'readonly-no-download');
  assert.equal(remapByMetaPerms('owner', perms, 'owner'), 'owner');
  assert.equal(remapByMetaPerms('manager', perms, 'manager'), 'manager');
});
