// Per-type amendments of a survey row: parameters turned into bind/control
// attributes, with their validation.
import { XlsFormError, rowPrefix } from '../errors.ts';
import { QUESTION_TYPES } from '../spec/question-types.ts';
import { yesNo } from '../spec/aliases.ts';
import type { JsonObject } from '../types.ts';
import type { ChoiceLists } from './choices.ts';
import { child, copyObject, text } from './json-helpers.ts';
import { PARAMETER_KEYS, checkParameters, type Parameters } from './parameters.ts';

function paramError(row: number, detail: string, code = 'invalid_parameters'): XlsFormError {
  return new XlsFormError(`${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. ${detail}`, {
    code,
    sheet: 'survey',
    row,
    column: 'parameters',
  });
}

const isInteger = (v: string): boolean => /^\s*[+-]?\d+\s*$/.test(v);
const isNumber = (v: string): boolean => v.trim() !== '' && Number.isFinite(Number(v));

export function auditRow(source: JsonObject, params: Parameters, row: number): JsonObject {
  const name = text(source['name']);
  if (name !== undefined && name !== '' && name !== 'audit') {
    throw new XlsFormError(`${rowPrefix(row)} Audits must always be named 'audit.' The name column should be left blank.`, {
      code: 'audit_name',
      sheet: 'survey',
      row,
      column: 'name',
    });
  }
  source['name'] = 'audit';
  const out = copyObject(source);
  checkParameters(params, PARAMETER_KEYS.audit, row);
  const bind = (): JsonObject => child(out, 'bind');
  for (const key of ['track-changes', 'identify-user'] as const) {
    const value = params[key];
    if (value === undefined) continue;
    if (value !== 'true' && value !== 'false') {
      throw paramError(row, `${key} must be set to true or false: '${value}' is an invalid value.`);
    }
    bind()[`odk:${key}`] = value;
  }
  const reasons = params['track-changes-reasons'];
  if (reasons !== undefined) {
    if (reasons !== 'on-form-edit') throw paramError(row, 'track-changes-reasons must be set to on-form-edit');
    bind()['odk:track-changes-reasons'] = 'on-form-edit';
  }
  const priority = params['location-priority'];
  const minInterval = params['location-min-interval'];
  const maxAge = params['location-max-age'];
  if (priority !== undefined || minInterval !== undefined || maxAge !== undefined) {
    if (priority === undefined || minInterval === undefined || maxAge === undefined) {
      throw paramError(
        row,
        "To include location information in the audit, 'location-priority', 'location-min-interval', and 'location-max-age' are required parameters.",
      );
    }
    if (!['no-power', 'low-power', 'balanced', 'high-accuracy'].includes(priority)) {
      throw paramError(row, `Parameter location-priority must be set to no-power, low-power, balanced, or high-accuracy:'${priority}' is an invalid value`);
    }
    for (const [key, value] of [['location-min-interval', minInterval], ['location-max-age', maxAge]] as const) {
      if (!isInteger(value)) throw paramError(row, `Parameter ${key} must have an integer value.`);
      if (Number(value) < 0) throw paramError(row, `Parameter ${key} must be greater than or equal to zero.`);
    }
    if (Number(maxAge) < Number(minInterval)) {
      throw paramError(row, 'Parameter location-max-age must be greater than or equal to location-min-interval.');
    }
    Object.assign(bind(), {
      'odk:location-max-age': maxAge,
      'odk:location-min-interval': minInterval,
      'odk:location-priority': priority,
    });
  }
  return out;
}

export function textRow(source: JsonObject, params: Parameters, row: number): JsonObject {
  const out = copyObject(source);
  checkParameters(params, PARAMETER_KEYS.text, row);
  const rows = params['rows'];
  if (rows !== undefined) {
    if (!isInteger(rows)) {
      throw new XlsFormError(`${rowPrefix(row)} Parameter rows must have an integer value.`, {
        code: 'invalid_parameters',
        sheet: 'survey',
        row,
        column: 'parameters',
      });
    }
    child(out, 'control')['rows'] = rows;
  }
  return out;
}

/** Why an Android package name (for the image `app` parameter) is invalid, or undefined. */
function androidPackageProblem(name: string): string | undefined {
  if (name.trim() === '') return 'package name is missing.';
  if (!name.includes('.')) return "the package name must have at least one '.' separator.";
  if (name.endsWith('.')) return "the package name cannot end in a '.' separator.";
  const segments = name.split('.');
  if (segments.some((s) => s === '')) return 'package segments must be of non-zero length.';
  if (segments.some((s) => s.startsWith('_'))) return "the character '_' cannot be the first character in a package name segment.";
  if (segments.some((s) => /^[0-9]/.test(s))) return 'a digit cannot be the first character in a package name segment.';
  if (segments.some((s) => /[^a-zA-Z0-9._]/.test(s))) {
    return 'the package name can only include letters (a-z, A-Z), numbers (0-9), dots (.), and underscores (_).';
  }
  return undefined;
}

export function photoRow(source: JsonObject, params: Parameters, row: number, warnings: string[]): JsonObject {
  const out = copyObject(source);
  const fallback = text(source['default']);
  if (fallback) out['default'] = fallback.includes('jr://images/') ? fallback : `jr://images/${fallback}`;
  checkParameters(params, PARAMETER_KEYS.image, row);
  const maxPixels = params['max-pixels'];
  if (maxPixels !== undefined) {
    if (!isInteger(maxPixels)) throw paramError(row, 'Parameter max-pixels must have an integer value.');
    child(out, 'bind')['orx:max-pixels'] = maxPixels;
  } else {
    warnings.push(
      `${rowPrefix(row)} Use the max-pixels parameter to speed up submission sending and save storage space. Learn more: https://xlsform.org/#image`,
    );
  }
  const app = params['app'];
  const appearance = text((out['control'] as JsonObject | undefined)?.['appearance']);
  if (app !== undefined && (appearance === undefined || appearance === 'annotate')) {
    const problem = androidPackageProblem(app);
    if (problem) {
      throw new XlsFormError(`${rowPrefix(row)} Parameter 'app' has an invalid Android package name - ${problem}`, {
        code: 'invalid_parameters',
        sheet: 'survey',
        row,
        column: 'parameters',
      });
    }
    child(out, 'control')['intent'] = app;
  }
  return out;
}

const AUDIO_QUALITIES = ['voice-only', 'low', 'normal', 'external'];

export function audioRow(source: JsonObject, params: Parameters, row: number): JsonObject {
  const out = copyObject(source);
  checkParameters(params, PARAMETER_KEYS.audio, row);
  const quality = params['quality'];
  if (quality !== undefined) {
    if (!AUDIO_QUALITIES.includes(quality)) throw paramError(row, 'Invalid value for quality.');
    child(out, 'bind')['odk:quality'] = quality;
  }
  return out;
}

export function backgroundAudioRow(source: JsonObject, params: Parameters, row: number): JsonObject {
  const out = copyObject(source);
  checkParameters(params, PARAMETER_KEYS.audio, row);
  const action: JsonObject = { name: 'odk:recordaudio', event: 'odk-instance-load' };
  const quality = params['quality'];
  if (quality !== undefined) {
    if (!AUDIO_QUALITIES.slice(0, 3).includes(quality)) throw paramError(row, 'Invalid value for quality.');
    action['odk:quality'] = quality;
  }
  appendAction(out, action);
  return out;
}

export function appendAction(row: JsonObject, action: JsonObject): void {
  const actions = row['actions'];
  if (Array.isArray(actions)) actions.push(action);
  else row['actions'] = [action];
}

export function geoRow(source: JsonObject, params: Parameters, row: number, geoReferences: Array<[string, number]>): JsonObject {
  const out = source;
  const control = child(out, 'control');
  const type = text(out['type']);
  const accepted = type === 'geopoint' ? PARAMETER_KEYS.geopoint : PARAMETER_KEYS.geo;
  checkParameters(params, accepted, row);
  if (type === 'geopoint') {
    const capture = params['capture-accuracy'];
    if (capture !== undefined) {
      if (!isNumber(capture)) throw paramError(row, "The 'capture-accuracy' parameter must have a numeric value.");
      control['accuracyThreshold'] = capture;
    }
    const warning = params['warning-accuracy'];
    if (warning !== undefined) {
      if (!isNumber(warning)) throw paramError(row, "The 'warning-accuracy' parameter must have a numeric value.");
      control['unacceptableAccuracyThreshold'] = warning;
    }
  } else {
    const incremental = params['incremental'];
    if (incremental !== undefined) {
      if (yesNo(incremental) !== true) {
        throw paramError(row, "For geoshape and geotrace questions, the 'incremental' parameter may either be 'true' or not included.");
      }
      control['incremental'] = 'true';
    }
  }
  const mock = params['allow-mock-accuracy'];
  if (mock !== undefined) {
    if (mock !== 'true' && mock !== 'false') {
      throw paramError(row, "The 'allow-mock-accuracy' parameter must be either 'true' or 'false'.");
    }
    child(out, 'bind')['odk:allow-mock-accuracy'] = mock;
  }
  const reference = params['reference-geometry'];
  if (reference !== undefined) {
    geoReferences.push([reference, row]);
    out['itemset'] = reference;
  }
  return out;
}

function rangeNumber(params: Parameters, name: string, row: number): number | undefined {
  const value = params[name];
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) {
    throw paramError(row, `For the 'range' question type, the parameter '${name}' must be a number.`);
  }
  return n;
}

/** Remainder that tolerates binary fractions (0.3 % 0.1). */
function isMultiple(value: number, step: number): boolean {
  const ratio = value / step;
  return Math.abs(ratio - Math.round(ratio)) < 1e-9;
}

export function rangeRow(source: JsonObject, params: Parameters, row: number, appearance: string | undefined, choices: ChoiceLists): JsonObject {
  const out = source;
  checkParameters(params, PARAMETER_KEYS.range, row);
  if (
    appearance &&
    !appearance.includes('vertical') &&
    !appearance.includes('no-ticks') &&
    ['tick_interval', 'placeholder', 'tick_labelset'].some((k) => k in params)
  ) {
    throw paramError(
      row,
      "For the 'range' question type, the parameters 'tick_interval', 'placeholder', and 'tick_labelset' are only supported for the appearances 'vertical', 'no-ticks', 'vertical no-ticks', and the default (empty) horizontal.",
    );
  }
  for (const [key, value] of Object.entries(QUESTION_TYPES['range']?.parameters ?? {})) if (!(key in params)) params[key] = value;
  const start = rangeNumber(params, 'start', row) ?? 1;
  const end = rangeNumber(params, 'end', row) ?? 10;
  const step = rangeNumber(params, 'step', row) ?? 1;
  const tick = rangeNumber(params, 'tick_interval', row);
  const placeholder = rangeNumber(params, 'placeholder', row);
  const width = Math.abs(end - start);
  const zero = (name: string) => paramError(row, `For the 'range' question type, the parameter '${name}' must not be '0' (zero).`);
  const tooLarge = (name: string) =>
    paramError(row, `For the 'range' question type, the parameter '${name}' must not be larger than the range (the difference between 'start' and 'end').`);
  const notMultiple = (name: string) => paramError(row, `For the 'range' question type, the parameter '${name}' must be a multiple of 'step'.`);
  if (step === 0) throw zero('step');
  if (step > width) throw tooLarge('step');
  if (tick !== undefined) {
    if (tick === 0) throw zero('tick_interval');
    if (tick > width) throw tooLarge('tick_interval');
    if (!isMultiple(tick, step)) throw notMultiple('tick_interval');
    params['odk:tick-interval'] = params['tick_interval'] ?? '';
    delete params['tick_interval'];
  }
  if (placeholder !== undefined) {
    if (!isMultiple(placeholder - start, step)) throw notMultiple('placeholder');
    if (placeholder < Math.min(start, end) || placeholder > Math.max(start, end)) {
      throw paramError(row, "For the 'range' question type, the parameter 'placeholder' must be between the 'start' and 'end' values, inclusive).");
    }
    params['odk:placeholder'] = params['placeholder'] ?? '';
    delete params['placeholder'];
  }
  const labelset = params['tick_labelset'];
  if (labelset) {
    const ticks = choices.get(labelset);
    if (!ticks) {
      throw paramError(row, "For the 'range' question type, the parameter 'tick_labelset' must be a choice list name from the 'list_name' column on the choices sheet.");
    }
    const noTicks = appearance !== undefined && appearance.includes('no-ticks');
    const tickValues = new Set<number>();
    for (const item of ticks) {
      const raw = text(item['name']) ?? '';
      const value = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(value)) {
        throw paramError(row, "For the 'range' question type, the parameter '{tick_labelset}' choice values must all be numbers.");
      }
      if (value < Math.min(start, end) || value > Math.max(start, end)) {
        throw paramError(row, "For the 'range' question type, the parameter 'tick_labelset' choices must be between the 'start' and 'end' values, inclusive.");
      }
      const interval = tick ?? step;
      if (!isMultiple(value - start, interval)) {
        throw paramError(
          row,
          `For the 'range' question type, the parameter 'tick_labelset' choices' values must be equal to the start of the range plus a multiple of '${tick !== undefined ? 'tick_interval' : 'step'}'.`,
        );
      }
      if (noTicks) tickValues.add(value);
    }
    if (noTicks) {
      if (tickValues.size > 2) {
        throw paramError(row, "For the 'range' question type, the parameter 'tick_labelset' choice list must have only 2 items when the 'appearance' is 'no-ticks'.");
      }
      if (tickValues.size !== 2 || !tickValues.has(start) || !tickValues.has(end)) {
        throw paramError(
          row,
          "For the 'range' question type, the parameter 'tick_labelset' choice list values may onlymatch the range 'start' and 'end' values when the 'appearance' is 'no-ticks'.",
        );
      }
    }
    delete params['tick_labelset'];
  }
  if ([start, end, step, tick, placeholder].some((v) => v !== undefined && !Number.isInteger(v))) {
    child(out, 'bind')['type'] = 'decimal';
  }
  Object.assign(child(out, 'control'), params);
  out['parameters'] = { ...params };
  if (labelset !== undefined) out['itemset'] = labelset;
  return out;
}
