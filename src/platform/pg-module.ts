// The pg driver, loaded on first use: a server on the embedded database never needs it, and
// loading it at start held its module code and objects for good (bench/RESULTS.md, 2026-11-28).
import type pg from 'pg';

let loaded: Promise<typeof pg> | undefined;

/** The pg module, with int8 (count(*), sums) and numeric read as JS numbers, as PGlite reads them. */
export function loadPg(): Promise<typeof pg> {
  loaded ??= import('pg').then(({ default: driver }) => {
    driver.types.setTypeParser(20, (value) => Number(value));
    driver.types.setTypeParser(1700, (value) => Number(value));
    return driver;
  });
  return loaded;
}
