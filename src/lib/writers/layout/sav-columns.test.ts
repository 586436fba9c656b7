import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildFormModel } from '../../form-model/model.ts';
import { allNumeric, savSection } from './sav-columns.ts';
import { planSections } from './sections.ts';
import { DEFAULT_LAYOUT_OPTIONS } from './types.ts';

describe('SPSS columns', () => {
  test('a select_multiple with choices 1 and 2: its own string column, then numeric choice columns (black-box test 33)', () => {
    const form = buildFormModel({
      name: 'data', id_string: 'food', children: [
        { type: 'select all that apply', name: 'food_available', label: 'Food?', children: [{ name: '1', label: 'Yes' }, { name: '2', label: 'No' }] },
      ],
    });
    const options = { ...DEFAULT_LAYOUT_OPTIONS, removeGroupName: true };
    const layout = planSections(form, options, { baseUrl: 'http://x' }, { parentNames: 'path', cellText: 'as-answered' });
    const main = layout.sections[0];
    assert.ok(main);
    const sav = savSection(main, form, options);
    assert.deepEqual(sav.variables.slice(0, 3).map((v) => [v.name, v.type]), [['food_available', 'string'], ['food_available/1', 'numeric'], ['food_available/2', 'numeric']]);
    assert.deepEqual(sav.variables[0]?.valueLabels, [{ value: '1', label: 'Yes' }, { value: '2', label: 'No' }]);
    const [cells] = layout.rowBuilder(main).rows({ food_available: '1', _id: 5, _submission_time: '2013-02-18T15:54:01+00:00' });
    assert.deepEqual(sav.row(cells ?? []).slice(0, 3), ['1', 1, 0]);
    const byName = new Map(sav.variables.map((v, i) => [v.name, i]));
    assert.equal(sav.row(cells ?? [])[byName.get('_submission_time') ?? -1], '2013-02-18T15:54:01');
    assert.equal(sav.variables[byName.get('_submission_time') ?? -1]?.format, 'DATETIME');
  });

  test('is_all_numeric: zero-padded names are text', () => {
    assert.equal(allNumeric(['1', '2', '10']), true);
    assert.equal(allNumeric(['1', '09']), false);
    assert.equal(allNumeric(['0.5', '1']), true);
    assert.equal(allNumeric(['yes']), false);
  });
});
