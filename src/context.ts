import type { SessionStore } from './auth/sessions.js';
import type { KeyValueStore, ObjectStore } from './storage/types.js';
import type { Lifecycle } from './lifecycle.js';
import type { Outbox } from './mail/outbox.js';

/**
 * What every route module sees of the service: the stores, the sessions and the request machinery.
 * Declared here, in a leaf module, so a route module depends on this interface and never on the code
 * that assembles the service (`service-context.ts`, `core.ts`). It knows no feature: each feature
 * folder declares what it adds in its own `context.ts` (`AuthContext`, `MacrosContext`, and in
 * `objects/` `ReadContext`, `ModelContext`, `WriteContext`, `ObjectsContext`), and a module asks for
 * exactly the context it uses.
 */
/** What `onError` is told of where an error happened. */
export interface ErrorContext {
  /** The `X-Request-Id` of the request it happened in (or after, for a mail sent after the answer). */
  requestId?: string;
}

export interface ServiceContext {
  readonly store: ObjectStore;
  readonly kv: KeyValueStore;
  readonly sessions: SessionStore;
  /** `databaseName` in login answers. */
  readonly databaseName: string;
  /** Classes the object endpoints never serve. */
  readonly internalClasses: ReadonlySet<string>;
  /** Largest accepted request body, in bytes. */
  readonly maxBodyBytes: number;
  now(): number;
  /** Throws `100` unless the headers carry an accepted `appkey`. */
  checkAppKey(headers: Headers): void;
  /** Reports an unexpected error (answered as a bare `500`), with the id of the request it happened in. */
  onError(error: unknown, about?: ErrorContext): void;
  /** Mail leaving the service (password resets, macros' `ctx.mail`); `options` undefined without the `mail` option. */
  readonly mail: Outbox;
  /** Live, ready or draining; long-lived answers end when `lifecycle.closing` aborts. */
  readonly lifecycle: Lifecycle;
}
