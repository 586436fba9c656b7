// Warns about translation names without a machine-readable language code,
// e.g. "English" instead of "English (en)".
import type { Translations } from './itext.ts';

const CODE = /\(([A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*)\)\s*$/;

export function languageWarning(translations: Translations): string | undefined {
  const bad = [...translations.keys()].filter((lang) => lang !== 'default' && !CODE.test(lang));
  if (bad.length === 0) return undefined;
  return `The following language declarations do not contain valid machine-readable codes: ${bad.join(', ')}. Learn more: http://xlsform.org#multiple-language-support`;
}
