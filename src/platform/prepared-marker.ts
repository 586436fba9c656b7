// Its own module so that a server on PostgreSQL (db.ts) reads it without loading PGlite's code.

/** Marks a statement kept prepared under a name, on PGlite (pglite-statements.ts) and PostgreSQL (db.ts). */
export const PREPARED_MARKER = /^\/\* prepared:([\w-]+) \*\//;
