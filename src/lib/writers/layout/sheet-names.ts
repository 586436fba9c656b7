// Excel sheet names: at most 31 characters, none of `[ ] : * ? / \`, not blank, unique
// without regard to case. Clashes get a numeric suffix inside the 31 characters, as
// onadata's get_valid_sheet_name does.
export const SHEET_NAME_MAX = 31;

export function validSheetName(desired: string, taken: Iterable<string>): string {
  const used = new Set([...taken].map((n) => n.toLowerCase()));
  let base = desired.replace(/[[\]:*?/\\]/g, '_').replace(/^'+|'+$/g, '');
  if (base.trim() === '') base = 'Sheet';
  base = [...base].slice(0, SHEET_NAME_MAX).join('');
  if (!used.has(base.toLowerCase())) return base;
  for (let n = 1; ; n++) {
    const suffix = String(n);
    const candidate = [...base].slice(0, SHEET_NAME_MAX - suffix.length).join('') + suffix;
    if (!used.has(candidate.toLowerCase())) return candidate;
  }
}

/** Sheet names for section names (paths), in order: `/` becomes `_`, then validSheetName. */
export function sheetNames(sectionNames: readonly string[]): string[] {
  const out: string[] = [];
  for (const name of sectionNames) out.push(validSheetName(name.replace(/\//g, '_'), out));
  return out;
}
