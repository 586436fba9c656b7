// The part of the form model an import fills: every element but those that hold no value in
// imports (the type table's import use: notes under their other spellings), as onadata's import
// leaves them out of the columns and of the instance it writes.
import type { FormModel, FormNode, FormQuestion, FormSection } from '../form-model/model.ts';

const cache = new WeakMap<FormSection, readonly FormNode[]>();

/** A section's children that hold a value, form order (computed once per section). */
export function answerChildren(section: FormSection): readonly FormNode[] {
  let children = cache.get(section);
  if (!children) {
    children = section.children.filter((c) => c.kind !== 'question' || c.uses.importValue !== null);
    cache.set(section, children);
  }
  return children;
}

/** Questions outside repeats, in form order: the columns a file must carry (onadata's rule). */
export function topLevelQuestions(form: FormModel): FormQuestion[] {
  const out: FormQuestion[] = [];
  const walk = (section: FormSection): void => {
    for (const child of answerChildren(section)) {
      if (child.kind === 'question') out.push(child);
      else if (child.kind === 'group') walk(child);
    }
  };
  walk(form.root);
  return out;
}
