// `npm run bench -- parse-submission [COUNT]`: submission XML → record speed.
// Parses the shared benchmark instance (../shared/bench/instance-template.xml,
// placeholders filled with varied values) against bench_household.xlsx COUNT
// times (100,000 by default) and prints parses per second.
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { convert } from '../packages/xlsform/src/index.ts';
import { buildFormSchema } from '../src/modules/submissions/form-schema.ts';
import { parseInstance } from '../src/modules/submissions/instance-xml.ts';

const benchDir = resolve(dirname(fileURLToPath(import.meta.url)), '../../shared/bench');
const VARIANTS = 1000;

const pick = <T>(items: readonly T[], i: number): T => items[i % items.length] as T;

/** Placeholder values for the i-th instance: varied, and valid for the form's types. */
function values(i: number): Record<string, string> {
  const minute = String(i % 60).padStart(2, '0');
  const names = ['Amina Njoroge', 'Bruno Silva', 'Chen Wei', 'Dara O\'Neill', 'Esi Mensah', 'Farid Haddad'];
  const out: Record<string, string> = {
    start: `2026-11-19T08:${minute}:00.000+03:00`,
    end: `2026-11-19T09:${minute}:30.000+03:00`,
    today: '2026-11-19',
    deviceid: `collect:${(1e15 + i).toString(36)}`,
    enumerator: pick(['kim', 'lee', 'ana'], i),
    resp_name: pick(names, i),
    resp_age: String(18 + (i % 70)),
    resp_gender: pick(['female', 'male', 'other'], i),
    resp_phone: `+2547${String(10000000 + i).slice(-8)}`,
    resp_education: pick(['none', 'primary', 'secondary', 'tertiary'], i),
    resp_dob: `19${60 + (i % 40)}-0${1 + (i % 9)}-1${i % 10}`,
    hh_size: String(1 + (i % 12)),
    hh_income: (1500 + (i % 997) * 3.25).toFixed(2),
    location: `${(-1.2 - (i % 100) / 1000).toFixed(6)} ${(36.8 + (i % 100) / 1000).toFixed(6)} 1650.0 ${5 + (i % 20)}.0`,
    water_source: pick(['piped', 'borehole', 'well', 'river'], i),
    assets: pick(['radio tv', 'phone', 'bicycle motorbike phone', 'radio tv fridge phone'], i),
    roof_material: pick(['metal', 'thatch', 'tile'], i),
    rooms: String(1 + (i % 6)),
    electricity: pick(['yes', 'no'], i),
    toilet: pick(['flush', 'pit', 'none'], i),
    food_security_score: String(i % 10),
    visit_time: `09:${minute}:00.000+03:00`,
    notes: i % 3 === 0 ? 'Visited twice; gate & dog <careful>' : 'ok',
    satisfaction: String(1 + (i % 5)),
    comments: pick(['', 'Good interview', 'Respondent was busy'], i),
    instanceID: `uuid:${randomUUID()}`,
  };
  for (const m of [1, 2, 3]) {
    out[`m${m}_name`] = pick(names, i + m);
    out[`m${m}_age`] = String((i * m) % 90);
    out[`m${m}_sex`] = pick(['female', 'male'], i + m);
    out[`m${m}_school`] = pick(['yes', 'no'], i + m);
    out[`m${m}_occupation`] = pick(['farmer', 'student', 'trader', ''], i + m);
  }
  return out;
}

const escapeXml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export async function main(args: string[]): Promise<void> {
  const count = Number(args[0] ?? 100_000) || 100_000;
  const form = convert(readFileSync(join(benchDir, 'bench_household.xlsx')), { fileName: 'bench_household.xlsx' });
  if (!form.ok) throw new Error(form.errors.map((e) => e.message).join('; '));
  const schema = buildFormSchema(form.formJson);
  const template = readFileSync(join(benchDir, 'instance-template.xml'), 'utf8');
  const instances = Array.from({ length: VARIANTS }, (_, i) => {
    const filled = values(i);
    return Buffer.from(template.replace(/\{\{(\w+)\}\}/g, (_m, key: string) => escapeXml(filled[key] ?? '')));
  });
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
