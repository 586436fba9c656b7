// Name rules that only the built tree can check: loops and generated
// questions add elements after the survey sheet was read.
import { XlsFormError } from '../errors.ts';
import { isEntityPart, isSection, type Section } from './types.ts';

function namesError(name: string, detail: string): XlsFormError {
  return new XlsFormError(`[row : unknown] On the 'survey' sheet, the 'name' value '${name}' is invalid. ${detail}`, {
    code: 'duplicate_name',
    sheet: 'survey',
    column: 'name',
  });
}

/** Name rules that only the built tree can check (loops and generated questions add elements). */
export function checkNames(root: Section): void {
  const repeats = new Set<string>();
  const visit = (section: Section): void => {
    const names = new Set<string>();
    for (const child of section.children) {
      if (isEntityPart(child)) continue;
      if (names.has(child.name)) {
        throw namesError(child.name, 'Questions, groups, and repeats must be unique within their nearest parent group or repeat, or the survey if not inside a group or repeat.');
      }
      names.add(child.name);
      if (child.kind === 'repeat') {
        if (child.name === root.name) throw namesError(child.name, "Repeat names must not be the same as the survey root (which defaults to 'data').");
        if (repeats.has(child.name)) throw namesError(child.name, 'Repeat names must unique anywhere in the survey, at all levels of group or repeat nesting.');
        repeats.add(child.name);
      }
      if (isSection(child)) visit(child);
    }
  };
  visit(root);
}
