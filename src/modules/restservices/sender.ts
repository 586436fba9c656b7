// One delivery: a record POSTed to a service's URL, signed when the service has a secret.
import { createHmac } from 'node:crypto';
import { request, type Dispatcher } from 'undici';
import type { DeliveryEvent } from './repository.ts';

export const SIGNATURE_HEADER = 'x-gather-signature';
export const TIMESTAMP_HEADER = 'x-gather-timestamp';

/**
 * The signature receivers check: `sha256=` and the hex HMAC-SHA256, keyed with the service's
 * secret, of the X-Gather-Timestamp value, a dot, and the body's bytes. The timestamp (Unix
 * seconds) lets a receiver refuse a replayed old delivery.
 */
export function signDelivery(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
}

export interface Delivery {
  url: string;
  body: string;
  contentType: string;
  event: DeliveryEvent;
  /** The queue entry's id: the same on every attempt, so receivers can drop repeats. */
  deliveryId: number;
  secret: string | null;
  nowMs: number;
}

export interface DeliveryResult {
  ok: boolean;
  status: number | null;
  error: string | null;
}

const MAX_ERROR_LENGTH = 500;

/** POSTs once; never throws. Any 2xx is a delivery; redirects are not followed. */
export async function postDelivery(dispatcher: Dispatcher, delivery: Delivery, signal: AbortSignal): Promise<DeliveryResult> {
  const headers: Record<string, string> = {
    'content-type': delivery.contentType,
    'user-agent': 'Gather REST service',
    'x-gather-event': delivery.event,
    'x-gather-delivery': String(delivery.deliveryId),
  };
  if (delivery.secret !== null) {
    const timestamp = String(Math.floor(delivery.nowMs / 1000));
    headers[TIMESTAMP_HEADER] = timestamp;
    headers[SIGNATURE_HEADER] = signDelivery(delivery.secret, timestamp, delivery.body);
  }
  try {
    const response = await request(delivery.url, { dispatcher, method: 'POST', headers, body: delivery.body, signal });
    await response.body.dump();
    const status = response.statusCode;
    if (status >= 200 && status < 300) return { ok: true, status, error: null };
    return { ok: false, status, error: `The service answered ${status}.` };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, status: null, error: message.slice(0, MAX_ERROR_LENGTH) || 'The request failed.' };
  }
}
