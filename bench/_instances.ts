// Submissions of the bench form (../shared/bench): the template with its {{placeholders}} filled.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './_server.ts';

const TEMPLATE = readFileSync(join(repoRoot, '../shared/bench/instance-template.xml'), 'utf8');
export const BENCH_FORM = join(repoRoot, '../shared/bench/bench_household.xlsx');

const pick = <T>(items: readonly T[], n: number): T => items[n % items.length] as T;

/** The n-th submission: values vary with n; instanceID is fresh unless given. */
export function benchInstance(n: number, instanceId = `uuid:${randomUUID()}`): string {
  const day = String((n % 28) + 1).padStart(2, '0');
  const values: Record<string, string> = {
    start: `2026-11-${day}T08:00:00.000+03:00`,
    end: `2026-11-${day}T08:20:00.000+03:00`,
    today: `2026-11-${day}`,
    deviceid: `collect:${1000 + (n % 50)}`,
    enumerator: pick(['amina', 'brian', 'chen', 'dora'], n),
    resp_name: `Respondent ${n}`,
    resp_age: String(18 + (n % 60)),
    resp_gender: pick(['male', 'female'], n),
    resp_phone: `+2547${String(n).padStart(8, '0')}`,
    resp_education: pick(['none', 'primary', 'secondary', 'tertiary'], n),
    resp_dob: `19${50 + (n % 50)}-0${(n % 9) + 1}-1${n % 10}`,
    hh_size: String(1 + (n % 12)),
    hh_income: String(1000 + (n % 997) * 13.5),
    location: `${(-1 - (n % 100) / 1000).toFixed(6)} ${(36.8 + (n % 100) / 1000).toFixed(6)} 1650 5`,
    water_source: pick(['piped', 'well', 'river', 'rain'], n),
    assets: pick(['radio tv', 'phone', 'radio phone bicycle', 'tv fridge'], n),
    roof_material: pick(['iron', 'thatch', 'tiles'], n),
    rooms: String(1 + (n % 6)),
    electricity: pick(['yes', 'no'], n),
    toilet: pick(['flush', 'pit', 'none'], n),
    food_security_score: String(n % 10),
    visit_time: `${String(8 + (n % 10)).padStart(2, '0')}:15:00.000+03:00`,
    notes: `Visit ${n} & notes <ok>`.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'),
    satisfaction: pick(['1', '2', '3', '4', '5'], n),
    comments: 'none',
    instanceID: instanceId,
  };
  for (const i of [1, 2, 3]) {
    values[`m${i}_name`] = `Member ${n}-${i}`;
    values[`m${i}_age`] = String((n + i * 7) % 80);
    values[`m${i}_sex`] = pick(['male', 'female'], n + i);
    values[`m${i}_school`] = pick(['yes', 'no'], n + i);
    values[`m${i}_occupation`] = pick(['farmer', 'teacher', 'student', 'trader'], n + i);
  }
  return TEMPLATE.replace(/\{\{(\w+)\}\}/g, (_m, key: string) => values[key] ?? '');
}

export function submissionBody(xml: string): { body: Buffer; contentType: string } {
  const boundary = '----gatherbench7d2f';
  const body = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="xml_submission_file"; filename="submission.xml"\r\nContent-Type: text/xml\r\n\r\n${xml}\r\n--${boundary}--\r\n`,
  );
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Publishes the bench form for the account of `authorization` (a Token or Basic header value). */
export async function publishBenchForm(baseUrl: string, authorization: string): Promise<number> {
  const form = new FormData();
  form.append('xls_file', new Blob([readFileSync(BENCH_FORM)]), 'bench_household.xlsx');
  const res = await fetch(`${baseUrl}/api/v1/forms`, { method: 'POST', headers: { authorization }, body: form });
  if (res.status !== 201) throw new Error(`publishing the bench form failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { formid: number }).formid;
}

/** The bench form of a kept database (published when missing): its id, how many records it holds and its project's URL. */
export async function keptBenchForm(baseUrl: string, authorization: string): Promise<{ formId: number; stored: number; project: string }> {
  const headers = { authorization };
  const listed = (await (await fetch(`${baseUrl}/api/v1/forms`, { headers })).json()) as Array<{ formid: number; id_string: string }>;
  const formId = listed.find((f) => f.id_string === 'bench_household')?.formid ?? (await publishBenchForm(baseUrl, authorization));
  const form = (await (await fetch(`${baseUrl}/api/v1/forms/${formId}`, { headers })).json()) as { num_of_submissions: number; project: string };
  return { formId, stored: form.num_of_submissions, project: form.project };
}
