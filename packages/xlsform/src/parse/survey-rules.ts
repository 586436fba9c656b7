// Survey-sheet rules that need more than one row: unique names per group,
// reference-geometry targets, the "flat" setting, XML names.
import { XlsFormError, rowPrefix } from '../errors.ts';
import type { JsonObject } from '../types.ts';
import type { ChoiceLists } from './choices.ts';
import type { EntityContext } from './entities.ts';
import { child, nested, text } from './json-helpers.ts';

/** Names already used in the current group or repeat (and their lower-case forms). */
export interface NameScope {
  childNames: Set<string>;
  childNamesLower: Set<string>;
}

export function invalidName(sheet: string, row: number, column: string): XlsFormError {
  return new XlsFormError(
    `${rowPrefix(row)} On the '${sheet}' sheet, the '${column}' value is invalid. Names must begin with a letter or underscore. After the first character, names may contain letters, digits, underscores, hyphens, or periods.`,
    { code: 'invalid_name', sheet, row, column },
  );
}

/**
 * The "flat" setting (for ODK Tables): groups stop nesting the instance, and
 * their relevance moves onto each question inside them.
 */
export function addFlatAnnotations(prompts: JsonObject[], parentRelevant: string): void {
  for (const prompt of prompts) {
    const own = text(nested(prompt, 'bind')?.['relevant']) ?? '';
    let relevant = '';
    if (parentRelevant !== '') {
      relevant = parentRelevant;
      if (own !== '') relevant += ` and (${own})`;
    } else if (own !== '') relevant = own;
    const children = prompt['children'];
    if (Array.isArray(children) && children.length > 0) {
      prompt['flat'] = true;
      addFlatAnnotations(children.filter((c): c is JsonObject => typeof c === 'object' && c !== null && !Array.isArray(c)), relevant);
    } else if (relevant !== '') child(prompt, 'bind')['relevant'] = relevant;
  }
}

export function checkUniqueName(name: string, frame: NameScope, row: number, warnings: string[]): void {
  if (!frame.childNames.has('meta')) frame.childNames.add('meta');
  if (frame.childNames.has(name)) {
    if (name === 'meta') {
      throw new XlsFormError(`${rowPrefix(row)} On the 'survey' sheet, the 'name' value 'meta' is invalid. The name 'meta' is reserved for form metadata.`, {
        code: 'reserved_name',
        sheet: 'survey',
        row,
        column: 'name',
      });
    }
    throw new XlsFormError(
      `${rowPrefix(row)} On the 'survey' sheet, the 'name' value '${name}' is invalid. Questions, groups, and repeats must be unique within their nearest parent group or repeat, or the survey if not inside a group or repeat.`,
      { code: 'duplicate_name', sheet: 'survey', row, column: 'name' },
    );
  }
  frame.childNames.add(name);
  const lower = name.toLowerCase();
  if (frame.childNamesLower.has(lower)) {
    warnings.push(
      `${rowPrefix(row)} On the 'survey' sheet, the 'name' value '${name}' is problematic. The name is a case-insensitive match to another name. Questions, groups, and repeats should be unique within the nearest parent group or repeat, or the survey if not inside a group or repeat. Some data processing tools are not case-sensitive, so the current names may make analysis difficult.`,
    );
  }
  frame.childNamesLower.add(lower);
}

export function checkGeoReferences(
  references: Array<[string, number]>,
  secondaryInstances: Set<string>,
  repeatNames: Set<string>,
  choices: ChoiceLists,
  entities: EntityContext | undefined,
): void {
  for (const [target, row] of references) {
    if (secondaryInstances.has(target) || choices.has(target) || entities?.hasDataset(target)) continue;
    const m = /^\$\{([^}]+)\}$/.exec(target);
    if (m && repeatNames.has(m[1] ?? '')) continue;
    throw new XlsFormError(
      `${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. The 'reference-geometry' parameter must either match a secondary instance name (a choices list_name, an entities list_name, or the base name of an attached file), or be a reference variable containing the name of a repeat.`,
      { code: 'invalid_parameters', sheet: 'survey', row, column: 'parameters' },
    );
  }
}

