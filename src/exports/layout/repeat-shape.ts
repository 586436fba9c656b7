// How many occurrences each repeat needs in a flat layout: the largest count among the
// exported records, per position of the enclosing repeats (`kids[2]/immunization` can need
// more blocks than `kids[1]/immunization`). Filled from one SQL aggregate per repeat, or by
// observing records (tests, small exports).
import type { ExportForm } from './form-model.ts';
import type { ExportRecord } from './types.ts';

export class RepeatShape {
  private readonly counts = new Map<string, Map<string, number>>();

  /** Records that `count` occurrences of `repeatPath` were seen inside the enclosing items at `indices` (1-based). */
  note(repeatPath: string, indices: readonly number[], count: number): void {
    let byParent = this.counts.get(repeatPath);
    if (!byParent) this.counts.set(repeatPath, (byParent = new Map()));
    const key = indices.join(',');
    if (count > (byParent.get(key) ?? 0)) byParent.set(key, count);
  }

  /** The number of blocks for `repeatPath` inside the enclosing items at `indices`. */
  max(repeatPath: string, indices: readonly number[]): number {
    return this.counts.get(repeatPath)?.get(indices.join(',')) ?? 0;
  }

  /** Counts the repeats of one record (the in-memory equivalent of the SQL aggregate). */
  observe(form: ExportForm, record: ExportRecord): void {
    const visit = (container: Readonly<Record<string, unknown>>, indices: readonly number[], depth: number): void => {
      for (const repeat of form.repeats) {
        if ((form.repeatAncestors.get(repeat.path)?.length ?? 0) !== depth) continue;
        const ancestors = form.repeatAncestors.get(repeat.path) ?? [];
        const parent = ancestors[ancestors.length - 1];
        if (depth > 0 && parent && !repeat.path.startsWith(`${parent.path}/`)) continue;
        const items = container[repeat.path];
        if (!Array.isArray(items)) continue;
        this.note(repeat.path, indices, items.length);
        items.forEach((item, i) => {
          if (typeof item === 'object' && item !== null && !Array.isArray(item)) {
            visit(item as Record<string, unknown>, [...indices, i + 1], depth + 1);
          }
        });
      }
    };
    visit(record, [], 0);
  }
}
