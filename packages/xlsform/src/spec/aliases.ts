// Column and keyword spellings XLSForm accepts, mapped to what they mean.
// A tuple target means the column nests: ["bind", "relevant"] puts the cell at
// row.bind.relevant.

export type HeaderTarget = string | readonly string[];

export const CONTROL_KEYWORDS: Readonly<Record<string, 'group' | 'repeat' | 'loop'>> = {
  group: 'group',
  lgroup: 'repeat',
  repeat: 'repeat',
  loop: 'loop',
  'looped group': 'repeat',
};

export const SELECT_FROM_FILE_KEYWORDS: Readonly<Record<string, string>> = {
  select_one_from_file: 'select one',
  select_multiple_from_file: 'select all that apply',
  'select one from file': 'select one',
  'select multiple from file': 'select all that apply',
};

export const SELECT_KEYWORDS: Readonly<Record<string, string>> = {
  'add select one prompt using': 'select one',
  'add select multiple prompt using': 'select all that apply',
  'select all that apply from': 'select all that apply',
  'select one from': 'select one',
  select1: 'select one',
  select_one: 'select one',
  'select one': 'select one',
  select_multiple: 'select all that apply',
  'select all that apply': 'select all that apply',
  select_one_external: 'select one external',
  ...SELECT_FROM_FILE_KEYWORDS,
  rank: 'rank',
};

export const SETTINGS_HEADER_ALIASES: Readonly<Record<string, HeaderTarget>> = {
  form_title: 'title',
  set_form_title: 'title',
  form_id: 'id_string',
  set_form_id: 'id_string',
  prefix: 'prefix',
};

export const SURVEY_HEADER_ALIASES: Readonly<Record<string, HeaderTarget>> = {
  sms_field: 'sms_field',
  sms_option: 'sms_option',
  sms_separator: 'sms_separator',
  sms_allow_media: 'sms_allow_media',
  sms_date_format: 'sms_date_format',
  sms_datetime_format: 'sms_datetime_format',
  sms_response: 'sms_response',
  compact_tag: ['instance', 'odk:tag'],
  read_only: ['bind', 'readonly'],
  readonly: ['bind', 'readonly'],
  relevant: ['bind', 'relevant'],
  caption: 'label',
  appearance: ['control', 'appearance'],
  relevance: ['bind', 'relevant'],
  required: ['bind', 'required'],
  constraint: ['bind', 'constraint'],
  constraining_message: ['bind', 'jr:constraintMsg'],
  constraint_message: ['bind', 'jr:constraintMsg'],
  calculation: ['bind', 'calculate'],
  calculate: ['bind', 'calculate'],
  command: 'type',
  tag: 'name',
  value: 'name',
  image: ['media', 'image'],
  'big-image': ['media', 'big-image'],
  audio: ['media', 'audio'],
  video: ['media', 'video'],
  count: ['control', 'jr:count'],
  repeat_count: ['control', 'jr:count'],
  'jr:count': ['control', 'jr:count'],
  autoplay: ['control', 'autoplay'],
  rows: ['control', 'rows'],
  noapperrorstring: ['bind', 'jr:noAppErrorString'],
  no_app_error_string: ['bind', 'jr:noAppErrorString'],
  requiredmsg: ['bind', 'jr:requiredMsg'],
  required_message: ['bind', 'jr:requiredMsg'],
  body: 'control',
  save_to: ['bind', 'entities:saveto'],
};

export const LIST_HEADER_ALIASES: Readonly<Record<string, HeaderTarget>> = {
  caption: 'label',
  list_name: 'list name',
  value: 'name',
  image: ['media', 'image'],
  'big-image': ['media', 'big-image'],
  audio: ['media', 'audio'],
  video: ['media', 'video'],
};

export const ENTITIES_HEADER_ALIASES: Readonly<Record<string, HeaderTarget>> = { list_name: 'dataset' };

const YES = ['yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'true()'] as const;
const NO = ['no', 'No', 'NO', 'false', 'False', 'FALSE', 'false()'] as const;

/** Spreadsheet yes/no spellings; undefined for anything else. */
export function yesNo(value: unknown): boolean | undefined {
  if (typeof value !== 'string') return undefined;
  if ((YES as readonly string[]).includes(value)) return true;
  if ((NO as readonly string[]).includes(value)) return false;
  return undefined;
}

/** Bind attribute values written as yes/no become XPath booleans. */
export const BINDING_CONVERSIONS: Readonly<Record<string, string>> = {
  yes: 'true()',
  Yes: 'true()',
  YES: 'true()',
  true: 'true()',
  True: 'true()',
  TRUE: 'true()',
  no: 'false()',
  No: 'false()',
  NO: 'false()',
  false: 'false()',
  False: 'false()',
  FALSE: 'false()',
};
export const CONVERTIBLE_BIND_ATTRIBUTES: ReadonlySet<string> = new Set([
  'readonly',
  'required',
  'relevant',
  'constraint',
  'calculate',
]);
