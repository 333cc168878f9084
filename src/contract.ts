/**
 * The route table's type, for the typed client (issue 52): each folder's routes with their literal
 * method, path and schemas, and what a call of one sends and gets, from its declaration. Types only:
 * the client imports this module with `import type`, so the browser bundle carries no server code.
 */
import type { GenericSchema, InferInput, InferOutput } from 'valibot';
import type { ACCOUNTS, PASSKEYS } from './accounts/contract.js';
import type { ADMIN } from './admin/contract.js';
import type { LICENCE, LOGIN } from './auth/login-contract.js';
import type { Method, SpecsOf } from './http/route-spec.js';
import type { MODEL_CLASSES, MODEL_STRUCTURE } from './objects/model/contract.js';
import type { BULK, CREATE_CHECK, LOCK, RECYCLE, WRITE } from './objects/write/write-contract.js';
import type { CLASSES, READ } from './objects/read-contract.js';
import type { SAVED_QUERIES } from './saved-queries/contract.js';
import type { TWO_FACTOR } from './auth/two-factor-contract.js';
import type { SECURE } from './secure/contract.js';
import type { MACROS } from './macros/contract.js';
import type { BATCH } from './batch/contract.js';
import type { FILES } from './files/contract.js';
import type { CHECKS } from './checks/contract.js';
import type { V2 } from './v2/contract.js';
import type { EVENTS } from './events/contract.js';
import type { OAUTH } from './oauth/contract.js';

/** The built-in routes the client calls, each with its literal method, path and schemas. */
export type BuiltInRoutes =
  | SpecsOf<typeof LOGIN>
  | SpecsOf<typeof ACCOUNTS>
  | SpecsOf<typeof READ>
  | SpecsOf<typeof CLASSES>
  | SpecsOf<typeof MODEL_CLASSES>
  | SpecsOf<typeof ADMIN>
  | SpecsOf<typeof SAVED_QUERIES>
  | SpecsOf<typeof TWO_FACTOR>
  | SpecsOf<typeof LICENCE>
  | SpecsOf<typeof PASSKEYS>
  | SpecsOf<typeof SECURE>
  | SpecsOf<typeof WRITE>
  | SpecsOf<typeof CREATE_CHECK>
  | SpecsOf<typeof BULK>
  | SpecsOf<typeof RECYCLE>
  | SpecsOf<typeof LOCK>
  | SpecsOf<typeof MACROS>
  | SpecsOf<typeof BATCH>
  | SpecsOf<typeof FILES>
  | SpecsOf<typeof CHECKS>
  | SpecsOf<typeof MODEL_STRUCTURE>
  | SpecsOf<typeof V2>
  | SpecsOf<typeof EVENTS>
  | SpecsOf<typeof OAUTH>;

/** The path patterns of the table's routes of a method, e.g. `'/v1/object/:id'` for `GET`. */
export type PathOf<M extends Method> = Extract<BuiltInRoutes, { method: M }>['path'];

/** The declaration of `M P` (`never` when the table has no such route). */
export type RouteOf<M extends Method, P extends string> = Extract<BuiltInRoutes, { method: M; path: P }>;

// a route that declares no schema (`never` here) takes no body or query (`undefined`) and answers `unknown`
type Input<S> = [S] extends [never] ? undefined : S extends GenericSchema ? InferInput<S> : undefined;
type Output<S> = [S] extends [never] ? unknown : S extends GenericSchema ? InferOutput<S> : unknown;

/** The JSON body of `M P` as sent (`InferInput` of its `body`; `undefined` when it takes none). */
export type BodyOf<M extends Method, P extends string> = Input<NonNullable<RouteOf<M, P>['body']>>;
/** The query of `M P` as sent (`InferInput` of its `query`: strings by name). */
export type QueryOf<M extends Method, P extends string> = Input<NonNullable<RouteOf<M, P>['query']>>;
/** What `data` of the success answer of `M P` holds (`InferOutput` of its `answerSchema`). */
export type AnswerOf<M extends Method, P extends string> = Output<NonNullable<RouteOf<M, P>['answerSchema']>>;
