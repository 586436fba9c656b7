// Shared helpers for the markdown-table tests.
import assert from 'node:assert/strict';
import { convert } from '../src/index.ts';
import type { ConvertFailure, ConvertSuccess } from '../src/index.ts';

/** Converts a markdown-table form (leading indentation removed); fails the test if it is rejected. */
export function md(form: string, fileName = 'test_form.md'): ConvertSuccess {
  const result = convert(form, { fileName });
  if (!result.ok) assert.fail(`conversion failed: ${result.errors.map((e) => e.message).join('; ')}`);
  return result;
}

/** Converts a markdown-table form that must be rejected; returns the joined messages. */
export function mdError(form: string, fileName = 'test_form.md'): { message: string; failure: ConvertFailure } {
  const result = convert(form, { fileName });
  if (result.ok) assert.fail('expected the form to be rejected');
  return { message: result.errors.map((e) => e.message).join('\n'), failure: result };
}

/** Asserts that every snippet occurs in the XForm (whitespace between tags ignored). */
export function assertXml(xform: string, ...snippets: string[]): void {
  const flat = xform.replace(/>\s+</g, '><');
  for (const snippet of snippets) {
    assert.ok(flat.includes(snippet), `expected XForm to contain:\n${snippet}\n---\n${xform}`);
  }
}

export function assertNoXml(xform: string, ...snippets: string[]): void {
  const flat = xform.replace(/>\s+</g, '><');
  for (const snippet of snippets) assert.ok(!flat.includes(snippet), `expected XForm not to contain:\n${snippet}`);
}
