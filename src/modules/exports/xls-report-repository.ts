// SQL for custom XLS reports: the form metadata entry that names a report template.
import type { DbOrTx } from '../../platform/db.ts';

/** The `data_value` of one live `external_export` entry of the form ("<name>|<template url>"). */
export async function findReportTemplateEntry(db: DbOrTx, formId: number, metadataId: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('form_metadata')
    .select('data_value')
    .where('id', '=', metadataId)
    .where('form_id', '=', formId)
    .where('data_type', '=', 'external_export')
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row?.data_value;
}
