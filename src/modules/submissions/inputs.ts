// Reading the data API's bodies into the services' typed inputs. Nothing here throws: the services
// refuse what is wrong after their access checks, as onadata does.
import { asPayload } from '../../http/payload.ts';
import { parseTags } from '../shared/members.ts';
import type { DeleteRecordsInput } from './data.ts';

/** POST /api/v1/data/{pk}/{dataid}/labels: comma- or space-separated `tags`. */
export function labelsInput(body: unknown): string[] {
  return parseTags(asPayload(body)['tags']);
}

/** DELETE /api/v1/data/{pk}: `instance_ids`, `delete_all`, `permanent_delete`, in the query or the body (the body wins). */
export function deleteRecordsInput(query: unknown, body: unknown): DeleteRecordsInput {
  const payload = { ...asPayload(query), ...asPayload(body) };
  const truthy = (value: unknown): boolean => typeof value === 'boolean' ? value : typeof value === 'string' && value.toLowerCase() === 'true';
  const rawIds = payload['instance_ids'];
  const listed = Array.isArray(rawIds) ? rawIds.map(String) : typeof rawIds === 'string' ? rawIds.split(',') : typeof rawIds === 'number' ? [String(rawIds)] : [];
  return {
    permanent: truthy(payload['permanent_delete']),
    all: truthy(payload['delete_all']),
    ids: listed.map((id) => id.trim()).filter(Boolean),
  };
}
