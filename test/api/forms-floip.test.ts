import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createUser, multipart, startTestServer, type TestServer, type TestUser } from '../helpers.ts';

const HOUSEHOLD_SURVEY = readFileSync(new URL('../fixtures/floip/household-survey.json', import.meta.url));

let server: TestServer;
let bob: TestUser;

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
});
after(() => server.close());

function publishFloip(content: Uint8Array | string, user: TestUser = bob) {
  const body = multipart({}, [{ name: 'floip_file', fileName: 'package.json', content, contentType: 'application/json' }]);
  return server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: body.payload, headers: { ...body.headers, ...user.auth } });
}

interface FormJsonChild {
  type: string;
  name: string;
  label?: string;
  bind?: { constraint?: string };
  children?: Array<{ name: string; label: string }>;
}

describe('POST /api/v1/forms with floip_file', () => {
  test('a Flow Results package publishes as a form: 201 with the full fields, id_string and title from the package', async () => {
    const res = await publishFloip(HOUSEHOLD_SURVEY);
    assert.equal(res.statusCode, 201, res.body);
    const form = res.json();
    assert.equal(form.id_string, 'household-water-survey');
    assert.equal(form.title, 'Household Water Survey, March 2026');
    assert.equal(form.has_id_string_changed, false);
    assert.equal(form.owner, 'http://testserver/api/v1/users/bob');
    assert.equal(typeof form.formid, 'number');
    assert.match(form.hash, /^md5:[0-9a-f]{32}$/);
    assert.equal(form.num_of_submissions, 0);
    assert.equal(form.users[0].user, 'bob');
    assert.equal(form.users[0].role, 'owner');
    assert.ok(
      form.metadata.some((m: { data_type: string; data_value: string }) => m.data_type === 'xform_meta_perms' && m.data_value === 'editor|dataentry|readonly'),
    );
    for (const field of ['created_by', 'tags', 'enketo_url', 'last_submission_time', 'form_versions', 'data_views', 'version', 'project']) {
      assert.ok(field in form, `full representation carries ${field}`);
    }

    const json = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${form.formid}/form.json`, headers: bob.auth });
    assert.equal(json.statusCode, 200);
    const formJson = json.json<{ id_string: string; title: string; children: FormJsonChild[] }>();
    assert.equal(formJson.id_string, 'household-water-survey');
    assert.equal(formJson.title, 'Household Water Survey, March 2026');
    const questions = formJson.children.filter((c) => c.name !== 'meta');
    assert.deepEqual(
      questions.map((c) => [c.name, c.type]),
      [
        ['water_source', 'select one'],
        ['water_uses', 'select all that apply'],
        ['household_size', 'integer'],
        ['litres_per_day', 'decimal'],
        ['comments', 'text'],
        ['feedback', 'text'],
        ['source_photo', 'photo'],
        ['source_video', 'video'],
        ['voice_note', 'audio'],
        ['location', 'geopoint'],
        ['visit_started', 'dateTime'],
        ['last_repair', 'date'],
        ['collection_time', 'time'],
        ['_7e1c9a52-3b2f-4d6a-8e0f-5a4b3c2d1e0f', 'select one'],
      ],
    );
    const byName = new Map(questions.map((c) => [c.name, c]));
    assert.equal(byName.get('water_source')?.label, 'What is your main source of drinking water?');
    assert.deepEqual(byName.get('water_source')?.children?.map((c) => c.name), ['piped', 'borehole', 'protected well', 'river or lake']);
    assert.deepEqual(byName.get('water_uses')?.children, [
      { name: 'drinking', label: 'drinking' },
      { name: 'cooking', label: 'cooking' },
      { name: 'washing_clothes', label: 'washing clothes' },
      { name: 'livestock', label: 'livestock' },
    ]);
    assert.equal(byName.get('household_size')?.bind?.constraint, '. >= 1 and . <= 40');
    assert.equal(byName.get('litres_per_day')?.bind?.constraint, '. >= 0 and . <= 2000');

    const xml = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${form.formid}/form.xml`, headers: bob.auth });
    assert.equal(xml.statusCode, 200);
    assert.match(xml.body, /<bind nodeset="\/data\/visit_started" type="dateTime"\/>/);
  });

  test('publishing the same package again gets a suffixed id_string', async () => {
    // An account of its own that publishes the package twice: bob's first publish stays unsuffixed.
    const rita = await createUser(server.app, 'rita');
    assert.equal((await publishFloip(HOUSEHOLD_SURVEY, rita)).statusCode, 201);
    const res = await publishFloip(HOUSEHOLD_SURVEY, rita);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().id_string, 'household-water-survey_1');
    assert.equal(res.json().has_id_string_changed, true);
  });

  test('a package with an unsupported question type: 400 alert-error naming the question', async () => {
    const pkg = JSON.parse(HOUSEHOLD_SURVEY.toString('utf8')) as { resources: Array<{ schema: { questions: Record<string, unknown> } }> };
    const schema = pkg.resources[0]?.schema;
    assert.ok(schema);
    schema.questions['signature'] = { type: 'signature', label: 'Sign here', type_options: {} };
    const res = await publishFloip(JSON.stringify(pkg));
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), {
      type: 'alert-error',
      text: 'Question "signature" has the unsupported type "signature". Supported types: select_one, select_many, numeric, text, open, image, video, audio, geo_point, datetime, date, time.',
    });
  });

  test('malformed JSON and a package that is not a flow-results package: 400 alert-error', async () => {
    const broken = await publishFloip('{"profile": "flow-results-package", "name": ');
    assert.equal(broken.statusCode, 400);
    assert.equal(broken.json().type, 'alert-error');
    assert.match(broken.json().text, /^The FLOIP package is not valid JSON: /);

    const other = await publishFloip(JSON.stringify({ profile: 'tabular-data-package', name: 'x', resources: [] }));
    assert.equal(other.statusCode, 400);
    assert.deepEqual(other.json(), {
      type: 'alert-error',
      text: `This is not a Flow Results package: its 'profile' is "tabular-data-package", expected "flow-results-package".`,
    });
  });

  test('a package whose title has XML markup characters gets the publish path’s title error', async () => {
    const pkg = { ...(JSON.parse(HOUSEHOLD_SURVEY.toString('utf8')) as Record<string, unknown>), title: 'Water <draft>' };
    const res = await publishFloip(JSON.stringify(pkg));
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { type: 'alert-error', text: "Title shouldn't have any invalid xml characters ('>' '&' '<')" });
  });

  test('PATCH with a floip_file replaces the definition of a form published from the same package', async () => {
    // Published by an account of its own, so that bob's package keeps its unsuffixed id_string.
    const pat = await createUser(server.app, 'pat');
    const published = await publishFloip(HOUSEHOLD_SURVEY, pat);
    assert.equal(published.statusCode, 201, published.body);
    const pkg = JSON.parse(HOUSEHOLD_SURVEY.toString('utf8')) as Record<string, unknown> & { resources: Array<{ schema: { questions: Record<string, unknown> } }> };
    const schema = pkg.resources[0]?.schema;
    assert.ok(schema);
    schema.questions['repair_cost'] = { type: 'numeric', label: 'What did the last repair cost?', type_options: {} };
    // Replacing needs the same id_string: the package takes the published form's (suffixed _N when published again).
    const body = multipart({}, [{ name: 'floip_file', fileName: 'package.json', content: JSON.stringify({ ...pkg, name: published.json().id_string }) }]);
    const res = await server.app.inject({ method: 'PATCH', url: `/api/v1/forms/${published.json().formid}`, payload: body.payload, headers: { ...body.headers, ...pat.auth } });
    assert.equal(res.statusCode, 200, res.body);
    const json = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${published.json().formid}/form.json`, headers: pat.auth });
    const names = json.json<{ children: FormJsonChild[] }>().children.map((c) => c.name);
    assert.ok(names.includes('repair_cost'));
  });

  test('anonymous publishing is refused with 401', async () => {
    const body = multipart({}, [{ name: 'floip_file', fileName: 'package.json', content: HOUSEHOLD_SURVEY, contentType: 'application/json' }]);
    const res = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: body.payload, headers: body.headers });
    assert.equal(res.statusCode, 401);
  });
});
