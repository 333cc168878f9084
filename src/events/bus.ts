import type { BusMessage, EventBus } from './types.js';

/** The bus of a single instance: messages go to this process's listeners, in publish order. */
export class InProcessBus implements EventBus {
  readonly #listeners = new Set<(message: BusMessage) => void>();

  async publish(message: BusMessage): Promise<void> {
    for (const listener of this.#listeners) listener(message);
  }

  subscribe(listener: (message: BusMessage) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }
}
