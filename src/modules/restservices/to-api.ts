// A REST service as the API shows it: onadata's fields, then Gather's (the secret never leaves).
import type { RestServiceRow } from './repository.ts';

const iso = (value: Date | null): string | null => (value === null ? null : value.toISOString());

export function restServiceToApi(row: RestServiceRow, pending: number): Record<string, unknown> {
  return {
    id: row.id,
    xform: row.form_id,
    name: row.name,
    service_url: row.service_url,
    date_created: iso(row.date_created),
    date_modified: iso(row.date_modified),
    active: true,
    inactive_reason: '',
    send_updates: row.send_updates,
    has_secret: row.secret_sealed !== null,
    delivery: {
      pending,
      delivered: Number(row.delivered_count),
      dropped: Number(row.dropped_count),
      last_status: row.last_status,
      last_error: row.last_error,
      attempts: row.attempts,
      last_attempt: iso(row.last_attempt_at),
      last_delivery: iso(row.last_delivery_at),
      retry_after: iso(row.retry_after),
    },
  };
}
