// Who may submit to which form, remembered per process (deps.submissionTargets) so that a stream of submissions
// from one device costs no lookups (owner, form, role) before its insert. Nothing here is trusted
// blindly: the insert re-checks every fact a remembered decision rests on in the same statement
// (repo.insertInstancesIfStillAllowed), and a failed check sends the submission down the full path
// again. So a form deactivated, a role revoked or an account set to require auth, by this process
// or any other, takes effect at the next submission.
import type { SubmissionAccess, SubmissionTargetMemory } from '../../caches.ts';

export type { SubmissionAccess };

interface Entry {
  access: SubmissionAccess;
  expiresAt: number;
}

const MAX_ENTRIES = 10_000;
/** Entries are re-checked at every use; the age limit only bounds how long a rare case (a new
 * form whose formhub uuid an old device still sends) can go unnoticed. */
const MAX_AGE_MS = 60_000;

export class SubmissionTargets implements SubmissionTargetMemory {
  readonly #entries = new Map<string, Entry>();

  static key(ownerless: boolean, username: string | undefined, idString: string | undefined, formhubUuid: string | undefined, actorId: number | null): string {
    return `${ownerless ? 1 : 0}\u0000${username ?? ''}\u0000${idString ?? ''}\u0000${formhubUuid ?? ''}\u0000${actorId ?? ''}`;
  }

  get(key: string, now: number): SubmissionAccess | undefined {
    const entry = this.#entries.get(key);
    if (entry && entry.expiresAt > now) return entry.access;
    if (entry) this.#entries.delete(key);
    return undefined;
  }

  set(key: string, access: SubmissionAccess, now: number): void {
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
    this.#entries.set(key, { access, expiresAt: now + MAX_AGE_MS });
  }

  forget(key: string): void {
    this.#entries.delete(key);
  }
}
