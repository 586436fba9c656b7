import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertNoXml, assertXml, md, mdError } from './helpers.ts';

const SURVEY = `
  | survey |
  |        | type | name | label |
  |        | text | q    | Q     |
`;

describe('settings sheet', () => {
  it('submission_url, public_key, auto_send and auto_delete make a <submission>', () => {
    const result = md(`${SURVEY}
      | settings |
      |          | submission_url         | public_key | auto_send | auto_delete |
      |          | https://example.org/s  | MIIBIjAN   | true      | false       |
    `);
    assertXml(result.xform, '<submission action="https://example.org/s" method="post" base64RsaPublicKey="MIIBIjAN" orx:auto-send="true" orx:auto-delete="false"/>');
    assert.equal(result.submissionUrl, 'https://example.org/s');
    assert.equal(result.publicKey, 'MIIBIjAN');
  });

  it('instance_name adds meta/instanceName', () => {
    const { xform } = md(`${SURVEY}
      | settings |
      |          | instance_name    |
      |          | concat('x', \${q}) |
    `);
    assertXml(xform, '<meta><instanceID/><instanceName/></meta>', `<bind nodeset="/data/meta/instanceName" type="string" calculate="concat('x',  /data/q )"/>`);
  });

  it('omit_instanceID drops meta, but not with encryption', () => {
    assertNoXml(md(`${SURVEY}\n| settings |\n| | omit_instanceID |\n| | yes |\n`).xform, '<instanceID/>');
    const { message } = mdError(`${SURVEY}\n| settings |\n| | omit_instanceID | public_key |\n| | yes | abc |\n`);
    assert.match(message, /Cannot omit instanceID/);
  });

  it('namespaces and attributes are declared on the root', () => {
    const { xform } = md(`${SURVEY}
      | settings |
      |          | namespaces                      | attribute::note |
      |          | esri="http://esri.com/xforms"   | hello           |
    `);
    assertXml(xform, 'xmlns:esri="http://esri.com/xforms"', '<data note="hello" id="test_form">');
  });

  it('version and style', () => {
    const result = md(`${SURVEY}\n| settings |\n| | version | style |\n| | 2024010101 | theme-grid |\n`);
    assertXml(result.xform, '<data id="test_form" version="2024010101">', '<h:body class="theme-grid">');
    assert.equal(result.version, '2024010101');
  });

  it('form_id in the settings names the form; the title defaults to it', () => {
    const result = md(`${SURVEY}\n| settings |\n| | form_id |\n| | my_id |\n`);
    assert.equal(result.idString, 'my_id');
    assert.equal(result.title, 'my_id');
  });

  it('rejects a settings name that is not an XML name', () => {
    const { message } = mdError(`${SURVEY}\n| settings |\n| | name |\n| | 1bad |\n`);
    assert.match(message, /On the 'settings' sheet, the 'name' value is invalid/);
  });

  it('clean_text_values=no keeps repeated spaces', () => {
    const kept = md(`| survey |\n| | type | name | label |\n| | note | n | a  b |\n| settings |\n| | clean_text_values |\n| | no |\n`);
    assertXml(kept.xform, '<label>a  b</label>');
    assertXml(md(`| survey |\n| | type | name | label |\n| | note | n | a  b |\n`).xform, '<label>a b</label>');
  });

  it('client_editable adds odk:client-editable', () => {
    assertXml(md(`${SURVEY}\n| settings |\n| | client_editable |\n| | yes |\n`).xform, '<submission odk:client-editable="true"/>');
  });
});
