// What each use makes of a question's type: the one table of form types.
//
// Types are the strings of pyxform's form JSON, which keeps the spreadsheet synonyms the
// converter accepts (`int`, `q int`, `add integer prompt`), so every synonym is listed. Three uses
// read a form and they do not agree everywhere, because each follows a different part of onadata:
// - parse: the submission parser (onadata's numeric_converter and calculate_duration): integer and
//   decimal answers become JSON numbers (by type only, never by bind), the first start and end
//   questions give the record's duration;
// - import: the rule a CSV/XLS(X) column's values are checked against; `range` counts as decimal,
//   date-times and times are checked, notes hold no value; a type missing from the column falls
//   back on its bind type;
// - export: how a column is typed (int, decimal, date, else text, each also by bind type) and
//   which questions are selects, matched by prefix as onadata matches them (export_tools'
//   startswith), so `select all that apply from` is a select_multiple there too;
// - odata: the answers typed Edm.DateTimeOffset.
// Every use agrees on geopoints (by type or bind type geopoint), on media (answers that name an
// attachment, osm included) and on leaving `note` out.

export type ImportValue =
  | 'text'
  | 'integer'
  | 'decimal'
  | 'date'
  | 'datetime'
  | 'time'
  | 'geopoint'
  | 'select_one'
  | 'select_multiple';

export type ExportValue = 'int' | 'decimal' | 'date' | 'text';

/** What each use needs to know about one question. */
export interface TypeUses {
  /** parse: the answer is stored as a JSON number. */
  readonly numberInRecord: boolean;
  /** parse: the record's duration runs from the first `start` to the first `end` question. */
  readonly timestamp: 'start' | 'end' | null;
  /** import: the rule its column is checked against; null: it holds no value and has no column. */
  readonly importValue: ImportValue | null;
  /** export: how its cells are typed. */
  readonly exportValue: ExportValue;
  /** export: a select_one, whose cells can show choice labels. */
  readonly selectOne: boolean;
  /** export: a select_multiple, split into a column per choice. */
  readonly selectMultiple: boolean;
  /** odata: typed Edm.DateTimeOffset. */
  readonly odataDateTime: boolean;
  /** every use: a point (`_geolocation`, GPS columns, KML, GeoJSON). */
  readonly geopoint: boolean;
  /** every use: the answer names an attachment (osm answers too). */
  readonly media: boolean;
  readonly osm: boolean;
}

interface Row {
  readonly parse?: 'number' | 'start' | 'end';
  /** Absent: the import falls back on the bind type. */
  readonly import?: ImportValue | null;
  readonly export?: Exclude<ExportValue, 'text'>;
  readonly odataDateTime?: true;
  readonly geopoint?: true;
  readonly media?: true;
}

const ROWS: ReadonlyArray<readonly [readonly string[], Row]> = [
  [['integer', 'int', 'q int', 'add integer prompt'], { parse: 'number', import: 'integer', export: 'int' }],
  [['decimal', 'q decimal', 'add decimal prompt'], { parse: 'number', import: 'decimal', export: 'decimal' }],
  [['range'], { import: 'decimal' }],
  [['date', 'q date', 'add date prompt', 'today'], { import: 'date', export: 'date' }],
  [['datetime', 'dateTime'], { import: 'datetime', odataDateTime: true }],
  [['date time', 'q date time', 'q dateTime', 'add date time prompt', 'add dateTime prompt'], { import: 'datetime' }],
  [['q datetime', 'add datetime prompt'], { odataDateTime: true }],
  [['start'], { parse: 'start', import: 'datetime', odataDateTime: true }],
  [['start time', 'get start time'], { parse: 'start', import: 'datetime' }],
  [['end'], { parse: 'end', import: 'datetime', odataDateTime: true }],
  [['end time', 'get end time'], { parse: 'end', import: 'datetime' }],
  [['time', 'q time', 'add time prompt'], { import: 'time' }],
  [['geopoint', 'q geopoint', 'location', 'q location', 'add location prompt', 'gps', 'start-geopoint', 'background-geopoint'], { import: 'geopoint', geopoint: true }],
  [
    ['select one', 'select_one', 'q select1', 'add select one prompt using', 'select one from', 'select_one_from_file', 'select one from file', 'select one external'],
    { import: 'select_one' },
  ],
  [
    [
      'select all that apply', 'select all that apply from', 'select multiple', 'select multiple from', 'select_multiple',
      'select multiple using', 'add select multiple prompt using', 'q select', 'select_multiple_from_file', 'select multiple from file',
    ],
    { import: 'select_multiple' },
  ],
  [
    [
      'photo', 'image', 'q picture', 'q image', 'add image prompt',
      'audio', 'q audio', 'add audio prompt', 'background-audio',
      'video', 'q video', 'add video prompt',
      'file', 'add file prompt',
      'osm',
    ],
    { media: true },
  ],
  [['q note', 'add note prompt', 'comment'], { import: null }],
];

const BY_TYPE: ReadonlyMap<string, Row> = new Map(ROWS.flatMap(([types, row]) => types.map((type) => [type, row] as const)));

/** Left out of the model: a note holds no answer in any use (onadata leaves notes out of exports). */
export const OMITTED_TYPE = 'note';

const EXPORT_SELECT_MULTIPLE = /^(select all that apply|select multiple|select_multiple|add select multiple prompt|q select\b)/;
const EXPORT_SELECT_ONE = /^(select one|select_one|select1|q select1|add select one prompt)/;

function importByBind(bind: string | undefined): ImportValue {
  if (bind === 'int') return 'integer';
  if (bind === 'decimal') return 'decimal';
  if (bind === 'geopoint') return 'geopoint';
  return 'text';
}

/** The uses of a question of this type and bind type. */
export function usesOf(type: string, bind: string | undefined): TypeUses {
  const row = BY_TYPE.get(type) ?? {};
  const selectMultiple = EXPORT_SELECT_MULTIPLE.test(type);
  return {
    numberInRecord: row.parse === 'number',
    timestamp: row.parse === 'start' || row.parse === 'end' ? row.parse : null,
    importValue: row.import !== undefined ? row.import : importByBind(bind),
    exportValue:
      row.export === 'int' || bind === 'int' ? 'int' : row.export === 'decimal' || bind === 'decimal' ? 'decimal' : row.export === 'date' || bind === 'date' ? 'date' : 'text',
    selectOne: !selectMultiple && EXPORT_SELECT_ONE.test(type),
    selectMultiple,
    odataDateTime: row.odataDateTime === true,
    geopoint: row.geopoint === true || bind === 'geopoint',
    media: row.media === true,
    osm: type === 'osm',
  };
}
