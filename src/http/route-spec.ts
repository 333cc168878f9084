/**
 * A route's contract without its handler (issue 52): method, path and the valibot schemas of its
 * input and answer. The folders declare them in modules that import only valibot and the schema
 * modules; the server's route modules attach a handler to the very same declaration (`route({
 * ...SPEC, handler })`), and the typed client reads its types from them (src/contract.ts), so the
 * client's declarations carry no service context and no handler.
 */
import type { ErrorMessage, GenericSchema, ObjectEntries, ObjectIssue, ObjectSchema, StrictObjectIssue, StrictObjectSchema } from 'valibot';

/** A route's method. */
export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/**
 * The query parameters a route reads: each entry a string schema, an empty value counting as absent.
 * A strict object refuses parameters it does not name (`400`, its message).
 */
export type QuerySchema = ObjectSchema<ObjectEntries, ErrorMessage<ObjectIssue> | undefined> | StrictObjectSchema<ObjectEntries, ErrorMessage<StrictObjectIssue> | undefined>;
/** The path parameters of a route: each entry a string schema (its `v.description` says what it is). */
export type ParamsSchema = ObjectSchema<ObjectEntries, undefined>;

/** What the client and the server share of a route: its method, path and schemas. */
export interface RouteSpec<
  P extends ParamsSchema | undefined = ParamsSchema | undefined,
  Q extends QuerySchema | undefined = QuerySchema | undefined,
  B extends GenericSchema | undefined = GenericSchema | undefined,
  A extends GenericSchema | undefined = GenericSchema | undefined,
  M extends Method = Method,
  Path extends string = string,
> {
  method: M;
  /** itty-router pattern relative to the service root, e.g. `/v1/object/:id`. */
  path: Path;
  /** The path parameters, each a string schema checked before the handler (default: taken as they come). */
  params?: P;
  /** The query parameters, each a string schema: each name's first value, an empty value counting as absent. */
  query?: Q;
  /**
   * The JSON body (`v.optional(...)` when it may be absent): read (`415` unless JSON), parsed and
   * checked before the handler. Without it the body is not read (a route that takes none ignores one).
   */
  body?: B;
  /**
   * What `data` of the success envelope holds, as a valibot schema: the OpenAPI document's schema of
   * the answer (converted with `@valibot/to-json-schema`; the shared ones of openapi/schemas.ts become
   * `$ref`s). The test suite validates the demo's real answers against it.
   */
  answerSchema?: A;
}

/** Declares a route's contract, keeping its literal method, path and schemas. */
export function spec<
  const M extends Method,
  const Path extends string,
  P extends ParamsSchema | undefined = undefined,
  Q extends QuerySchema | undefined = undefined,
  B extends GenericSchema | undefined = undefined,
  A extends GenericSchema | undefined = undefined,
>(declaration: RouteSpec<P, Q, B, A, M, Path>): RouteSpec<P, Q, B, A, M, Path> {
  return declaration;
}

/** The contracts of a module's routes, by name. */
export type SpecsOf<T> = T[keyof T];
