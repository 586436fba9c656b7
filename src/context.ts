// What every service call receives: the application's dependencies plus who is acting.
import type { Config } from './config.ts';
import type { Db } from './platform/db.ts';
import type { Clock } from './platform/clock.ts';
import type { Sealer } from './platform/secrets.ts';
import type { Principal } from './access/principal.ts';
import type { AuthCache } from './modules/auth/auth-cache.ts';

export interface AppDeps {
  readonly config: Config;
  readonly db: Db;
  readonly clock: Clock;
  readonly sealer: Sealer;
  readonly authCache: AuthCache;
}

export interface RequestContext extends AppDeps {
  readonly actor: Principal;
  /** Absolute base for links in responses, e.g. http://127.0.0.1:8000 */
  readonly baseUrl: string;
  /** Client address, for login throttling. */
  readonly ip: string;
}
