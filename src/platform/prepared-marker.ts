// Its own module so that a server on PostgreSQL (db.ts) reads it without loading PGlite's code.

/** Marks a statement kept prepared under a name, on PGlite (pglite-statements.ts) and PostgreSQL (db.ts). */
export const PREPARED_MARKER = /^\/\* prepared:([\w-]+) \*\//;

/** The text that starts a statement to mark it kept prepared as `name` (letters, digits, `_`, `-`). */
export function preparedMarker(name: string): string {
  if (!/^[\w-]+$/.test(name)) throw new Error(`not a prepared statement name: ${name}`);
  return `/* prepared:${name} */ `;
}
