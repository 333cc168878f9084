/**
 * Runs tasks one after another per key. The replay window is updated with a compare-and-set, which
 * is atomic also across processes; queueing the updates of one session inside this process first
 * keeps a burst of concurrent requests from turning into a storm of failed compare-and-sets.
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key);
    const result = previous ? previous.then(task) : task();
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }
}
