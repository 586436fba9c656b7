// Reads an import file's header row against the form: what each column fills. The names are the
// CSV export's (onadata-data.md §3.2): slash paths (`grp/q`; `grp.q` is read too when the file
// uses dots throughout), repeat columns `rep[2]/q`, split select_multiple columns `q/choice`,
// geopoint parts `_q_latitude` (and onadata's import spelling `q.latitude`), meta columns.
import type { FormModel, FormQuestion, FormSection } from '../form-model/model.ts';
import { answerChildren, topLevelQuestions } from './answers.ts';

/** A repeat on the way to a column and the entry (1-based) the column belongs to. */
export interface RepeatStep {
  readonly repeat: FormSection;
  readonly index: number;
}

export type ColumnRole =
  | { readonly role: 'value'; readonly question: FormQuestion; readonly steps: readonly RepeatStep[] }
  | { readonly role: 'choice'; readonly question: FormQuestion; readonly steps: readonly RepeatStep[]; readonly choice: string }
  | { readonly role: 'geo-part'; readonly question: FormQuestion; readonly steps: readonly RepeatStep[]; readonly part: number }
  | { readonly role: 'uuid' | 'instance-id' | 'submission-time' | 'submitted-by' | 'ignored' };

export interface HeaderPlan {
  readonly headers: readonly string[];
  readonly columns: readonly ColumnRole[];
  /** Meta-like columns (`_…`) the form does not know: left out, and reported as onadata does. */
  readonly extraColumns: readonly string[];
}

export type HeaderPlanResult = { ok: true; plan: HeaderPlan } | { ok: false; error: string };

/** Columns every export carries that an import does not write (§3.2, §3.3). */
const EXPORT_META_COLUMNS: ReadonlySet<string> = new Set([
  '_id', '_date_modified', '_tags', '_notes', '_version', '_duration', '_last_edited_by', '_total_media', '_media_count',
  '_media_all_received', '_review_status', '_review_comment', '_review_date', '_index', '_parent_table_name', '_parent_index',
  '_xform_id', '_xform_id_string', '_status', '_attachments', '_geolocation', '_edited', '_bamboo_dataset_id', '_deleted_at',
  '_last_edited', '_media_all_received',
]);
const GEO_PARTS = ['latitude', 'longitude', 'altitude', 'precision'] as const;
const DERIVED_GEO = /^_(.+)_(latitude|longitude|altitude|precision)$/;
const SEGMENT = /^(.*?)(?:\[(\d+)\])?$/;

export const MISSING_COLUMNS = 'Sorry uploaded file does not match the form. The file is missing the column(s): ';
export const SPACES_IN_HEADERS = 'CSV file fieldnames should not contain spaces';

function childNamed(section: FormSection, name: string) {
  return answerChildren(section).find((c) => c.name === name);
}

/** Resolves path segments from the root; null when the form has no such column. */
function resolveSegments(form: FormModel, segments: readonly string[]): ColumnRole | null {
  let section: FormSection = form.root;
  const steps: RepeatStep[] = [];
  for (let i = 0; i < segments.length; i++) {
    const match = SEGMENT.exec(segments[i] ?? '');
    const name = match?.[1] ?? '';
    const index = match?.[2] === undefined ? undefined : Number(match[2]);
    const element = childNamed(section, name);
    if (element === undefined) {
      // `_gps_latitude` next to the geopoint `gps` in this section.
      const derived = i === segments.length - 1 && index === undefined ? DERIVED_GEO.exec(name) : null;
      const geo = derived ? childNamed(section, derived[1] ?? '') : undefined;
      if (derived && geo?.kind === 'question' && geo.uses.importValue === 'geopoint') {
        return { role: 'geo-part', question: geo, steps, part: GEO_PARTS.indexOf(derived[2] as (typeof GEO_PARTS)[number]) };
      }
      return null;
    }
    if (element.kind === 'question') {
      if (index !== undefined) return null;
      const rest = segments.slice(i + 1);
      if (rest.length === 0) return { role: 'value', question: element, steps };
      const choice = rest.join('/');
      if (rest.length === 1 && element.uses.importValue === 'select_multiple' && (element.choiceNames === null || element.choiceNames.includes(choice))) {
        return { role: 'choice', question: element, steps, choice };
      }
      return null;
    }
    if (element.kind === 'repeat') {
      if (index !== undefined && index < 1) return null;
      steps.push({ repeat: element, index: index ?? 1 });
    } else if (index !== undefined) {
      return null;
    }
    section = element;
  }
  return null;
}

function resolveHeader(form: FormModel, header: string): ColumnRole | null {
  const bySlash = resolveSegments(form, header.split('/'));
  if (bySlash) return bySlash;
  if (header.includes('.')) {
    const byDot = resolveSegments(form, header.split('.'));
    if (byDot) return byDot;
    // onadata's own import spelling of geopoint parts: `location.latitude`.
    const dot = header.lastIndexOf('.');
    const part = GEO_PARTS.indexOf(header.slice(dot + 1) as (typeof GEO_PARTS)[number]);
    const base = part >= 0 ? resolveHeader(form, header.slice(0, dot)) : null;
    if (base?.role === 'value' && base.question.uses.importValue === 'geopoint') return { role: 'geo-part', question: base.question, steps: base.steps, part };
  }
  return null;
}

function specialRole(header: string): ColumnRole | null {
  switch (header) {
    case '_uuid':
      return { role: 'uuid' };
    case '_submission_time':
      return { role: 'submission-time' };
    case '_submitted_by':
      return { role: 'submitted-by' };
    case 'meta/instanceID':
    case 'meta.instanceID':
      return { role: 'instance-id' };
    case 'meta/deprecatedID':
    case 'meta.deprecatedID':
    case 'formhub/uuid':
    case 'formhub.uuid':
    case '':
      return { role: 'ignored' };
    default:
      return EXPORT_META_COLUMNS.has(header) ? { role: 'ignored' } : null;
  }
}

/** The question a column fills, if any. */
function questionOf(role: ColumnRole): FormQuestion | undefined {
  return 'question' in role ? role.question : undefined;
}

export function planHeaders(form: FormModel, rawHeaders: readonly string[]): HeaderPlanResult {
  const headers = rawHeaders.map((h, i) => (i === 0 ? h.replace(/^\uFEFF/, '') : h));
  if (headers.some((h) => h.includes(' '))) return { ok: false, error: SPACES_IN_HEADERS };
  const seen = new Set<string>();
  const duplicates = new Set<string>();
  const columns: ColumnRole[] = [];
  const unknown: string[] = [];
  const extra: string[] = [];
  for (const header of headers) {
    if (header !== '' && seen.has(header)) duplicates.add(header);
    seen.add(header);
    let role = specialRole(header) ?? resolveHeader(form, header);
    // OSM tag columns (`field:tag`) are derived from attachments.
    if (!role && header.includes(':') && resolveHeader(form, header.slice(0, header.indexOf(':')))) role = { role: 'ignored' };
    if (!role) {
      if (header.startsWith('_') || header.includes('/_')) extra.push(header);
      else unknown.push(header);
      role = { role: 'ignored' };
    }
    columns.push(role);
  }
  if (duplicates.size > 0) return { ok: false, error: `The file has duplicate column(s): ${[...duplicates].join(', ')}.` };
  if (unknown.length > 0) return { ok: false, error: `The file has column(s) the form does not have: ${unknown.join(', ')}.` };

  const covered = new Set<FormQuestion>();
  for (const role of columns) {
    const question = questionOf(role);
    if (question) covered.add(question);
  }
  const missing = topLevelQuestions(form)
    .filter((q) => !covered.has(q) && q.path !== 'meta/instanceID' && q.path !== 'meta/deprecatedID' && !q.path.startsWith('formhub/'))
    .map((q) => q.path)
    .sort();
  if (missing.length > 0) return { ok: false, error: `${MISSING_COLUMNS}${missing.join(', ')}.` };
  return { ok: true, plan: { headers, columns, extraColumns: extra } };
}
