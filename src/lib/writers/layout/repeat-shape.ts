// How many occurrences each repeat needs in a flat layout: the largest count among the
// exported records, per position of the enclosing repeats (`kids[2]/immunization` can need
// more blocks than `kids[1]/immunization`). Filled from the counts stored with each record
// (one SQL aggregate, src/modules/exports/repository.ts) or, in tests, by observing records.
import { parseRepeatCountKey, repeatCountKey, repeatCountsOf } from './repeat-counts.ts';
import type { ExportRecord } from './types.ts';

export class RepeatShape {
  private readonly counts = new Map<string, Map<string, number>>();

  /** Records that `count` occurrences of `repeatPath` were seen inside the enclosing items at `indices` (1-based). */
  private note(repeatPath: string, indices: readonly number[], count: number): void {
    let byParent = this.counts.get(repeatPath);
    if (!byParent) this.counts.set(repeatPath, (byParent = new Map()));
    const key = indices.join(',');
    if (count > (byParent.get(key) ?? 0)) byParent.set(key, count);
  }

  /** Records a count as repeat-counts.ts keys it (`kids/shots 2`). */
  noteKey(key: string, count: number): void {
    const { path, indices } = parseRepeatCountKey(key);
    this.note(path, indices, count);
  }

  /** The number of blocks for `repeatPath` inside the enclosing items at `indices`. */
  max(repeatPath: string, indices: readonly number[]): number {
    return this.counts.get(repeatPath)?.get(indices.join(',')) ?? 0;
  }

  /** The most occurrences of `repeatPath` inside any one enclosing item (or record). */
  largest(repeatPath: string): number {
    let most = 0;
    for (const count of this.counts.get(repeatPath)?.values() ?? []) most = Math.max(most, count);
    return most;
  }

  /** Every count noted, keyed as noteKey takes them: the shape can be rebuilt from them elsewhere (another thread). */
  keyedCounts(): Array<[string, number]> {
    return [...this.counts].flatMap(([path, byParent]) => [...byParent].map(([position, count]): [string, number] => [repeatCountKey(path, position), count]));
  }

  /** Counts the repeats of one record, by the rule its stored counts follow. */
  observe(record: ExportRecord): void {
    const counts = JSON.parse(repeatCountsOf(record)) as Record<string, number>;
    for (const [key, count] of Object.entries(counts)) this.noteKey(key, count);
  }
}
