// A service's connections to its receiver. Deliveries are pipelined (several requests written on
// a connection before its first answer) only to a receiver seen to keep its connections open. One
// that closes a connection after an answer never answers the requests pipelined behind it; undici
// sends them again on a new connection, and a receiver that had read them before closing gets
// them twice or more (bench/RESULTS.md, 2026-11-29 08:02). Such a receiver gets one request a
// connection at a time.
import { guardedAgent, type GuardedAgent } from '../../platform/remote-fetch.ts';

export interface ReceiverConnectionsOptions {
  allowPrivateAddresses: boolean;
  timeoutMs: number;
  /** Deliveries in flight at most: one a connection, or this many over `pipelinedConnections`. */
  parallel: number;
  pipelinedConnections: number;
}

export class ReceiverConnections {
  #oneAtATime: Promise<GuardedAgent> | undefined;
  #pipelined: Promise<GuardedAgent> | undefined;
  #pipelining = false;

  constructor(private readonly options: ReceiverConnectionsOptions) {}

  /** The connections the next burst goes over. */
  current(): Promise<GuardedAgent> {
    const { allowPrivateAddresses, timeoutMs, parallel, pipelinedConnections } = this.options;
    if (this.#pipelining) {
      this.#pipelined ??= guardedAgent({ allowPrivateAddresses, timeoutMs, connections: pipelinedConnections, pipelining: parallel / pipelinedConnections });
      return this.#pipelined;
    }
    this.#oneAtATime ??= guardedAgent({ allowPrivateAddresses, timeoutMs, connections: parallel, pipelining: 1 });
    return this.#oneAtATime;
  }

  /**
   * What a burst of `sent` deliveries showed, `opened` being the connections made while it was
   * out. A burst one request a connection that made none went over connections the receiver kept
   * open: pipelining from the next one. A pipelined burst that made more than the pipelined
   * connections saw them closed under it: one request a connection again (that burst's records
   * may have been sent twice, which delivery at least once allows).
   */
  observe(sent: number, opened: number): void {
    if (!this.#pipelining) this.#pipelining = sent >= 2 && opened === 0;
    else if (opened > this.options.pipelinedConnections) this.#pipelining = false;
  }

  /** Closes every connection; deliveries in flight fail. */
  async destroy(): Promise<void> {
    await Promise.all([this.#oneAtATime, this.#pipelined].map(async (made) => (made ? (await made).dispatcher.destroy() : undefined)));
  }
}
