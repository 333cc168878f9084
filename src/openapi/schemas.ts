/**
 * The answers routes share, as valibot schemas (`Route.answerSchema`). The OpenAPI document turns
 * each into a component (`#/components/schemas/<name>`) that the routes' schemas refer to, and
 * describes `ServedObject` per declared class (PROTOCOL.md 6.8). The test suite validates the demo's
 * real answers against the document, so these cannot drift from what the routes send.
 */
import * as v from 'valibot';
import { ALICE_LOGIN, CLASSES, CUSTOMER, CUSTOMERS, DAVE_TOKEN, REFERENCE, USERS } from './examples.js';

/** A type as it is, for an interface to extend: an interface's name is what declaration files print. */
export type Same<T> = T;

export const integer = v.pipe(v.number(), v.integer());

/** A set (PROTOCOL.md 6.1) of `element`s with its two counts, described, and an example. */
export function setOf<T extends v.GenericSchema>(element: T, count: string, unfiltered: string, example: unknown) {
  return v.pipe(
    v.object({ '~Count': v.pipe(integer, v.description(count)), '~UnfilteredCount': v.pipe(integer, v.description(unfiltered)), '~Elements': v.array(element) }),
    v.examples([example as never]),
  );
}

/** A reference inside an object: the referenced object, serialized, or only its `~` members when the session may not read it. */
export const ObjectReference = v.pipe(
  v.looseObject({ '~ClassName': v.string(), '~ObjectID': v.string(), '~StoreTime': v.optional(v.string()) }),
  v.description('a referenced object: serialized, or only its ~ members when the session may not read it'),
  v.examples([REFERENCE as never]),
);

/** An object as the service serializes it (PROTOCOL.md 6.1); the document describes each declared class's fields. */
const servedObjectSchema = v.pipe(
  // `serialization` (6.1) decides which members an answer holds: `oid` only ~ObjectID, `empty` the ~ members, a field list some fields
  v.looseObject({ '~ClassName': v.optional(v.string()), '~ObjectID': v.string(), '~StoreTime': v.optional(v.string()) }),
  v.description('a serialized object: ~ClassName, ~ObjectID, ~StoreTime and its fields (serialization oid: ~ObjectID only; empty: the ~ members; custom: the listed fields)'),
  v.examples([CUSTOMER as never]),
);
/** `ServedObject`'s type, named so that declarations refer to it rather than repeat it. */
export interface ServedObjectSchema extends Same<typeof servedObjectSchema> {}
export const ServedObject: ServedObjectSchema = servedObjectSchema;

/** A set (PROTOCOL.md 6.1): a listing's page. */
const objectSetSchema = setOf(ServedObject, 'the objects in ~Elements', 'the objects the query matched, before paging', CUSTOMERS);
/** `ObjectSet`'s type, named so that declarations refer to it rather than repeat it. */
export interface ObjectSetSchema extends Same<typeof objectSetSchema> {}
export const ObjectSet: ObjectSetSchema = objectSetSchema;

/** `GET /v1/classes` (PROTOCOL.md 6.11): the classes the session may read, with counts. */
export const ClassSummaries = setOf(
  v.object({
    Name: v.string(),
    Declared: v.pipe(v.boolean(), v.description('declared in the schema option (PROTOCOL.md 6.8)')),
    Count: v.pipe(integer, v.description('the objects of the class the session may read')),
    CountEstimated: v.optional(v.pipe(v.literal(true), v.description('Count is an estimate: the class is too large to ask its objects one by one'))),
  }),
  'the classes in ~Elements',
  'the classes in ~Elements',
  CLASSES,
);

/** `data` of an answer that has nothing to say. */
export const Nothing = v.pipe(v.strictObject({}), v.description('nothing: {}'), v.examples([{}]));

/**
 * A login answer's `acls` (PROTOCOL.md 2.2): one element per application the session holds, each with
 * exactly the types the Dart client casts to. The one description of the shape: the OpenAPI document
 * and auth/acls.ts's `AclEntry` come from it.
 */
export const Acls = v.pipe(
  v.object({
    '~Count': integer,
    '~Elements': v.array(
      v.object({
        Oid: v.pipe(v.string(), v.description("the licence's id (the principal and the application)")),
        Status: v.pipe(integer, v.description('0 = active')),
        UserName: v.string(),
        DeviceID: v.pipe(v.nullable(v.string()), v.description("the login's device.deviceId")),
        LicenseKey: v.pipe(v.string(), v.description("the application's name, never a secret")),
        LicenseLevel: v.nullable(v.string()),
        ParallelConnections: v.pipe(integer, v.description("0 = unlimited, else the licence's seat count (2.7)")),
        TFAActivated: v.boolean(),
        TFAConfirmed: v.boolean(),
        Application: v.string(),
        AddOns: v.object({ '~Count': integer, '~Elements': v.array(v.string()) }),
      }),
    ),
  }),
  v.description('one licence entry per application the session holds (PROTOCOL.md 2.2)'),
);

/** What every login answers beside its credential (PROTOCOL.md 2.2). */
const SESSION_MEMBERS = { user: ServedObject, databaseName: v.string(), expiresAt: v.pipe(v.string(), v.isoTimestamp()), acls: Acls };

/** `data` of a login (PROTOCOL.md 2.2). */
const loginAnswerSchema = v.pipe(
  v.object({ sessionId: v.pipe(v.string(), v.description('the sessionId header of the requests that follow')), ...SESSION_MEMBERS }),
  v.examples([ALICE_LOGIN as never]),
);
/** `LoginAnswer`'s type, named so that declarations refer to it rather than repeat it. */
export interface LoginAnswerSchema extends Same<typeof loginAnswerSchema> {}
export const LoginAnswer: LoginAnswerSchema = loginAnswerSchema;

/** `data` of the token login (`/v2/login` without `publicKey`). */
const tokenLoginAnswerSchema = v.pipe(
  v.object({ token: v.pipe(v.string(), v.description('a JWT for the Authorization header')), ...SESSION_MEMBERS }),
  v.examples([DAVE_TOKEN as never]),
);
/** `TokenLoginAnswer`'s type, named so that declarations refer to it rather than repeat it. */
export interface TokenLoginAnswerSchema extends Same<typeof tokenLoginAnswerSchema> {}
export const TokenLoginAnswer: TokenLoginAnswerSchema = tokenLoginAnswerSchema;

/** Every JSON answer (PROTOCOL.md 1.3); `internalStatus` and `statusMessage` are always strings. */
export const Envelope = v.object({
  status: v.object({ internalStatus: v.string(), statusMessage: v.string(), debugMessage: v.optional(v.string()) }),
  data: v.pipe(v.unknown(), v.description('the answer; {} for failures unless stated')),
});

/** The named components, in the order the document lists them. */
/** `GET /v1/users` (PROTOCOL.md 2.8, administrators): a page of the users by name, never a `_` field. */
export const UserList = setOf(
  v.object({
    '~ObjectID': v.string(),
    Name: v.pipe(v.nullable(v.string()), v.description('the login name')),
    Description: v.nullable(v.string()),
    Disabled: v.pipe(v.boolean(), v.description("true: the user's logins answer 302")),
    Groups: v.pipe(v.array(v.string()), v.description('the names of its groups, sorted')),
    TwoFactor: v.pipe(v.boolean(), v.description('whether it holds a confirmed TOTP secret (PROTOCOL.md 2.6)')),
    Passkeys: v.pipe(integer, v.minValue(0), v.description('how many passkeys it holds')),
  }),
  'the users in ~Elements',
  'all users, before paging',
  USERS,
);

/** The data of these answers, as the handlers that answer them are typed (router.ts `AnswerOf`). */
export type ServedData = v.InferOutput<typeof ServedObject>;
export type ObjectSetData = v.InferOutput<typeof ObjectSet>;
export type LoginData = v.InferOutput<typeof LoginAnswer>;
export type TokenLoginData = v.InferOutput<typeof TokenLoginAnswer>;

export const SHARED_SCHEMAS = { ServedObject, ObjectReference, ObjectSet, Nothing, LoginAnswer, TokenLoginAnswer, Envelope, UserList } as const;
