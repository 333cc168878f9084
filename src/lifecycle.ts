/**
 * A service's life for orchestrators (issue 29): live from the start; ready while its stores answer
 * and it is not draining; draining once the host calls `drain()` (readiness then answers `503`, so a
 * load balancer stops sending new requests, while requests in flight finish). Long-lived answers
 * (event streams) watch `closing` and end with a hint to reconnect elsewhere.
 */
export class Lifecycle {
  readonly #closing = new AbortController();

  /** Aborted when draining starts. */
  get closing(): AbortSignal {
    return this.#closing.signal;
  }

  get draining(): boolean {
    return this.#closing.signal.aborted;
  }

  /** Starts draining (idempotent). */
  drain(): void {
    if (!this.draining) this.#closing.abort(new Error('the service is draining'));
  }
}
