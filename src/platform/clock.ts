export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** onadata's timestamp format: ISO 8601 UTC with microseconds and Z. */
export function isoTimestamp(date: Date): string {
  return `${date.toISOString().slice(0, -1)}000Z`;
}
