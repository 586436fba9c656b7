// Which languages each translatable column is given in, for the warnings about
// missing translations and about or_other in translated forms.

const SURVEY_TRANSLATABLE: Readonly<Record<string, string>> = {
  label: 'label',
  hint: 'hint',
  guidance_hint: 'guidance_hint',
  image: 'image',
  'big-image': 'big-image',
  audio: 'audio',
  video: 'video',
  'jr:constraintMsg': 'constraint_message',
  'jr:requiredMsg': 'required_message',
};
const CHOICES_TRANSLATABLE: Readonly<Record<string, string>> = {
  label: 'label',
  image: 'image',
  'big-image': 'big-image',
  audio: 'audio',
  video: 'video',
};

interface Languages {
  seen: Map<string, string[]>;
  missing: Map<string, string[]>;
}

export interface SheetLanguages {
  survey: Languages;
  choices: Languages;
}

function collect(headers: string[][], translatable: Readonly<Record<string, string>>): Languages {
  const seen = new Map<string, string[]>();
  const columns = new Set<string>();
  for (const header of headers) {
    const head = header.length > 1 && (header[0] === 'media' || header[0] === 'bind') ? header.slice(1) : header;
    const column = translatable[head[0] ?? ''];
    if (column === undefined) continue;
    const language = head.length === 1 ? 'default' : head.length === 2 ? head[1] : undefined;
    if (language !== undefined) {
      const list = seen.get(language) ?? [];
      list.push(column);
      seen.set(language, list);
    }
    columns.add(column);
  }
  const missing = new Map<string, string[]>();
  if (!defaultOnly(seen)) {
    for (const [language, present] of seen) {
      for (const column of columns) {
        if (!present.includes(column)) missing.set(language, [...(missing.get(language) ?? []), column]);
      }
    }
  }
  return { seen, missing };
}

function defaultOnly(seen: Map<string, string[]>): boolean {
  return seen.size === 0 || (seen.has('default') && seen.size === 1);
}

export function sheetLanguages(surveyHeaders: string[][], choiceHeaders: string[][]): SheetLanguages {
  return { survey: collect(surveyHeaders, SURVEY_TRANSLATABLE), choices: collect(choiceHeaders, CHOICES_TRANSLATABLE) };
}

function sheetMessage(name: string, missing: Map<string, string[]>): string | undefined {
  if (missing.size === 0) return undefined;
  return [...missing.keys()]
    .sort()
    .map((lang) => {
      const columns = missing.get(lang) ?? [];
      return columns.length === 1
        ? `Language '${lang}' is missing the ${name} ${columns[0] ?? ''} column.`
        : `Language '${lang}' is missing the ${name} columns ${[...columns].sort().join(', ')}.`;
    })
    .join('\n');
}

export function missingTranslationsWarning(languages: SheetLanguages): string | undefined {
  const parts = [sheetMessage('survey', languages.survey.missing), sheetMessage('choices', languages.choices.missing)].filter(
    (p): p is string => p !== undefined,
  );
  return parts.length > 0 ? parts.join('\n') : undefined;
}

export function orOtherWarning(languages: SheetLanguages): string | undefined {
  if (defaultOnly(languages.survey.seen) && defaultOnly(languages.choices.seen)) return undefined;
  return "This form uses or_other and translations, which is not recommended. An untranslated input question label and choice label is generated for 'other'. Learn more: https://xlsform.org/en/#specify-other).";
}
