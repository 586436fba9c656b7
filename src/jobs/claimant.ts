// Who holds a job's claim: `host:processTag:token` in jobs.locked_by. The process tag
// (platform/process-identity.ts) lets a process that starts on the same host tell a claim whose
// process is gone (killed, crashed) from a live sibling's, and take the job back at once instead
// of waiting out its lease. Claims of other hosts cannot be checked and wait out their lease.
import { hostname } from 'node:os';
import { bootId, ownProcessTag, processIsGone } from '../platform/process-identity.ts';

export function claimantName(): string {
  return `${hostname()}:${ownProcessTag()}`;
}

/** The claim's host and process tag; the host may itself hold colons (an IPv6 literal, in theory). */
function parseClaim(lockedBy: string): { host: string; tag: string } | undefined {
  const parts = lockedBy.split(':');
  if (parts.length < 3) return undefined;
  return { host: parts.slice(0, -2).join(':'), tag: parts[parts.length - 2] ?? '' };
}

/**
 * True when the claim was made on this host, since its last boot, by a process that has ended. A
 * claim naming another boot is left to its lease: two machines that share a host name (several
 * called "localhost" on one database) differ only there, and this one's pids say nothing of the
 * other's processes.
 */
export function claimIsAbandoned(lockedBy: string): boolean {
  const claim = parseClaim(lockedBy);
  if (!claim || claim.host !== hostname() || claim.tag === ownProcessTag()) return false;
  const claimBoot = /^\d+\.([0-9a-f]+)\.\d+$/.exec(claim.tag)?.[1];
  if (claimBoot !== undefined && claimBoot !== bootId()) return false;
  return processIsGone(claim.tag);
}

/** The prefix every claim of this host starts with. */
export function hostClaimPrefix(): string {
  return `${hostname()}:`;
}
