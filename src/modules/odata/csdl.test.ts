import { test } from 'node:test';
import assert from 'node:assert/strict';
import { metadataXml, serviceDocument } from './csdl.ts';
import { odataModelOf } from './model.ts';

const FORM = {
  name: 'data', id_string: 'nested', title: 'Nested', type: 'survey',
  children: [
    { type: 'integer', name: 'age' },
    { type: 'date', name: 'born' },
    { type: 'start', name: 'start' },
    { type: 'geopoint', name: 'gps' },
    { type: 'select one', name: 'color', children: [{ name: 'red' }] },
    { type: 'group', name: 'grp', children: [{ type: 'decimal', name: 'income' }] },
    { type: 'repeat', name: 'kids', children: [
      { type: 'text', name: 'kid' },
      { type: 'repeat', name: 'shots', children: [{ type: 'date', name: 'shot_date' }] },
    ] },
    { type: 'note', name: 'hello' },
  ],
};

test('each answer is typed from its question; groups are complex types; repeats are entity sets with navigation', () => {
  const model = odataModelOf(FORM);
  assert.deepEqual([...model.sets.keys()], ['Submissions', 'Submissions.kids', 'Submissions.kids.shots']);
  const xml = metadataXml(model);
  for (const fragment of [
    '<Property Name="age" Type="Edm.Int64"/>',
    '<Property Name="born" Type="Edm.Date"/>',
    '<Property Name="start" Type="Edm.DateTimeOffset"/>',
    '<Property Name="gps" Type="Edm.GeographyPoint"/>',
    '<Property Name="color" Type="Edm.String"/>',
    '<ComplexType Name="Submission_grp"><Property Name="income" Type="Edm.Decimal"/></ComplexType>',
    '<NavigationProperty Name="kids" Type="Collection(org.gather.user.nested.Submissions_kids)"/>',
    '<NavigationProperty Name="shots" Type="Collection(org.gather.user.nested.Submissions_kids_shots)"/>',
    '<Property Name="__Submissions-id" Type="Edm.String"/><Property Name="__Submissions-kids-id" Type="Edm.String"/>',
    '<EntitySet Name="Submissions.kids.shots" EntityType="org.gather.user.nested.Submissions_kids_shots"/>',
    '<Property Name="submissionDate" Type="Edm.DateTimeOffset"/>',
  ]) {
    assert.ok(xml.includes(fragment), fragment);
  }
  assert.ok(!xml.includes('hello'), 'notes are left out, as exports leave them out');
  assert.deepEqual(serviceDocument(model, 'http://x/svc').value, [
    { name: 'Submissions', kind: 'EntitySet', url: 'Submissions' },
    { name: 'Submissions.kids', kind: 'EntitySet', url: 'Submissions.kids' },
    { name: 'Submissions.kids.shots', kind: 'EntitySet', url: 'Submissions.kids.shots' },
  ]);
});
