// One delivery: a record POSTed to a service's URL, signed when the service has a secret.
import { createHmac } from 'node:crypto';
import type { Dispatcher } from 'undici';
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
  body: string;
  contentType: string;
  event: DeliveryEvent;
  /** The queue entry's id: the same on every attempt, so receivers can drop repeats. */
  deliveryId: number;
  secret: string | null;
  nowMs: number;
}

/** Where a service's deliveries go: its URL taken apart once for all of them. */
export interface DeliveryTarget {
  origin: string;
  /** Path and query; a fragment is never sent. */
  path: string;
}

export function deliveryTarget(url: string): DeliveryTarget {
  const parsed = new URL(url);
  return { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
}

export interface DeliveryResult {
  ok: boolean;
  status: number | null;
  error: string | null;
}

const MAX_ERROR_LENGTH = 500;
const USER_AGENT = 'Gather REST service';

function failure(error: unknown): DeliveryResult {
  const message = error instanceof Error ? error.message : String(error);
  return { ok: false, status: null, error: message.slice(0, MAX_ERROR_LENGTH) || 'The request failed.' };
}

/**
 * Takes one answer: its status, its body read and dropped. Dispatched as is (not through
 * undici's request()), a delivery makes no response stream, no URL parse and no abort listener:
 * a dispatcher stopping destroys its connections, which fails what is in flight.
 */
class AnswerHandler implements Dispatcher.DispatchHandler {
  #status: number | null = null;
  readonly #settle: (result: DeliveryResult) => void;

  constructor(settle: (result: DeliveryResult) => void) {
    this.#settle = settle;
  }

  // Its presence marks the handler as one of undici's current interface.
  onRequestStart(): void {}

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    this.#status = statusCode;
  }

  onResponseEnd(): void {
    const status = this.#status ?? 0;
    this.#settle(status >= 200 && status < 300 ? { ok: true, status, error: null } : { ok: false, status, error: `The service answered ${status}.` });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#settle(failure(error));
  }
}

/** POSTs once; never throws. Any 2xx is a delivery; redirects are not followed. */
export function postDelivery(dispatcher: Dispatcher, target: DeliveryTarget, delivery: Delivery): Promise<DeliveryResult> {
  const headers = ['content-type', delivery.contentType, 'user-agent', USER_AGENT, 'x-gather-event', delivery.event, 'x-gather-delivery', String(delivery.deliveryId)];
  if (delivery.secret !== null) {
    const timestamp = String(Math.floor(delivery.nowMs / 1000));
    headers.push(TIMESTAMP_HEADER, timestamp, SIGNATURE_HEADER, signDelivery(delivery.secret, timestamp, delivery.body));
  }
  return new Promise((resolve) => {
    try {
      // Idempotent and not blocking, so that undici pipelines deliveries on a connection: each is
      // at least once already (a receiver drops a repeat by X-Gather-Delivery), and a request
      // undici sends again after a connection closed under it is one more such repeat.
      dispatcher.dispatch({ origin: target.origin, path: target.path, method: 'POST', headers, body: delivery.body, idempotent: true, blocking: false }, new AnswerHandler(resolve));
    } catch (error) {
      resolve(failure(error));
    }
  });
}
