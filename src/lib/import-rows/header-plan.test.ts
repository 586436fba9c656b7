import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildFormModel } from '../form-model/model.ts';
import { planHeaders, type ColumnRole } from './header-plan.ts';
import { RowBuilder } from './row-builder.ts';

// A form with a group, a repeat inside it, a nested repeat, a select_multiple and a geopoint.
const FORM_JSON = {
  name: 'data',
  children: [
    { type: 'text', name: 'name' },
    { type: 'geopoint', name: 'gps' },
    { type: 'select all that apply', name: 'pets', children: [{ name: 'cat' }, { name: 'dog' }] },
    {
      type: 'group', name: 'hh', children: [
        { type: 'integer', name: 'size' },
        { type: 'repeat', name: 'member', children: [
          { type: 'text', name: 'm_name' },
          { type: 'repeat', name: 'visit', children: [{ type: 'date', name: 'when' }] },
        ] },
      ],
    },
    { type: 'note', name: 'thanks' },
    { type: 'group', name: 'meta', children: [{ type: 'calculate', name: 'instanceID' }] },
  ],
};
const FORM = buildFormModel(FORM_JSON);

const describeRole = (role: ColumnRole): string =>
  'question' in role ? `${role.role}:${role.question.path}${role.steps.map((s) => `[${s.repeat.path}#${s.index}]`).join('')}${role.role === 'choice' ? `=${role.choice}` : ''}${role.role === 'geo-part' ? `@${role.part}` : ''}` : role.role;

test('export column names map to questions, repeat entries, choices and geopoint parts', () => {
  const result = planHeaders(FORM, [
    '\uFEFFname', 'gps', '_gps_latitude', 'pets/cat', 'pets/dog', 'hh/size', 'hh/member[2]/m_name', 'hh/member[1]/visit[3]/when',
    'meta/instanceID', '_uuid', '_submission_time', '_submitted_by', '_id', '_tags', '_mystery', 'formhub/uuid',
  ]);
  assert.ok(result.ok, result.ok ? '' : result.error);
  assert.deepEqual(result.plan.columns.map(describeRole), [
    'value:name', 'value:gps', 'geo-part:gps@0', 'choice:pets=cat', 'choice:pets=dog', 'value:hh/size', 'value:hh/member/m_name[hh/member#2]',
    'value:hh/member/visit/when[hh/member#1][hh/member/visit#3]', 'instance-id', 'uuid', 'submission-time', 'submitted-by', 'ignored', 'ignored', 'ignored', 'ignored',
  ]);
  assert.deepEqual(result.plan.extraColumns, ['_mystery']);
});

test('dotted names are read when the file uses dots; onadata\'s gps.latitude too', () => {
  const result = planHeaders(FORM, ['name', 'gps.latitude', 'gps.longitude', 'pets.dog', 'hh.size', 'hh.member[1].m_name']);
  assert.ok(result.ok, result.ok ? '' : result.error);
  assert.deepEqual(result.plan.columns.map(describeRole), ['value:name', 'geo-part:gps@0', 'geo-part:gps@1', 'choice:pets=dog', 'value:hh/size', 'value:hh/member/m_name[hh/member#1]']);
});

test('missing, unknown and duplicate columns and spaces are refused with their names', () => {
  assert.deepEqual(planHeaders(FORM, ['name']), { ok: false, error: 'Sorry uploaded file does not match the form. The file is missing the column(s): gps, hh/size, pets.' });
  assert.deepEqual(planHeaders(FORM, ['name', 'gps', 'pets', 'hh/size', 'colour', 'pets/fish']), { ok: false, error: 'The file has column(s) the form does not have: colour, pets/fish.' });
  assert.deepEqual(planHeaders(FORM, ['name', 'name']), { ok: false, error: 'The file has duplicate column(s): name.' });
  assert.deepEqual(planHeaders(FORM, ['my name']), { ok: false, error: 'CSV file fieldnames should not contain spaces' });
});

test('a row becomes the instance a device would send, in form order', () => {
  const result = planHeaders(FORM, ['hh/member[2]/m_name', 'hh/member[1]/m_name', 'hh/size', 'name', 'pets/dog', 'pets/cat', '_gps_longitude', '_gps_latitude', '_uuid']);
  assert.ok(result.ok);
  const builder = new RowBuilder(FORM, result.plan, { rootName: 'data', idString: 'pets', formUuid: 'f00d' });
  const prepared = builder.prepare(['Zed', 'Amy', '3', 'A & B', 'True', '1', '36.8', '-1.2', 'uuid:abc']);
  assert.ok(prepared.ok);
  assert.equal(prepared.row.matchUuid, 'abc');
  assert.equal(
    prepared.row.render('new', 'abc'),
    '<?xml version="1.0" ?><data id="pets" instanceID="uuid:new"><formhub><uuid>f00d</uuid></formhub><name>A &amp; B</name><gps>-1.2 36.8</gps>' +
      '<pets>cat dog</pets><hh><size>3</size><member><m_name>Amy</m_name></member><member><m_name>Zed</m_name></member></hh>' +
      '<meta><instanceID>uuid:new</instanceID><deprecatedID>uuid:abc</deprecatedID></meta></data>',
  );
  const bad = builder.prepare(['', '', 'three', '', 'maybe', '', '', '', '']);
  assert.deepEqual(bad, { ok: false, problems: [{ column: 'hh/size', value: 'three', problem: 'integer' }, { column: 'pets/dog', value: 'maybe', problem: 'select' }] });
});
