// What every export format reads: the form's export model, the records in `_id` order
// (keyset pages, one page in memory at a time), and the aggregates the layouts need.
import type { AppDeps } from '../../context.ts';
import { buildExportForm, type ExportForm } from '../../exports/layout/form-model.ts';
import { RepeatShape } from '../../exports/layout/repeat-shape.ts';
import type { ExportRecord } from '../../exports/layout/types.ts';
import { queryCondition } from '../submissions/query.ts';
import type { ExportOptions } from './options.ts';
import * as repo from './repository.ts';

export const RECORD_PAGE_SIZE = 2000;

export interface ExportTarget {
  readonly formId: number;
  readonly idString: string;
  readonly title: string;
  /** The form's pyxform form JSON (forms.json). */
  readonly formJson: Readonly<Record<string, unknown>>;
  /** Only this submitter's records (callers who may see only their own data). */
  readonly submittedBy?: number | undefined;
}

export interface ExportSource {
  readonly form: ExportForm;
  readonly options: ExportOptions;
  readonly baseUrl: string;
  /** A fresh pass over the records; each call starts again from the first record. */
  records(): AsyncIterable<ExportRecord>;
  /** Repeat block counts for flat layouts (one SQL aggregate per repeat). */
  repeatShape(): Promise<RepeatShape>;
  /** `<field>:<tag>` keys of osm questions found in the records. */
  osmTagKeys(): Promise<string[]>;
}

/**
 * Prepares an export. The query is parsed and the first page read here, so a bad request
 * fails before any byte is sent.
 */
export async function openExportSource(deps: AppDeps, target: ExportTarget, options: ExportOptions, baseUrl: string): Promise<ExportSource> {
  const form = buildExportForm(target.formJson);
  const scope: repo.RecordScope = {
    formId: target.formId,
    condition: queryCondition(options.query),
    submittedBy: target.submittedBy,
    start: options.start,
    end: options.end,
  };
  const withAttachments = options.includeImages && hasMedia(form);
  let firstPage: repo.RecordTextRow[] | undefined = await repo.listExportRecordTexts(deps.db, scope, 0, RECORD_PAGE_SIZE, withAttachments);

  async function* records(): AsyncGenerator<ExportRecord> {
    let page = firstPage ?? (await repo.listExportRecordTexts(deps.db, scope, 0, RECORD_PAGE_SIZE, withAttachments));
    firstPage = undefined;
    for (;;) {
      for (const row of page) yield JSON.parse(row.record) as ExportRecord;
      const last = page[page.length - 1];
      if (page.length < RECORD_PAGE_SIZE || last === undefined) return;
      page = await repo.listExportRecordTexts(deps.db, scope, last.id, RECORD_PAGE_SIZE, withAttachments);
    }
  }

  return {
    form,
    options,
    baseUrl,
    records,
    repeatShape: async () => {
      const shape = new RepeatShape();
      for (const repeat of form.repeats) {
        const chain = [...(form.repeatAncestors.get(repeat.path) ?? []).map((r) => r.path), repeat.path];
        for (const { indices, count } of await repo.listRepeatCounts(deps.db, scope, chain)) shape.note(repeat.path, indices, count);
      }
      return shape;
    },
    osmTagKeys: () => repo.listOsmTagKeys(deps.db, scope, form.osmQuestions.map((q) => q.path)),
  };
}

function hasMedia(form: ExportForm): boolean {
  const walk = (nodes: ExportForm['children']): boolean => nodes.some((n) => (n.kind === 'question' ? n.media : walk(n.children)));
  return walk(form.children);
}
