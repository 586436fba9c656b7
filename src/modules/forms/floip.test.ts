import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { convert } from '../../../packages/xlsform/src/index.ts';
import { floipToXlsForm, questionName, type FloipXlsForm } from './floip.ts';

type Questions = Record<string, unknown> | unknown[];

function floipPackage(questions: Questions, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    profile: 'flow-results-package',
    name: 'demo-package',
    title: 'Demo package',
    resources: [{ name: 'demo-package-data', path: 'data.json', schema: { fields: [], questions } }],
    ...extra,
  };
}

function converted(pkg: unknown): FloipXlsForm {
  const result = floipToXlsForm(JSON.stringify(pkg));
  if (!result.ok) assert.fail(`expected a conversion, got: ${result.message}`);
  return result;
}

function problem(input: unknown): string {
  const result = floipToXlsForm(typeof input === 'string' ? input : JSON.stringify(input));
  if (result.ok) assert.fail('expected an error');
  return result.message;
}

interface FormChild {
  type: string;
  name: string;
  label?: string;
  bind?: { constraint?: string };
  children?: Array<{ name: string; label: string }>;
}

/** Runs the generated CSV through the real XLSForm converter and returns the form JSON's questions. */
function formChildren(result: FloipXlsForm): FormChild[] {
  const form = convert(result.csv, { fileName: result.fileName });
  if (!form.ok) assert.fail(`the CSV XLSForm did not convert: ${form.errors.map((e) => e.message).join('; ')}`);
  const children = form.formJson['children'] as FormChild[];
  return children.filter((c) => c.name !== 'meta');
}

function onlyChild(questions: Questions): FormChild {
  const [child, ...rest] = formChildren(converted(floipPackage(questions)));
  assert.equal(rest.length, 0);
  if (!child) assert.fail('no question');
  return child;
}

describe('floipToXlsForm: question types', () => {
  const cases: Array<[floipType: string, formJsonType: string]> = [
    ['text', 'text'],
    ['open', 'text'],
    ['image', 'photo'],
    ['video', 'video'],
    ['audio', 'audio'],
    ['geo_point', 'geopoint'],
    ['geopoint', 'geopoint'],
    ['datetime', 'dateTime'],
    ['date', 'date'],
    ['time', 'time'],
  ];
  for (const [floipType, formJsonType] of cases) {
    test(`${floipType} becomes ${formJsonType}, keeping the FLOIP label`, () => {
      const child = onlyChild({ q1: { type: floipType, label: `A ${floipType} question`, type_options: {} } });
      assert.deepEqual({ type: child.type, name: child.name, label: child.label }, { type: formJsonType, name: 'q1', label: `A ${floipType} question` });
    });
  }

  test('select_one becomes select one with a choice list named after the question, choices as both name and label', () => {
    const child = onlyChild({ sex: { type: 'select_one', label: 'Are you male or female?', type_options: { choices: ['male', 'female', 'not identified'] } } });
    assert.equal(child.type, 'select one');
    assert.deepEqual(child.children, [
      { name: 'male', label: 'male' },
      { name: 'female', label: 'female' },
      { name: 'not identified', label: 'not identified' },
    ]);
  });

  test('multiple_choice_one and multiple_choice_many, the specification’s older spellings, map like select_one and select_many', () => {
    const children = formChildren(
      converted(
        floipPackage({
          a: { type: 'multiple_choice_one', label: 'A', type_options: { choices: ['x', 'y'] } },
          b: { type: 'multiple_choice_many', label: 'B', type_options: { choices: ['x', 'y'] } },
        }),
      ),
    );
    assert.deepEqual(children.map((c) => c.type), ['select one', 'select all that apply']);
  });

  test('select_many becomes select all that apply; spaces in choice names become underscores, labels keep them', () => {
    const child = onlyChild({ flavours: { type: 'select_many', label: 'Favourite flavours?', type_options: { choices: ['chocolate chip', 'vanilla', 3] } } });
    assert.equal(child.type, 'select all that apply');
    assert.deepEqual(child.children, [
      { name: 'chocolate_chip', label: 'chocolate chip' },
      { name: 'vanilla', label: 'vanilla' },
      { name: '3', label: '3' },
    ]);
  });

  test('numeric becomes decimal, with a range as a constraint', () => {
    const child = onlyChild({ weight: { type: 'numeric', label: 'Weight in lbs?', type_options: { range: [1, 350] } } });
    assert.equal(child.type, 'decimal');
    assert.equal(child.bind?.constraint, '. >= 1 and . <= 350');
  });

  test('numeric with format "integer" becomes integer; tiny and huge range ends are written without exponents', () => {
    const child = onlyChild({ people: { type: 'numeric', label: 'People?', type_options: { format: 'integer', range: [1e-7, 1e21] } } });
    assert.equal(child.type, 'integer');
    assert.equal(child.bind?.constraint, '. >= 0.0000001 and . <= 1000000000000000000000');
  });

  test('numeric without type_options has no constraint', () => {
    const child = onlyChild({ n: { type: 'numeric', label: 'N?' } });
    assert.equal(child.type, 'decimal');
    assert.equal(child.bind, undefined);
  });
});

describe('floipToXlsForm: the package', () => {
  test('the package name is the form id and file name, the title its title; questions keep document order', () => {
    const result = converted(
      floipPackage({
        zeta: { type: 'text', label: 'Z' },
        alpha: { type: 'text', label: 'A' },
      }),
    );
    assert.equal(result.idString, 'demo-package');
    assert.equal(result.fileName, 'demo-package.csv');
    assert.equal(result.title, 'Demo package');
    const form = convert(result.csv, { fileName: result.fileName });
    assert.ok(form.ok);
    assert.equal(form.idString, 'demo-package');
    assert.equal(form.title, 'Demo package');
    assert.deepEqual(formChildren(result).map((c) => c.name), ['zeta', 'alpha']);
  });

  test('a name with dots (allowed by the specification) becomes a slug; a missing title falls back to the name', () => {
    const result = converted(floipPackage({ q: { type: 'text', label: 'Q' } }, { name: 'flow.results demo', title: undefined }));
    assert.equal(result.idString, 'flow_results_demo');
    assert.equal(result.title, 'flow.results demo');
  });

  test("onadata's own export profile, data-package, is accepted", () => {
    assert.equal(converted(floipPackage({ q: { type: 'text', label: 'Q' } }, { profile: 'data-package' })).ok, true);
  });

  test('questions given as a list of one-entry objects (as onadata accepts) are read in order', () => {
    const result = converted(floipPackage([{ b: { type: 'text', label: 'B' } }, { a: { type: 'date', label: 'A' } }]));
    assert.deepEqual(formChildren(result).map((c) => [c.name, c.type]), [['b', 'text'], ['a', 'date']]);
  });

  test('labels with commas, quotes and line breaks survive the CSV layout', () => {
    const label = 'Hello, "you"\nsecond line';
    const child = onlyChild({ q: { type: 'text', label } });
    assert.equal(child.label, label);
  });

  test('bytes are read as UTF-8 and a byte-order mark is ignored', () => {
    const bytes = new TextEncoder().encode(`\uFEFF${JSON.stringify(floipPackage({ q: { type: 'text', label: 'Café?' } }))}`);
    const result = floipToXlsForm(bytes);
    assert.ok(result.ok);
    assert.equal(formChildren(result)[0]?.label, 'Café?');
  });
});

describe('floipToXlsForm: question names', () => {
  test('valid FLOIP ids are kept as they are', () => {
    for (const id of ['ae54d1', '_x', 'Q.1-a', 'école']) assert.equal(questionName(id), id);
  });

  test('ids that are not XML names are cleaned: a leading digit, hyphen or dot gets an underscore; other characters become underscores', () => {
    assert.equal(questionName('6085f5f2-80a2-423a-9f66-be3b3d777eea'), '_6085f5f2-80a2-423a-9f66-be3b3d777eea');
    assert.equal(questionName('how old?'), 'how_old_');
    assert.equal(questionName('ns:q'), 'ns_q');
    assert.equal(questionName('-x'), '_-x');
    assert.equal(questionName(''), '_');
  });

  test('cleaned names that collide, the reserved name meta, and names differing only by case get numeric suffixes', () => {
    const result = converted(
      floipPackage({
        'a b': { type: 'text', label: 'one' },
        'a?b': { type: 'text', label: 'two' },
        meta: { type: 'text', label: 'three' },
        Q: { type: 'text', label: 'four' },
        q: { type: 'text', label: 'five' },
      }),
    );
    assert.deepEqual(formChildren(result).map((c) => c.name), ['a_b', 'a_b_1', 'meta_1', 'Q', 'q_1']);
  });

  test('a select question with a cleaned name uses that name for its choice list', () => {
    const child = onlyChild({ '1st choice': { type: 'select_one', label: 'Pick', type_options: { choices: ['a', 'b'] } } });
    assert.equal(child.name, '_1st_choice');
    assert.equal(child.type, 'select one');
    assert.deepEqual(child.children?.map((c) => c.name), ['a', 'b']);
  });
});

describe('floipToXlsForm: errors name what is wrong', () => {
  test('malformed JSON', () => {
    assert.match(problem('{"profile": "flow-results-package",'), /^The FLOIP package is not valid JSON: /);
  });

  test('bytes that are not UTF-8', () => {
    const result = floipToXlsForm(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]));
    assert.deepEqual(result, { ok: false, message: 'The FLOIP package is not UTF-8 text.' });
  });

  test('JSON that is not an object', () => {
    assert.equal(problem([1, 2]), 'The FLOIP package must be a JSON object (a Flow Results data package descriptor).');
  });

  test('a package that is not a flow-results package', () => {
    assert.equal(
      problem(floipPackage({ q: { type: 'text', label: 'Q' } }, { profile: 'tabular-data-package' })),
      `This is not a Flow Results package: its 'profile' is "tabular-data-package", expected "flow-results-package".`,
    );
    assert.match(problem(floipPackage({ q: { type: 'text', label: 'Q' } }, { profile: undefined })), /'profile' is missing/);
  });

  test('a missing or blank name, and a title that is not a string', () => {
    assert.equal(problem(floipPackage({ q: { type: 'text', label: 'Q' } }, { name: undefined })), "The FLOIP package has no 'name': it becomes the form's id.");
    assert.equal(problem(floipPackage({ q: { type: 'text', label: 'Q' } }, { name: '  ' })), "The FLOIP package has no 'name': it becomes the form's id.");
    assert.equal(problem(floipPackage({ q: { type: 'text', label: 'Q' } }, { title: 7 })), "The FLOIP package's 'title' must be a string.");
  });

  test('missing or empty resources, a resource without a schema, a schema without questions, no questions at all', () => {
    const base = floipPackage({});
    assert.equal(problem({ ...base, resources: undefined }), "The FLOIP package has no 'resources': at least one data resource is required.");
    assert.equal(problem({ ...base, resources: [] }), "The FLOIP package has no 'resources': at least one data resource is required.");
    assert.equal(problem({ ...base, resources: [{ path: 'data.json' }] }), "The FLOIP package's first resource has no 'schema' object.");
    assert.equal(problem({ ...base, resources: [{ schema: { fields: [] } }] }), "The FLOIP package's resource schema has no 'questions'.");
    assert.equal(problem(base), "The FLOIP package's resource schema lists no questions.");
    assert.equal(problem(floipPackage([])), "The FLOIP package's resource schema lists no questions.");
  });

  test('questions that are neither an object nor a list, and list entries that are not objects', () => {
    assert.equal(problem(floipPackage('q1' as unknown as Questions)), "The resource schema's 'questions' must be an object mapping question ids to questions.");
    assert.equal(problem(floipPackage(['q1'])), 'Each entry of the questions list must be an object mapping a question id to its question.');
  });

  test('a question that is not an object, has no type, or has an unsupported type', () => {
    assert.equal(problem(floipPackage({ q1: 'text' })), 'Question "q1" must be an object with type, label and type_options.');
    assert.equal(problem(floipPackage({ q1: { label: 'Q' } })), 'Question "q1" has no type.');
    assert.equal(
      problem(floipPackage({ ok: { type: 'text', label: 'fine' }, q2: { type: 'signature', label: 'Sign here' } })),
      'Question "q2" has the unsupported type "signature". Supported types: select_one, select_many, numeric, text, open, image, video, audio, geo_point, datetime, date, time.',
    );
  });

  test('a question without a label, or with type_options that is not an object', () => {
    assert.equal(problem(floipPackage({ q1: { type: 'text' } })), 'Question "q1" has no label: every question needs a non-empty label.');
    assert.equal(problem(floipPackage({ q1: { type: 'text', label: '  ' } })), 'Question "q1" has no label: every question needs a non-empty label.');
    assert.equal(problem(floipPackage({ q1: { type: 'text', label: 'Q', type_options: ['x'] } })), 'Question "q1" has type_options that is not an object.');
  });

  test('select questions without choices, with a non-string or empty choice, or with duplicate choices', () => {
    assert.equal(
      problem(floipPackage({ q1: { type: 'select_one', label: 'Q', type_options: {} } })),
      'Question "q1" (select_one) needs type_options.choices: a non-empty list of strings.',
    );
    assert.equal(
      problem(floipPackage({ q1: { type: 'select_many', label: 'Q', type_options: { choices: [] } } })),
      'Question "q1" (select_many) needs type_options.choices: a non-empty list of strings.',
    );
    assert.equal(
      problem(floipPackage({ q1: { type: 'select_one', label: 'Q', type_options: { choices: ['a', { name: 'b' }] } } })),
      'Question "q1" has a choice that is not a string: {"name":"b"}.',
    );
    assert.equal(problem(floipPackage({ q1: { type: 'select_one', label: 'Q', type_options: { choices: ['a', ' '] } } })), 'Question "q1" has an empty choice.');
    assert.equal(
      problem(floipPackage({ q1: { type: 'select_one', label: 'Q', type_options: { choices: ['a', 'b', 'a'] } } })),
      'Question "q1" lists the choice "a" more than once.',
    );
    assert.equal(
      problem(floipPackage({ q1: { type: 'select_many', label: 'Q', type_options: { choices: ['a b', 'a_b'] } } })),
      'Question "q1" has the choices "a b" and "a_b", which are the same once spaces become underscores.',
    );
  });

  test('numeric questions with a malformed range or format', () => {
    const numeric = (type_options: Record<string, unknown>) => floipPackage({ w: { type: 'numeric', label: 'W', type_options } });
    assert.equal(problem(numeric({ range: [1] })), 'Question "w" (numeric) has type_options.range [1]: expected [minimum, maximum], two numbers.');
    assert.equal(problem(numeric({ range: ['1', 2] })), 'Question "w" (numeric) has type_options.range ["1",2]: expected [minimum, maximum], two numbers.');
    assert.equal(problem(numeric({ range: 5 })), 'Question "w" (numeric) has type_options.range 5: expected [minimum, maximum], two numbers.');
    assert.equal(problem(numeric({ range: [10, 1] })), 'Question "w" (numeric) has type_options.range [10, 1]: the minimum is above the maximum.');
    assert.equal(problem(numeric({ format: 'float' })), 'Question "w" (numeric) has type_options.format "float": expected "integer" or "decimal".');
  });
});
