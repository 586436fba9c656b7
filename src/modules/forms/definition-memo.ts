// Values made from a published form's definition (the form model submissions are parsed with, the
// OData feed's model), kept per form and definition. The definition's hash changes with every
// change of it, so a kept value is never stale; it only saves reading the definition and building
// the value again on every request.
import type { DbOrTx } from '../../platform/db.ts';
import { findFormDefinition } from './repository.ts';

/** The form's id and the hash of its definition, as every loaded form row carries them. */
export interface DefinitionKey {
  readonly id: number;
  readonly hash: string;
}

/**
 * `make` applied to a form's stored definition (its JSON), once per form and definition in this
 * process. At most `limit` values are kept, all forgotten when it is reached: forms replaced many
 * times over in a long-lived process must not grow the memo without end.
 */
export function perDefinition<T>(make: (json: Record<string, unknown>) => T, limit: number): (db: DbOrTx, form: DefinitionKey) => Promise<T> {
  const kept = new Map<string, T>();
  return async (db, form) => {
    const key = `${form.id}:${form.hash}`;
    const found = kept.get(key);
    if (found !== undefined) return found;
    const value = make((await findFormDefinition(db, form.id)).json);
    if (kept.size >= limit) kept.clear();
    kept.set(key, value);
    return value;
  };
}
