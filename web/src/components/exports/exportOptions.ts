// The exports page's choices → export_async query options.
import type { ExportOptions } from '../../api/exports.ts';

export interface ExportChoices {
  groupDelimiter: '/' | '.';
  removeGroupName: boolean;
  splitSelectMultiples: boolean;
  binarySelectMultiples: boolean;
  valueSelectMultiples: boolean;
  showChoiceLabels: boolean;
  includeLabels: boolean;
  includeLabelsOnly: boolean;
  includeHxl: boolean;
  includeImages: boolean;
  includeReviews: boolean;
  winExcelUtf8: boolean;
  repeatIndexTags: string;
  language: string;
  query: string;
  start: string;
  end: string;
}

export function defaultChoices(): ExportChoices {
  return {
    groupDelimiter: '/',
    removeGroupName: false,
    splitSelectMultiples: true,
    binarySelectMultiples: false,
    valueSelectMultiples: false,
    showChoiceLabels: false,
    includeLabels: false,
    includeLabelsOnly: false,
    includeHxl: true,
    includeImages: true,
    includeReviews: false,
    winExcelUtf8: false,
    repeatIndexTags: '[,]',
    language: '',
    query: '',
    start: '',
    end: '',
  };
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** A local date and time as export_async's `YY_MM_DD_hh_mm_ss` (in UTC). */
export function exportDate(local: string): string {
  if (!local) return '';
  const date = new Date(local);
  if (Number.isNaN(date.getTime())) return '';
  return [date.getUTCFullYear() % 100, date.getUTCMonth() + 1, date.getUTCDate(), date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds()].map(pad).join('_');
}

export function exportOptions(choices: ExportChoices): ExportOptions {
  const options: ExportOptions = {
    group_delimiter: choices.groupDelimiter,
    remove_group_name: choices.removeGroupName,
    do_not_split_select_multiples: !choices.splitSelectMultiples,
    binary_select_multiples: choices.binarySelectMultiples,
    value_select_multiples: choices.valueSelectMultiples,
    show_choice_labels: choices.showChoiceLabels,
    include_labels: choices.includeLabels,
    include_labels_only: choices.includeLabelsOnly,
    include_hxl: choices.includeHxl,
    include_images: choices.includeImages,
    win_excel_utf8: choices.winExcelUtf8,
    repeat_index_tags: choices.repeatIndexTags,
    language: choices.language.trim(),
    query: choices.query.trim(),
    start: exportDate(choices.start),
    end: exportDate(choices.end),
  };
  // Left out, forms with review enabled export the review columns anyway.
  if (choices.includeReviews) options['include_reviews'] = true;
  return options;
}
