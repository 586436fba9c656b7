import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FORM_PERMISSIONS, isMetaPerms, roleOnForm, ROLES } from './roles.ts';

test('meta permissions: three known roles', () => {
  assert.equal(isMetaPerms('editor-minor|dataentry-only|readonly-no-download'), true);
  assert.equal(isMetaPerms('editor|dataentry'), false);
  assert.equal(isMetaPerms('editor|dataentry|reader'), false);
  assert.equal(isMetaPerms('editor|dataentry|readonly|owner'), false);
});

test('a narrower meta-permission slot narrows a grant', () => {
  const perms = 'editor-no-download|dataentry-minor|readonly-no-download';
  assert.equal(roleOnForm('editor', perms), 'editor-no-download');
  assert.equal(roleOnForm('dataentry', perms), 'dataentry-minor');
  assert.equal(roleOnForm('readonly', perms), 'readonly-no-download');
  assert.equal(roleOnForm('manager', perms), 'manager');
  assert.equal(roleOnForm('owner', perms), 'owner');
});

test('the default meta permissions keep every restricted role as asked (onadata widens them)', () => {
  for (const role of ROLES) assert.equal(roleOnForm(role, 'editor|dataentry|readonly'), role);
  for (const role of ROLES) assert.equal(roleOnForm(role, undefined), role);
});

test('a slot of another family gives what both roles allow', () => {
  assert.equal(roleOnForm('editor', 'dataentry|dataentry|readonly'), 'dataentry');
  assert.equal(roleOnForm('editor-minor', 'dataentry|dataentry|readonly'), 'dataentry-minor');
  // No role grants only what dataentry-only and readonly-no-download share: the grant stays as asked.
  assert.equal(roleOnForm('dataentry-only', 'editor|readonly-no-download|readonly'), 'dataentry-only');
});

test('no meta permissions ever give a form permission the asked role lacks', () => {
  for (const asked of ROLES) {
    for (const a of ROLES) {
      for (const b of ['editor', 'dataentry', 'readonly'] as const) {
        const perms = b === 'editor' ? `${a}|dataentry|readonly` : b === 'dataentry' ? `editor|${a}|readonly` : `editor|dataentry|${a}`;
        const landed = roleOnForm(asked, perms);
        const extra = [...FORM_PERMISSIONS[landed]].filter((p) => !FORM_PERMISSIONS[asked].has(p));
        assert.deepEqual(extra, [], `${asked} under ${perms} became ${landed}`);
      }
    }
  }
});
