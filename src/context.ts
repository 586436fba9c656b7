// What every service call receives: the application's dependencies plus who is acting.
import type { Config } from './config.ts';
import type { Db } from './platform/db.ts';
import type { Clock } from './platform/clock.ts';
import type { Sealer } from './platform/secrets.ts';
import type { Principal } from './access/principal.ts';
import type { AuthMemory, MatchMemory, SubmissionTargetMemory } from './caches.ts';
import type { JobWakeup } from './jobs/wakeup.ts';
import type { Mailer } from './platform/mailer.ts';
import type { ResponseCache } from './http/response-cache.ts';

export interface AppDeps {
  readonly config: Config;
  readonly db: Db;
  readonly clock: Clock;
  readonly sealer: Sealer;
  readonly authCache: AuthMemory;
  readonly mailer: Mailer;
  /** Ordered ids matched by recent data queries, per form data version. */
  readonly matchCache: MatchMemory;
  /** Rendered list responses, reused briefly; cleared by every write of this process. */
  readonly responseCache: ResponseCache;
  /** Who may submit to which form, remembered per device and re-checked by each insert. */
  readonly submissionTargets: SubmissionTargetMemory;
  /** After committing a transaction that enqueued a job: `deps.jobWakeup?.wake()` starts it now. */
  readonly jobWakeup?: JobWakeup;
}

export interface RequestContext extends AppDeps {
  readonly actor: Principal;
  /** Absolute base for links in responses, e.g. http://127.0.0.1:8000 */
  readonly baseUrl: string;
  /** Client address, for login throttling. */
  readonly ip: string;
  /** The WWW-Authenticate challenge for a 401 on this request. */
  readonly challenge: string;
}
