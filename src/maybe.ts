/**
 * Values that are at hand or on their way. The read path (PROTOCOL.md 6.1) runs from route to bytes
 * without a promise when every answer it needs is at hand (the memory stores, the session cache), and
 * waits only where a store really does: each step that may wait answers a `MaybePromise`, and `andThen`
 * goes on at once with a value, after the promise with a promise.
 */
export type MaybePromise<T> = T | Promise<T>;

/** Whether `value` is on its way (any thenable: a host's store or hook may answer its own promises). */
export function isPending<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** `next(value)`, at once when `value` is at hand, else once it arrives. */
// not named `then`: a module exporting `then` is a thenable to `import()`
export function andThen<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return isPending(value) ? value.then(next) : next(value);
}

/** Every value of `values`, as an array at hand when each is, else a promise of them all. */
export function all<T>(values: readonly MaybePromise<T>[]): MaybePromise<T[]> {
  for (const value of values) if (isPending(value)) return Promise.all(values);
  return values as T[];
}
