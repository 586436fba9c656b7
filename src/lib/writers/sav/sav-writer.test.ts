// Every .sav written here is read back by GNU PSPP and compared exactly.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createSavWriter, savCaseCountPatch, savChunks } from './sav-writer.ts';
import { psppUnavailableReason, readWithPspp, type PsppReport } from './testing/pspp.ts';
import type { SavRow, SavVariable, SavWriterOptions } from './types.ts';

const unavailable = psppUnavailableReason();
// CI installs PSPP, so there its absence is a failure; on a workstation the checks are skipped.
const skip = unavailable !== undefined && !process.env.CI ? unavailable : false;
if (unavailable !== undefined && process.env.CI) {
  test('GNU PSPP is installed for the .sav checks', () => assert.fail(`${unavailable}; CI must install it`));
}
const psppTest = (name: string, fn: () => void | Promise<void>): void => {
  test(name, { skip }, fn);
};

const NOW = new Date('2024-03-05T06:07:08Z');

function writeSav(variables: SavVariable[], rows: ReadonlyArray<SavRow>, options: SavWriterOptions = {}): Uint8Array[] {
  const writer = createSavWriter(variables, { now: NOW, ...options });
  return [writer.header(), ...rows.map((row) => writer.row(row)), writer.end()];
}

function roundTrip(variables: SavVariable[], rows: ReadonlyArray<SavRow>, options: SavWriterOptions = {}): PsppReport {
  return readWithPspp(writeSav(variables, rows, options));
}

/** A string whose every position is recognisable, so a misplaced segment shows. */
function patterned(bytes: number): string {
  return Array.from({ length: bytes }, (_, i) => String.fromCharCode(65 + (Math.floor(i / 10) % 26))).join('');
}

psppTest('the dictionary carries names, labels, types, widths, formats and measures', () => {
  const report = roundTrip(
    [
      { name: 'age', label: 'Age in years', type: 'numeric', decimals: 0, measure: 'scale' },
      { name: 'weight', type: 'numeric' },
      { name: 'rating', label: 'Rating', type: 'numeric', measure: 'ordinal', decimals: 1 },
      { name: 'code', type: 'string', width: 3 },
      { name: 'comment', label: 'Comment', type: 'string', width: 100 },
      { name: 'essay', type: 'string', width: 300 },
      { name: 'default_width', type: 'string' },
      { name: 'zero_width', type: 'string', width: 0 },
      { name: 'visit', type: 'numeric', format: 'DATE' },
      { name: 'start', type: 'numeric', format: 'DATETIME' },
      { name: 'precise', type: 'numeric', format: 'DATETIME', decimals: 3 },
      { name: 'clock', type: 'numeric', format: 'TIME' },
      { name: 'wordy', label: 'é'.repeat(200), type: 'numeric' },
    ],
    [],
    { fileLabel: 'Household survey' },
  );
  assert.equal(report.info.get('Label'), 'Household survey');
  assert.equal(report.info.get('Created'), '05 Mar 24 06:07:08 by Gather');
  assert.equal(report.info.get('Encoding'), 'UTF-8');
  assert.equal(report.info.get('Compression'), 'SAV');
  assert.equal(report.info.get('Variables'), '13');
  const table = report.variables.map((v) => [v.name, v.position, v.label, v.measure, v.width, v.alignment, v.printFormat, v.writeFormat]);
  assert.deepEqual(table, [
    ['age', '1', 'Age in years', 'Scale', '8', 'Right', 'F8.0', 'F8.0'],
    ['weight', '2', '', 'Scale', '8', 'Right', 'F8.2', 'F8.2'],
    ['rating', '3', 'Rating', 'Ordinal', '8', 'Right', 'F8.1', 'F8.1'],
    ['code', '4', '', 'Nominal', '3', 'Left', 'A3', 'A3'],
    ['comment', '5', 'Comment', 'Nominal', '40', 'Left', 'A100', 'A100'],
    ['essay', '6', '', 'Nominal', '40', 'Left', 'A300', 'A300'],
    ['default_width', '7', '', 'Nominal', '40', 'Left', 'A255', 'A255'],
    ['zero_width', '8', '', 'Nominal', '40', 'Left', 'A255', 'A255'],
    ['visit', '9', '', 'Scale', '11', 'Right', 'DATE11', 'DATE11'],
    ['start', '10', '', 'Scale', '20', 'Right', 'DATETIME20.0', 'DATETIME20.0'],
    ['precise', '11', '', 'Scale', '24', 'Right', 'DATETIME24.3', 'DATETIME24.3'],
    ['clock', '12', '', 'Scale', '8', 'Right', 'TIME8.0', 'TIME8.0'],
    ['wordy', '13', 'é'.repeat(127), 'Scale', '8', 'Right', 'F8.2', 'F8.2'],
  ]);
  assert.deepEqual(report.data, [report.variables.map((v) => v.name)]);
});

psppTest('numbers survive exactly and null or undefined become system-missing, never 0', () => {
  const values = [0, 1, -1, 0.1, 1 / 3, 151, 152, -99, -100, 2.5, -1.5, 123456789.12345679, 2 ** 53, 1e300, 5e-324, -0];
  const rows: SavRow[] = [...values.map((v) => [v, v]), [null, null], [undefined, undefined], [Number.NaN, Infinity], ['42', ' 7.5 '], ['', 'abc']];
  for (const compression of [true, false]) {
    const report = roundTrip([{ name: 'a', type: 'numeric' }, { name: 'b', type: 'numeric' }], rows, { compression });
    assert.deepEqual(report.data, [
      ['a', 'b'],
      ...values.map((v) => [Object.is(v, -0) ? '-0' : String(v), Object.is(v, -0) ? '-0' : String(v)]),
      [' ', ' '],
      [' ', ' '],
      [' ', ' '],
      ['42', '7.5'],
      [' ', ' '],
    ], `compression ${String(compression)}`);
  }
});

psppTest('strings of 8, 255, 300 and 5000 bytes survive exactly, null and undefined as blanks', () => {
  const variables: SavVariable[] = [
    { name: 's8', type: 'string', width: 8 },
    { name: 's255', type: 'string', width: 255 },
    { name: 's300', type: 'string', width: 300 },
    { name: 's5000', type: 'string', width: 5000 },
    { name: 'after', type: 'numeric' },
  ];
  const full = [patterned(8), patterned(255), patterned(300), patterned(5000), 7];
  const short = ['a', 'b', 'c', 'd', 8];
  for (const compression of [true, false]) {
    const report = roundTrip(variables, [full, short, [null, undefined, null, undefined, null], [' lead', 'x y', `${'q'.repeat(299)}z`, `${' '.repeat(4000)}tail`, 9]], { compression });
    assert.deepEqual(report.data, [
      ['s8', 's255', 's300', 's5000', 'after'],
      full.map(String),
      short.map(String),
      ['', '', '', '', ' '],
      [' lead', 'x y', `${'q'.repeat(299)}z`, `${' '.repeat(4000)}tail`, '9'],
    ], `compression ${String(compression)}`);
    assert.deepEqual(report.variables.map((v) => v.printFormat), ['A8', 'A255', 'A300', 'A5000', 'F8.2']);
  }
});

psppTest('the widest string, 32767 bytes, survives with its value labels', () => {
  const widest = patterned(32_767);
  const report = roundTrip(
    [{ name: 'widest', type: 'string', width: 32_767, valueLabels: [{ value: 'empty', label: 'Nothing here' }] }, { name: 'n', type: 'numeric', decimals: 0 }],
    [[widest, 1], ['empty', 2], [`${widest}overflow`, 3]],
  );
  assert.deepEqual(report.variables.map((v) => v.printFormat), ['A32767', 'F8.0']);
  assert.deepEqual(report.valueLabels.get('widest'), [['empty', 'Nothing here']]);
  assert.deepEqual(report.data.slice(1), [[widest, '1'], ['empty', '2'], [widest, '3']]);
});

psppTest('strings longer than their width are cut at a UTF-8 character boundary', () => {
  const report = roundTrip(
    [{ name: 'tiny', type: 'string', width: 5 }, { name: 'wide', type: 'string', width: 300 }, { name: 'huge', type: 'string', width: 600 }],
    [['abcdé', `${'a'.repeat(299)}é`, `${'x'.repeat(598)}😀`], ['日本語', 'too long'.repeat(50), `${'x'.repeat(597)}😀`]],
  );
  assert.deepEqual(report.data.slice(1), [
    ['abcd', 'a'.repeat(299), 'x'.repeat(598)],
    ['日', 'too long'.repeat(50).slice(0, 300).trimEnd(), `${'x'.repeat(597)}`],
  ]);
});

psppTest('accents, emoji and CJK survive in values, labels, names and the file label', () => {
  const report = roundTrip(
    [
      { name: 'prénom', label: 'Prénom 名前 😀', type: 'string', width: 40 },
      { name: '年龄', label: 'Âge', type: 'numeric', decimals: 0, valueLabels: [{ value: 1, label: 'un 一 🙂' }] },
      { name: 'mood😀', type: 'string', width: 12, valueLabels: [{ value: 'ok', label: 'très bien 很好 👍' }] },
    ],
    [['Zoë 张伟 🎉', 1, 'ok'], ['Ñandú', 2, '日本語']],
    { fileLabel: 'Enquête 调查 📋' },
  );
  assert.equal(report.info.get('Label'), 'Enquête 调查 📋');
  assert.deepEqual(report.variables.map((v) => [v.name, v.label]), [['prénom', 'Prénom 名前 😀'], ['年龄', 'Âge'], ['mood_', 'mood😀']]);
  assert.deepEqual(report.data, [['prénom', '年龄', 'mood_'], ['Zoë 张伟 🎉', '1', 'ok'], ['Ñandú', '2', '日本語']]);
  assert.deepEqual([...report.valueLabels], [['年龄', [['1', 'un 一 🙂']]], ['mood_', [['ok', 'très bien 很好 👍']]]]);
});

psppTest('value labels reach numeric, short, long and very long string variables', () => {
  const report = roundTrip(
    [
      { name: 'yesno', type: 'numeric', decimals: 0, valueLabels: [{ value: 1, label: 'Yes' }, { value: 0, label: 'No' }, { value: '9', label: 'Don\'t know' }, { value: 'x', label: 'dropped: not a number' }] },
      { name: 'ratio', type: 'numeric', valueLabels: [{ value: 0.5, label: 'half' }, { value: 1, label: 'one' }, { value: 1, label: 'duplicate is dropped' }] },
      { name: 'short', type: 'string', width: 4, valueLabels: [{ value: 'a', label: 'Letter a' }, { value: 'abcd', label: 'Four' }] },
      { name: 'select', type: 'string', width: 50, valueLabels: [{ value: 'option_one', label: 'Option one' }, { value: 'option_two', label: 'L'.repeat(200) }] },
      { name: 'essay', type: 'string', width: 1000, valueLabels: [{ value: 'none', label: 'Nothing to say' }] },
    ],
    [[1, 0.5, 'a', 'option_two', 'none']],
  );
  assert.deepEqual([...report.valueLabels], [
    ['yesno', [['0', 'No'], ['1', 'Yes'], ['9', 'Don\'t know']]],
    ['ratio', [['.50', 'half'], ['1.00', 'one']]],
    ['short', [['a', 'Letter a'], ['abcd', 'Four']]],
    ['select', [['option_one', 'Option one'], ['option_two', 'L'.repeat(120)]]],
    ['essay', [['none', 'Nothing to say']]],
  ]);
  assert.deepEqual(report.variables.map((v) => v.measure), ['Nominal', 'Nominal', 'Nominal', 'Nominal', 'Nominal']);
});

psppTest('ISO dates, date-times and times become SPSS dates', () => {
  const report = roundTrip(
    [
      { name: 'd', type: 'numeric', format: 'DATE' },
      { name: 'dt', type: 'numeric', format: 'DATETIME' },
      { name: 't', type: 'numeric', format: 'TIME' },
    ],
    [
      ['2024-02-29', '2024-02-29T13:14:15.000+03:00', '13:14:15.000+03:00'],
      ['1582-10-14', '1970-01-01T00:00:00Z', '00:00'],
      ['2023-12-31T23:59:59', '1999-12-31 23:59:59', '23:59:59'],
      ['not a date', '', null],
    ],
  );
  assert.deepEqual(report.data, [
    ['d', 'dt', 't'],
    ['02/29/2024', '02/29/2024 13:14:15', '13:14:15'],
    ['10/14/1582', '01/01/1970 00:00:00', '00:00:00'],
    ['12/31/2023', '12/31/1999 23:59:59', '23:59:59'],
    [' ', ' ', ' '],
  ]);
});

psppTest('names that need mangling come out valid, unique and labelled with the original', () => {
  const long = `q_${'x'.repeat(70)}`;
  const originals = ['group/question', 'group/question.', 'and', 'NOT', 'with', '1st_visit', '_id', long, `${long}_2`, 'Group/Question', 'a b', 'q-1:x', 'name', 'NAME', '问题'.repeat(20), 'x/y/z.'];
  const variables = originals.map((name): SavVariable => ({ name, type: 'numeric', decimals: 0 }));
  const writer = createSavWriter(variables);
  const expected = [
    'group.question', 'group.question_', 'and_', 'NOT_', 'with_', '@1st_visit', '@_id', `q_${'x'.repeat(62)}`, `q_${'x'.repeat(60)}@1`,
    'Group.Question@1', 'a_b', 'q_1_x', 'name', 'NAME@1', '问题'.repeat(10) + '问', 'x.y.z_',
  ];
  assert.deepEqual(writer.variableNames(), expected);
  const report = roundTrip(variables, [originals.map((_, i) => i)]);
  assert.deepEqual(report.variables.map((v) => v.name), expected);
  assert.deepEqual(report.variables.map((v) => v.label), originals.map((o, i) => (o === expected[i] ? '' : o)));
  assert.deepEqual(report.data, [expected, originals.map((_, i) => String(i))]);
});

psppTest('a seekable output can patch the row count into the header afterwards', () => {
  const chunks = writeSav([{ name: 'a', type: 'numeric' }], [[1], [2], [3]]);
  const file = Buffer.concat(chunks);
  const patch = savCaseCountPatch(3);
  assert.equal(file.readInt32LE(patch.offset), -1);
  file.set(patch.bytes, patch.offset);
  const report = readWithPspp([file]);
  assert.equal(report.info.get('Cases'), '3');
  assert.deepEqual(report.data, [['a'], ['1'], ['2'], ['3']]);
});

psppTest('a file with no rows has its dictionary and no cases', () => {
  for (const compression of [true, false]) {
    const report = roundTrip([{ name: 'a', type: 'numeric' }, { name: 'b', type: 'string', width: 400 }], [], { compression, rowCount: 0 });
    assert.equal(report.info.get('Cases'), '0');
    assert.deepEqual(report.data, [['a', 'b']]);
  }
});

psppTest('more than 1000 variables of both types, with similar long names', () => {
  const variables: SavVariable[] = Array.from({ length: 1500 }, (_, i) => ({
    name: `section_${Math.floor(i / 100)}/question_number_${i}`,
    type: i % 3 === 0 ? 'string' : 'numeric',
    width: i % 3 === 0 ? 10 + (i % 400) : 0,
  }));
  const rows = Array.from({ length: 3 }, (_, r) => variables.map((v, i) => (v.type === 'string' ? `r${r}v${i}` : r * 10000 + i)));
  const report = roundTrip(variables, rows);
  assert.equal(report.info.get('Variables'), '1500');
  assert.deepEqual(report.variables.map((v) => v.name), variables.map((v) => v.name.replace('/', '.')));
  assert.deepEqual(report.data.slice(1), rows.map((row) => row.map(String)));
});

psppTest('100,000 rows stream through compressed and uncompressed writers alike', async () => {
  const variables: SavVariable[] = [
    { name: 'id', type: 'numeric', decimals: 0 },
    { name: 'score', type: 'numeric' },
    { name: 'name', type: 'string', width: 20 },
    { name: 'notes', type: 'string', width: 400 },
    { name: 'when', type: 'numeric', format: 'DATE' },
  ];
  const count = 100_000;
  function* rows(): Generator<SavRow> {
    for (let i = 0; i < count; i += 1) {
      yield [i, i % 7 === 0 ? null : i / 4, `name ${i}`, i % 1000 === 0 ? patterned(400) : i % 2 === 0 ? '' : `n${i}`, '2020-01-01'];
    }
  }
  for (const compression of [true, false]) {
    const chunks: Uint8Array[] = [];
    for await (const chunk of savChunks(variables, rows(), { compression, now: NOW, rowCount: count })) chunks.push(chunk);
    const report = readWithPspp(chunks);
    assert.equal(report.info.get('Cases'), String(count));
    assert.equal(report.data.length, count + 1);
    const expected = [...rows()];
    for (const i of [0, 1, 7, 999, 1000, 54_321, count - 1]) {
      const [id, score, name, notes] = expected[i] ?? [];
      assert.deepEqual(report.data[i + 1], [String(id), score === null ? ' ' : String(score), String(name), String(notes), '01/01/2020'], `row ${i}`);
    }
  }
});

test('a file without variables is refused up front: no reader could open it', () => {
  assert.throws(() => createSavWriter([]), /at least one variable/);
});

test('end() refuses a row count that differs from the one promised', () => {
  const writer = createSavWriter([{ name: 'a', type: 'numeric' }], { rowCount: 2 });
  writer.header();
  writer.row([1]);
  assert.throws(() => writer.end(), /promised 2 rows but 1 were written/);
});

test('savChunks yields the same bytes as the writer, in bounded chunks', async () => {
  const variables: SavVariable[] = [{ name: 'n', type: 'numeric' }, { name: 's', type: 'string', width: 300 }];
  const rows: SavRow[] = Array.from({ length: 5000 }, (_, i) => [i * 1.5, `row ${i}`]);
  const chunks: Uint8Array[] = [];
  for await (const chunk of savChunks(variables, rows, { now: NOW, chunkBytes: 4096 })) chunks.push(chunk);
  assert.deepEqual(Buffer.concat(chunks), Buffer.concat(writeSav(variables, rows)));
  assert.ok(chunks.every((chunk) => chunk.length < 4096 + 400));
});

test('compression stores small integers in the command bytes and blanks without data', () => {
  const writer = createSavWriter([{ name: 'a', type: 'numeric' }, { name: 'b', type: 'numeric' }, { name: 's', type: 'string', width: 16 }, { name: 'c', type: 'numeric' }], { now: NOW });
  writer.header();
  assert.equal(writer.row([1, -99, null, null]).length, 0, 'the first block is not complete yet');
  const block = writer.row([151, 0.5, 'abcdefgh', 152]);
  assert.deepEqual([...block.subarray(0, 8)], [101, 1, 254, 254, 255, 251, 253, 253]);
  assert.equal(block.length, 24);
  assert.deepEqual([...writer.end()], [254, 253, 0, 0, 0, 0, 0, 0, ...new Uint8Array(new Float64Array([152]).buffer)]);
});
