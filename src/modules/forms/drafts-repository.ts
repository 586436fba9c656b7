// SQL for survey_preview drafts.
import type { DbOrTx } from '../../platform/db.ts';

export async function insertSurveyDraft(db: DbOrTx, draft: { user_id: number; unique_string: string; body: string; created_at: Date }): Promise<void> {
  await db.insertInto('survey_drafts').values(draft).execute();
}

export async function findSurveyDraft(db: DbOrTx, userId: number, uniqueString: string): Promise<{ body: string; unique_string: string } | undefined> {
  return db
    .selectFrom('survey_drafts')
    .select(['body', 'unique_string'])
    .where('user_id', '=', userId)
    .where('unique_string', '=', uniqueString)
    .executeTakeFirst();
}
