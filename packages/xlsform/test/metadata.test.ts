import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertXml, md, mdError } from './helpers.ts';

describe('metadata and audit', () => {
  const preloads: Array<[string, string]> = [
    ['start', 'timestamp" type="dateTime" jr:preloadParams="start"'],
    ['end', 'timestamp" type="dateTime" jr:preloadParams="end"'],
    ['today', 'date" type="date" jr:preloadParams="today"'],
    ['deviceid', 'property" type="string" jr:preloadParams="deviceid"'],
    ['username', 'property" type="string" jr:preloadParams="username"'],
    ['email', 'property" type="string" jr:preloadParams="email"'],
    ['phonenumber', 'property" type="string" jr:preloadParams="phonenumber"'],
  ];
  for (const [type, attrs] of preloads) {
    it(`${type} is a preloaded value without a body control`, () => {
      const { xform } = md(`| survey |\n| | type | name |\n| | ${type} | m |\n`);
      assertXml(xform, `<bind nodeset="/data/m" jr:preload="${attrs}/>`, '<h:body/>');
    });
  }

  it('simserial and subscriberid warn that devices no longer support them', () => {
    const { warnings } = md(`| survey |\n| | type | name |\n| | simserial | s |\n`);
    assert.ok(warnings.some((w) => w.startsWith('[row : 2] simserial is no longer supported')));
  });

  it('audit goes into meta with its parameters as bind attributes', () => {
    const { xform } = md(`
      | survey |
      |        | type  | name | parameters                                                              |
      |        | audit |      | location-priority=balanced location-min-interval=60 location-max-age=120 track-changes=true |
    `);
    assertXml(
      xform,
      '<meta><audit/><instanceID/></meta>',
      '<bind nodeset="/data/meta/audit" type="binary" odk:track-changes="true" odk:location-max-age="120" odk:location-min-interval="60" odk:location-priority="balanced"/>',
    );
  });

  it('audit must not be given another name', () => {
    const { message } = mdError(`| survey |\n| | type | name |\n| | audit | a |\n`);
    assert.match(message, /\[row : 2\] Audits must always be named 'audit.'/);
  });

  it('audit location parameters come as a set of three', () => {
    const { message } = mdError(`| survey |\n| | type | parameters |\n| | audit | location-priority=balanced |\n`);
    assert.match(message, /location-priority', 'location-min-interval', and 'location-max-age' are required/);
  });
});
