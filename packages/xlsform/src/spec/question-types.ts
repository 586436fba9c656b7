// Every XLSForm question type: its body control (tag, media type) and the bind
// attributes it implies. Long-standing synonyms ("q int", "add text prompt")
// are kept because old forms still use them.

export interface QuestionTypeSpec {
  readonly control?: { readonly tag: string; readonly mediatype?: string };
  readonly bind?: Readonly<Record<string, string>>;
  readonly hint?: string;
  readonly parameters?: Readonly<Record<string, string>>;
}

const input = (type: string) => ({ control: { tag: 'input' }, bind: { type } }) as const;
const upload = (mediatype: string) => ({ control: { tag: 'upload', mediatype }, bind: { type: 'binary' } }) as const;
const property = (param: string) =>
  ({ bind: { 'jr:preload': 'property', type: 'string', 'jr:preloadParams': param } }) as const;
const timestamp = (param: string) =>
  ({ bind: { 'jr:preload': 'timestamp', type: 'dateTime', 'jr:preloadParams': param } }) as const;
const today = { bind: { 'jr:preload': 'date', type: 'date', 'jr:preloadParams': 'today' } } as const;
const note = { control: { tag: 'input' }, bind: { readonly: 'true()', type: 'string' } } as const;
const selectOne = { control: { tag: 'select1' }, bind: { type: 'string' } } as const;
const selectMany = { control: { tag: 'select' }, bind: { type: 'string' } } as const;
const acknowledge = { control: { tag: 'trigger' }, bind: { type: 'string' } } as const;
const calculate = { bind: { type: 'string' } } as const;
const daysIn = (max: number) =>
  ({
    control: { tag: 'input' },
    bind: { type: 'int', constraint: `0 <= . and . <= ${max}` },
    hint: `Enter a number 0-${max}.`,
  }) as const;

export const QUESTION_TYPES: Readonly<Record<string, QuestionTypeSpec>> = {
  text: input('string'),
  string: input('string'),
  'q string': input('string'),
  'add text prompt': input('string'),
  integer: input('int'),
  int: input('int'),
  'q int': input('int'),
  'add integer prompt': input('int'),
  decimal: input('decimal'),
  'q decimal': input('decimal'),
  'add decimal prompt': input('decimal'),
  date: input('date'),
  'q date': input('date'),
  'add date prompt': input('date'),
  time: input('time'),
  datetime: input('dateTime'),
  dateTime: input('dateTime'),
  'date time': input('dateTime'),
  'q date time': input('dateTime'),
  'q dateTime': input('dateTime'),
  'add date time prompt': input('dateTime'),
  'add dateTime prompt': input('dateTime'),
  geopoint: input('geopoint'),
  'q geopoint': input('geopoint'),
  location: input('geopoint'),
  'q location': input('geopoint'),
  'add location prompt': input('geopoint'),
  gps: input('geopoint'),
  geoshape: input('geoshape'),
  'q geoshape': input('geoshape'),
  geotrace: input('geotrace'),
  'q geotrace': input('geotrace'),
  barcode: input('barcode'),
  'q barcode': input('barcode'),
  'add barcode prompt': input('barcode'),
  photo: upload('image/*'),
  image: upload('image/*'),
  'q picture': upload('image/*'),
  'q image': upload('image/*'),
  'add image prompt': upload('image/*'),
  audio: upload('audio/*'),
  'q audio': upload('audio/*'),
  'add audio prompt': upload('audio/*'),
  video: upload('video/*'),
  'q video': upload('video/*'),
  'add video prompt': upload('video/*'),
  file: upload('application/*'),
  'add file prompt': upload('application/*'),
  osm: upload('osm/*'),
  note,
  'q note': note,
  'add note prompt': note,
  acknowledge,
  'q acknowledge': acknowledge,
  'add acknowledge prompt': acknowledge,
  trigger: { control: { tag: 'trigger' } },
  calculate,
  'q calculate': calculate,
  'add calculate prompt': calculate,
  hidden: calculate,
  'select one': selectOne,
  'q select1': selectOne,
  'select one using': selectOne,
  'add select one prompt using': selectOne,
  'select all that apply': selectMany,
  'select all that apply from': selectMany,
  'select multiple from': selectMany,
  'select multiple using': selectMany,
  'add select multiple prompt using': selectMany,
  'q select': selectMany,
  'select one external': { control: { tag: 'input' }, bind: { type: 'string' } },
  rank: { control: { tag: 'odk:rank' }, bind: { type: 'odk:rank' } },
  range: { control: { tag: 'range' }, bind: { type: 'int' }, parameters: { start: '1', end: '10', step: '1' } },
  'phone number': {
    control: { tag: 'input' },
    bind: { type: 'string', constraint: "regex(., '^\\d*$')" },
    hint: 'Enter numbers only.',
  },
  percentage: { control: { tag: 'input' }, bind: { type: 'int', constraint: '0 <= . and . <= 100' } },
  'number of days in last month': daysIn(31),
  'number of days in last six months': daysIn(183),
  'number of days in last year': daysIn(365),
  start: timestamp('start'),
  'start time': timestamp('start'),
  'get start time': timestamp('start'),
  end: timestamp('end'),
  'end time': timestamp('end'),
  'get end time': timestamp('end'),
  today,
  'get today': today,
  deviceid: property('deviceid'),
  imei: property('deviceid'),
  'device id': property('deviceid'),
  'get device id': property('deviceid'),
  'uri:deviceid': property('uri:deviceid'),
  subscriberid: property('subscriberid'),
  'subscriber id': property('subscriberid'),
  'get subscriber id': property('subscriberid'),
  'uri:subscriberid': property('uri:subscriberid'),
  simserial: property('simserial'),
  'sim id': property('simserial'),
  'get sim id': property('simserial'),
  'uri:simserial': property('uri:simserial'),
  phonenumber: property('phonenumber'),
  'get phone number': property('phonenumber'),
  'uri:phonenumber': property('uri:phonenumber'),
  username: property('username'),
  'uri:username': property('uri:username'),
  email: property('email'),
  'uri:email': property('uri:email'),
  audit: { bind: { type: 'binary' } },
  'xml-external': {},
  'csv-external': {},
  'start-geopoint': { control: { tag: 'action' }, bind: { type: 'geopoint' } },
  'background-audio': { control: { tag: 'action' }, bind: { type: 'binary' } },
  'background-geopoint': { control: { tag: 'trigger' }, bind: { type: 'geopoint' } },
};

/** Spreadsheet spellings replaced before anything else looks at a type. */
export const TYPE_ALIASES: Readonly<Record<string, string>> = {
  imei: 'deviceid',
  image: 'photo',
  'add image prompt': 'photo',
  'add photo prompt': 'photo',
  'add audio prompt': 'audio',
  'add video prompt': 'video',
  'add file prompt': 'file',
};

export const GEO_TYPES: ReadonlySet<string> = new Set(['geopoint', 'geoshape', 'geotrace']);
export const EXTERNAL_INSTANCE_TYPES: ReadonlySet<string> = new Set(['csv-external', 'xml-external']);
export const DEPRECATED_DEVICE_ID_TYPES: ReadonlySet<string> = new Set(['subscriberid', 'simserial']);
