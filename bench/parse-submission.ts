// `npm run bench -- parse-submission [COUNT]`: submission XML → record speed.
// Parses the shared benchmark instance (../shared/bench/instance-template.xml,
// placeholders filled with varied values) against bench_household.xlsx COUNT
// times (100,000 by default) and prints parses per second.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { BENCH_FORM, benchInstance } from './_instances.ts';
import { convert } from '../packages/xlsform/src/index.ts';
import { buildFormModel } from '../src/lib/form-model/model.ts';
import { parseInstance } from '../src/lib/instance-xml.ts';

const VARIANTS = 1000;

export async function main(args: string[]): Promise<void> {
  const count = Number(args[0] ?? 100_000) || 100_000;
  const form = convert(readFileSync(BENCH_FORM), { fileName: 'bench_household.xlsx' });
  if (!form.ok) throw new Error(form.errors.map((e) => e.message).join('; '));
  const schema = buildFormModel(form.formJson);
  const instances = Array.from({ length: VARIANTS }, (_, i) => Buffer.from(benchInstance(i)));
  const options = { maxBytes: 10_000_000 };
  const check = parseInstance(instances[0] ?? '', schema, options);
  if (!check.ok) throw new Error(`${check.error} ${check.detail ?? ''}`);

  for (let i = 0; i < 5000; i++) parseInstance(instances[i % VARIANTS] ?? '', schema, options); // warm-up
  let bytes = 0;
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const instance = instances[i % VARIANTS] ?? Buffer.alloc(0);
    bytes += instance.byteLength;
    if (!parseInstance(instance, schema, options).ok) throw new Error(`parse ${i} failed`);
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`parse-submission: ${count} instances (${Math.round(bytes / count)} bytes each, 3 repeat entries) in ${seconds.toFixed(2)} s`);
  console.log(`  ${Math.round(count / seconds)} parses/s, ${((seconds * 1e6) / count).toFixed(1)} µs per parse, ${(bytes / seconds / 1e6).toFixed(1)} MB/s`);
}
