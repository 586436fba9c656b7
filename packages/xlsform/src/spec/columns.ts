// Column names each sheet understands directly (before aliases). Anything else
// is kept verbatim: extra choices columns become choice instance fields and
// unknown survey columns ride along in the form JSON.

const ELEMENT = ['name', 'label', 'parent', 'extra_data', '_survey_element_xpath'] as const;

export const QUESTION_FIELDS = [
  ...ELEMENT,
  '_dynamic_default',
  '_qtd_defaults',
  '_qtd_kwargs',
  'actions',
  'default',
  'guidance_hint',
  'instance',
  'query',
  'sms_field',
  'trigger',
  'bind',
  'choice_filter',
  'control',
  'hint',
  'media',
  'parameters',
  'type',
] as const;

export const SURVEY_COLUMNS: ReadonlySet<string> = new Set([...QUESTION_FIELDS, '_itemset_has_ref', 'choices', 'itemset', 'list_name']);

export const OPTION_FIELDS = [...ELEMENT, '_choice_itext_ref', 'media', 'sms_option'] as const;
export const CHOICES_COLUMNS: ReadonlySet<string> = new Set(OPTION_FIELDS);

const SECTION_FIELDS = ['bind', 'children', 'control', 'hint', 'media', 'type', 'instance', 'flat', 'sms_field'] as const;

/** Settings the survey itself carries (settings sheet columns). */
export const SURVEY_SETTINGS = [
  'add_none_option',
  'clean_text_values',
  'attribute',
  'auto_delete',
  'auto_send',
  'choices',
  'default_language',
  'file_name',
  'id_string',
  'instance_name',
  'instance_xmlns',
  'namespaces',
  'omit_instanceID',
  'public_key',
  'setgeopoint_by_triggering_ref',
  'setvalues_by_triggering_ref',
  'sms_allow_media',
  'sms_date_format',
  'sms_datetime_format',
  'sms_keyword',
  'sms_response',
  'sms_separator',
  'style',
  'submission_url',
  'title',
  'version',
  'allow_choice_duplicates',
  'client_editable',
  'delimiter',
  'prefix',
  'entity_version',
] as const;

export const SETTINGS_COLUMNS: ReadonlySet<string> = new Set([
  ...ELEMENT,
  ...SECTION_FIELDS,
  '_created',
  '_translations',
  '_xpath',
  ...SURVEY_SETTINGS,
]);

export const ENTITIES_COLUMNS: ReadonlySet<string> = new Set(['dataset', 'entity_id', 'create_if', 'update_if', 'repeat', 'label']);

/** Keys the form JSON keeps for a survey (pyxform's Survey fields). */
export const SURVEY_JSON_KEYS: ReadonlySet<string> = new Set([...ELEMENT, ...SECTION_FIELDS, ...SURVEY_SETTINGS]);
export const QUESTION_JSON_KEYS: ReadonlySet<string> = new Set(QUESTION_FIELDS);
export const SELECT_JSON_KEYS: ReadonlySet<string> = new Set([...QUESTION_FIELDS, 'choices', 'itemset', 'list_name']);
export const SECTION_JSON_KEYS: ReadonlySet<string> = new Set([...ELEMENT, ...SECTION_FIELDS]);
export const OPTION_JSON_KEYS: ReadonlySet<string> = new Set(OPTION_FIELDS);
