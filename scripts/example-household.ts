// Writes examples/household.xlsx, the XLSForm the README's tour publishes:
//   node --import tsx scripts/example-household.ts [OUT.xlsx]
// A text, an integer with a constraint, a select_one, a photo and a repeat: enough for the tour to
// show a record with a choice, a file and repeated rows. examples/household-instance.xml answers it.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as XLSX from '@e965/xlsx';

const survey = [
  ['type', 'name', 'label', 'required', 'constraint', 'constraint_message', 'parameters'],
  ['text', 'name', 'Name of the head of household', 'yes', '', '', ''],
  ['integer', 'age', 'Age of the head of household', 'yes', '. >= 0 and . < 130', 'An age from 0 to 129', ''],
  ['select_one water', 'water', 'Main source of drinking water', 'yes', '', '', ''],
  ['image', 'photo', 'Photo of the house', '', '', '', 'max-pixels=1024'],
  ['begin_repeat', 'members', 'Other members of the household', '', '', '', ''],
  ['text', 'member_name', 'Name', 'yes', '', '', ''],
  ['integer', 'member_age', 'Age', '', '. >= 0 and . < 130', 'An age from 0 to 129', ''],
  ['end_repeat', '', '', '', '', '', ''],
];

const choices = [
  ['list_name', 'name', 'label'],
  ['water', 'piped', 'Piped into the home'],
  ['water', 'well', 'Protected well'],
  ['water', 'surface', 'River, lake or pond'],
  ['water', 'other', 'Other'],
];

const settings = [
  ['form_id', 'form_title', 'version'],
  ['household', 'Household survey', '2026010101'],
];

const book = XLSX.utils.book_new();
XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet(survey), 'survey');
XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet(choices), 'choices');
XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet(settings), 'settings');
// A fixed creation date keeps the file the same from one run to the next.
book.Props = { Title: 'Household survey', CreatedDate: new Date('2026-01-01T00:00:00Z') };
const bytes = XLSX.write(book, { type: 'buffer', bookType: 'xlsx', compression: true }) as Buffer;
const target = process.argv[2] ?? fileURLToPath(new URL('../examples/household.xlsx', import.meta.url));
writeFileSync(target, bytes);
console.log(`wrote ${target} (${bytes.length} bytes)`);
