// The import itself: rows from a file → checked → instance XML and the record a submission of it
// would store → written in batches (writers.ts), either straight into the form's records within
// one transaction (importDirectly), or staged and then published a batch per transaction
// (stageImport, publish.ts). Whether a row adds or edits a record is decided against the form as
// it was before the import, whichever way the rows are written.
import { randomUUID } from 'node:crypto';
import type { DbOrTx } from '../../platform/db.ts';
import { planHeaders } from '../../lib/import-rows/header-plan.ts';
import { RowBuilder, type CellProblem, type PreparedRow } from '../../lib/import-rows/row-builder.ts';
import { problemLabel } from '../../lib/import-rows/values.ts';
import { buildFormModel, type FormModel } from '../../lib/form-model/model.ts';
import { MALFORMED_XML, parseInstance, type SubmissionRecord } from '../../lib/instance-xml.ts';
import type { RecordFacts } from '../../lib/import-rows/instance-record.ts';
import { refreshFormCounters } from '../submissions/repository.ts';
import * as repo from './repository.ts';
import { DirectWriter, EditedRecordGone, StagingWriter, type RecordWriter } from './writers.ts';
import { ImportFileError } from './readers/errors.ts';
import { importRefusals } from '../../errors.ts';
import { readCsvRows } from './readers/csv.ts';
import { readXlsxRows } from './readers/xlsx.ts';
import { readXlsRows } from './readers/xls.ts';

export type ImportFileKind = 'csv' | 'xlsx' | 'xls';

export const IMPORTED_STATUS = 'imported_via_csv';
/**
 * Rows per batch: a batch waits while the one before it is written, and batches of hundreds lived
 * long enough to reach the old generation (at 500 rows the collector took a third of the CPU).
 */
const BATCH_ROWS = repo.RECORD_BATCH_ROWS;
/** A file with this many bad rows is not read further: the answer lists these. */
const MAX_ROW_ERRORS = 100;

export interface ImportTarget {
  importId: string;
  form: { id: number; id_string: string; version: string; uuid: string };
  formJson: Record<string, unknown>;
  actorId: number;
  overwrite: boolean;
  /** Largest instance the parser accepts (the upload limit). */
  maxInstanceBytes: number;
}

export interface ImportSummary {
  additions: number;
  duplicates: number;
  updates: number;
  info: string;
}

export interface RowError {
  /** 0-based data row (the header is not counted), as onadata numbers them. */
  row: number;
  column: string;
  value: string;
  problem: string;
}

/** A file the import refuses: its message is the client's `error`. */
export class ImportRefused extends Error {
  override name = 'ImportRefused';
  constructor(message: string, readonly rowErrors: readonly RowError[] = []) {
    super(message);
  }
}

export function readRows(kind: ImportFileKind, path: string): AsyncGenerator<string[]> {
  if (kind === 'xlsx') return readXlsxRows(path);
  if (kind === 'xls') return readXlsRows(path);
  return readCsvRows(path);
}

export interface StageOutcome {
  rows: number;
  stagedAdditions: number;
  stagedEdits: number;
  /** Rows naming a record another row of the file already edits. */
  duplicatesInFile: number;
  extraColumns: readonly string[];
}

function pythonRepr(text: string): string {
  return text.includes("'") && !text.includes('"') ? `"${text}"` : `'${text.replaceAll("'", "\\'")}'`;
}

/** onadata's message: `Invalid CSV data imported in row(s): {1: ['Unknown integer format(s): 21.53 (age)']}`. */
export function rowErrorMessage(errors: readonly RowError[]): string {
  const byRow = new Map<number, Map<string, string[]>>();
  for (const e of errors) {
    let problems = byRow.get(e.row);
    if (!problems) byRow.set(e.row, (problems = new Map()));
    const label = problemLabel(e.problem);
    const list = problems.get(label) ?? [];
    list.push(`${e.value} (${e.column})`);
    problems.set(label, list);
  }
  const rows = [...byRow].map(([row, problems]) => `${row}: [${[...problems].map(([label, values]) => pythonRepr(`${label}: ${values.join(', ')}`)).join(', ')}]`);
  return `Invalid CSV data imported in row(s): {${rows.join(', ')}}`;
}

/** Decides what each row does (add, edit, duplicate) and hands the rows to the writer. */
class Stager {
  readonly #form: FormModel;
  readonly #editedTargets = new Set<string>();
  readonly #users = new Map<string, number | null>();
  staged = { additions: 0, edits: 0, duplicates: 0 };

  /**
   * `db` answers the look-ups (existing records, accounts); `writer` takes the rows. Without
   * `findMatches` (the form had no live record when the import began), no row can edit one, and
   * no batch waits for a look-up.
   */
  constructor(
    private readonly db: DbOrTx, private readonly target: ImportTarget, form: FormModel, private readonly writer: RecordWriter,
    private readonly findMatches: boolean,
  ) {
    this.#form = form;
  }

  async flush(batch: Array<{ seq: number; row: PreparedRow }>): Promise<void> {
    if (batch.length === 0) return;
    const { form, overwrite } = this.target;
    const matches = this.findMatches ? batch.map((b) => b.row.matchUuid).filter((u): u is string => u !== null) : [];
    const live = await repo.findLiveUuids(this.db, form.id, [...new Set(matches)]);
    await this.#learnUsers(batch.map((b) => b.row.submittedBy));
    const staged: repo.StagedRow[] = [];
    for (const { seq, row } of batch) {
      const match = overwrite ? null : row.matchUuid;
      let target: string | null = null;
      if (match !== null && live.has(match)) {
        if (this.#editedTargets.has(match)) {
          this.staged.duplicates++;
          continue;
        }
        this.#editedTargets.add(match);
        target = match;
      }
      const uuid = target === null && match !== null ? match : randomUUID();
      staged.push(this.#stagedRow(seq, row, uuid, target));
    }
    await this.writer.write(staged);
  }

  #stagedRow(seq: number, row: PreparedRow, uuid: string, target: string | null): repo.StagedRow {
    const { form } = this.target;
    const xml = row.render(uuid, target);
    const maxBytes = this.target.maxInstanceBytes;
    const tooLarge = xml.length > maxBytes || (xml.length * 3 > maxBytes && Buffer.byteLength(xml, 'utf8') > maxBytes);
    if (tooLarge) throw new ImportRefused(importRefusals.rowNotStored(seq, MALFORMED_XML));
    // Built with the XML when the form allows, else parsed from it as a submission is.
    const parsed = row.facts === null ? this.#parse(seq, xml) : null;
    const facts = parsed?.facts ?? row.facts;
    if (facts === null) throw new Error('a prepared row has facts or is parsed');
    // The instance carries no version attribute and the form's id string as its id.
    const version = form.version;
    const extra = {
      _uuid: uuid,
      _xform_id_string: form.id_string,
      _version: version,
      _status: IMPORTED_STATUS,
      _geolocation: facts.geolocation,
      _duration: facts.duration,
      _bamboo_dataset_id: '',
      _tags: [],
      _notes: [],
    };
    const json = parsed === null ? row.recordJson(uuid, target, extra) : JSON.stringify({ ...parsed.record, ...extra });
    if (json === null) throw new Error('a prepared row with facts has its record');
    if (target === null) this.staged.additions++;
    else this.staged.edits++;
    const submitter = row.submittedBy === null ? undefined : this.#users.get(row.submittedBy.toLowerCase());
    return {
      seq,
      targetUuid: target,
      uuid,
      xml,
      json,
      version,
      submittedBy: submitter ?? this.target.actorId,
      dateCreated: row.submissionTime,
      totalMedia: facts.mediaFiles.length,
      media: JSON.stringify(facts.mediaFiles),
      hasGeopoint: facts.geolocation[0] !== null,
      repeatCounts: facts.repeatCounts,
    };
  }

  #parse(seq: number, xml: string): { record: SubmissionRecord; facts: RecordFacts } {
    const parsed = parseInstance(xml, this.#form, { maxBytes: this.target.maxInstanceBytes });
    if (!parsed.ok) throw new ImportRefused(importRefusals.rowNotStored(seq, parsed.error));
    return { record: parsed.record, facts: parsed.meta };
  }

  /** `_submitted_by` names the record's submitter when that account exists (onadata's rule). */
  async #learnUsers(names: ReadonlyArray<string | null>): Promise<void> {
    const unknown = [...new Set(names.filter((n): n is string => n !== null).map((n) => n.toLowerCase()))].filter((n) => !this.#users.has(n));
    if (unknown.length === 0) return;
    const found = await repo.findUserIdsByUsername(this.db, unknown);
    for (const name of unknown) this.#users.set(name, found.get(name) ?? null);
  }
}

export interface StageOptions {
  /** Called after each batch with the number of data rows read so far. */
  onProgress?: (rows: number) => Promise<void>;
}

/** Reads, checks and stages every row into import_rows; throws ImportRefused (nothing staged matters then) on bad input. */
export function stageImport(db: DbOrTx, target: ImportTarget, rows: AsyncIterable<string[]>, options: StageOptions = {}): Promise<StageOutcome> {
  return readImport(db, target, rows, new StagingWriter(db, target.importId), options);
}

/**
 * The whole import in the caller's transaction, rows written straight into the form's records;
 * returns the summary, recorded under the import's id. `lookupDb` answers questions about the
 * form as it was (the transaction itself on PGlite; any other connection on PostgreSQL, so that
 * look-ups run beside the writes).
 */
export async function importDirectly(
  trx: DbOrTx, lookupDb: DbOrTx, target: ImportTarget, rows: AsyncIterable<string[]>, now: Date, options: StageOptions = {},
): Promise<ImportSummary> {
  const applyOptions = applyOptionsOf(target, now);
  await repo.preferFastCompression(trx);
  if (target.overwrite) await repo.softDeleteAllRecords(trx, target.form.id, target.actorId, now);
  const writer = new DirectWriter(trx, applyOptions);
  let staged: StageOutcome;
  try {
    staged = await readImport(lookupDb, target, rows, writer, options);
  } catch (error) {
    if (error instanceof EditedRecordGone) throw new ImportRefused(importRefusals.editedRecordGone);
    throw error;
  }
  return finishImport(trx, target, staged, { additions: writer.additions, updates: writer.updates });
}

async function readImport(db: DbOrTx, target: ImportTarget, rows: AsyncIterable<string[]>, writer: RecordWriter, options: StageOptions): Promise<StageOutcome> {
  try {
    return await readAndWrite(db, target, rows, writer, options);
  } catch (error) {
    // A write still under way must end before the caller rolls back (its failure says less).
    await writer.flush().catch(() => undefined);
    throw error;
  }
}

async function readAndWrite(db: DbOrTx, target: ImportTarget, rows: AsyncIterable<string[]>, writer: RecordWriter, options: StageOptions): Promise<StageOutcome> {
  const form = buildFormModel(target.formJson);
  const findMatches = !target.overwrite && (await repo.formHasLiveRecords(db, target.form.id));
  const stager = new Stager(db, target, form, writer, findMatches);
  const errors: RowError[] = [];
  let builder: RowBuilder | undefined;
  let extraColumns: readonly string[] = [];
  let batch: Array<{ seq: number; row: PreparedRow }> = [];
  let count = 0;
  try {
    for await (const cells of rows) {
      if (!builder) {
        const planned = planHeaders(form, cells);
        if (!planned.ok) throw new ImportRefused(planned.error);
        extraColumns = planned.plan.extraColumns;
        builder = new RowBuilder(form, planned.plan, { rootName: form.rootName, idString: target.form.id_string, formUuid: target.form.uuid });
        continue;
      }
      const seq = count++;
      const prepared = builder.prepare(cells);
      if (!prepared.ok) {
        for (const p of prepared.problems as CellProblem[]) errors.push({ row: seq, column: p.column, value: p.value, problem: p.problem });
        if (errors.length >= MAX_ROW_ERRORS) break;
        continue;
      }
      if (errors.length > 0) continue;
      batch.push({ seq, row: prepared.row });
      if (batch.length >= BATCH_ROWS) {
        await stager.flush(batch);
        batch = [];
        await options.onProgress?.(count);
      }
    }
  } catch (error) {
    if (error instanceof ImportFileError) throw new ImportRefused(error.message);
    throw error;
  }
  if (!builder) throw new ImportRefused(importRefusals.fileEmpty);
  if (errors.length > 0) throw new ImportRefused(rowErrorMessage(errors), errors);
  await stager.flush(batch);
  await writer.flush();
  await options.onProgress?.(count);
  return {
    rows: count,
    stagedAdditions: stager.staged.additions,
    stagedEdits: stager.staged.edits,
    duplicatesInFile: stager.staged.duplicates,
    extraColumns,
  };
}

function applyOptionsOf(target: ImportTarget, now: Date): repo.ApplyOptions {
  return { importId: target.importId, formId: target.form.id, actorId: target.actorId, now, overwrite: target.overwrite, status: IMPORTED_STATUS };
}

/** Counters, the summary, and the record that this import was applied. */
export async function finishImport(
  trx: DbOrTx, target: { importId: string; form: { id: number } }, staged: StageOutcome, written: { additions: number; updates: number },
): Promise<ImportSummary> {
  const { additions, updates } = written;
  await refreshFormCounters(trx, target.form.id);
  const summary: ImportSummary = {
    additions,
    duplicates: staged.duplicatesInFile + (staged.stagedAdditions - additions),
    updates,
    info: `Additional column(s) excluded from the upload: '${staged.extraColumns.join(', ')}'.`,
  };
  await repo.recordImportResult(trx, target.importId, target.form.id, summary);
  return summary;
}
