/**
 * `PUT` and `DELETE /v1/model/classes/{className}` (PROTOCOL.md 6.12, *admin*): classes declared at run
 * time. The handlers only read the request; `runtime.ts` checks, stores and applies.
 */
import * as v from 'valibot';
import type { ModelContext } from './context.js';
import type { ClassDeclaration, FieldDeclaration } from './declarations.js';
import type { RuntimeClass } from './runtime.js';
import { FIELD_TYPES } from './declarations.js';
import { classStructure } from './structure.js';
import type { AuthContext } from '../../auth/context.js';
import { okReply } from '../../http/envelope.js';
import { ApiError, clip } from '../../http/errors.js';
import { route } from '../../http/router.js';
import { jsonObject, parsedBy } from '../../http/validate.js';
import type { Access } from '../access.js';
import { classNameParam } from '../names.js';

type ClassRoutesContext = ModelContext & Pick<AuthContext, 'principals'> & { readonly access: Access };

const MAX_FIELDS = 200;
const groupNames = v.pipe(v.array(v.pipe(v.string(), v.maxLength(200, 'a group name has at most 200 characters'))), v.maxLength(100, 'a rule names at most 100 groups'));
const FieldBody = v.strictObject({
  Type: v.picklist(FIELD_TYPES, `must be one of ${FIELD_TYPES.join(', ')}`),
  Required: v.optional(v.boolean('must be true or false')),
  Class: v.optional(v.string('must be a class name')),
  MaxLength: v.optional(v.pipe(v.number('must be a positive whole number'), v.integer('must be a positive whole number'), v.minValue(1, 'must be a positive whole number'))),
  // JSON.parse reads 1e400 as Infinity: a bound is a finite number
  Min: v.optional(v.pipe(v.number('must be a finite number'), v.finite('must be a finite number'))),
  Max: v.optional(v.pipe(v.number('must be a finite number'), v.finite('must be a finite number'))),
  Enum: v.optional(
    v.pipe(
      v.array(v.custom<string | number>((value) => typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)), 'must be a string or a finite number'), 'must be a list of strings or numbers'),
      v.maxLength(1000, 'must list at most 1000 values'),
    ),
  ),
});
type Field = v.InferOutput<typeof FieldBody>;
/** The route's spelling of a field's declaration is the `schema` option's (declarations.ts), capitalized: a member added to one and not the other does not compile. */
type Capitalized<T> = { -readonly [K in keyof T as Capitalize<K & string>]: NonNullable<T[K]> extends readonly (infer E)[] ? E[] : T[K] };
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
export type FieldBodyIsTheDeclaration = Holds<Same<Field, Capitalized<Exclude<FieldDeclaration, string>>>>;

/**
 * `Fields`: each member checked as `FieldBody`, read with `Object.entries` into a record without
 * prototype, so a field named `__proto__`, `constructor` or `prototype` is declared like any other
 * (valibot's `record` leaves those names out).
 */
const FieldsBody = v.pipe(
  jsonObject('Fields must map field names to {Type, ...}'),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const fields = Object.create(null) as Record<string, Field>;
    for (const [name, value] of Object.entries(dataset.value)) {
      const result = v.safeParse(FieldBody, value, { abortEarly: true });
      if (!result.success) {
        const issue = result.issues[0];
        const item = { type: 'object', origin: 'value', input: dataset.value, key: name, value } as const;
        addIssue({ message: issue.message, input: issue.input, expected: issue.expected ?? undefined, received: issue.received, path: [item, ...(issue.path ?? [])] as never });
        return NEVER;
      }
      fields[name] = result.output;
    }
    return fields;
  }),
  v.description(`at most ${MAX_FIELDS} fields`),
  // sent as a record of FieldBody (the typed client's DeclaredField); the pipe reads it member by member
) as unknown as v.GenericSchema<Record<string, v.InferInput<typeof FieldBody>>, Record<string, Field>>;
export const ClassDeclarationBody = v.strictObject({
  Fields: FieldsBody,
  Indexes: v.optional(v.pipe(v.array(v.string(), 'Indexes must be a list of declared field names'), v.maxLength(32, 'Indexes names at most 32 fields'))),
  Strict: v.optional(v.boolean('Strict must be true or false')),
  Description: v.optional(v.pipe(v.string('Description must be a string'), v.maxLength(2000, 'Description has at most 2000 characters'))),
  Access: v.optional(
    v.strictObject(
      { read: v.optional(groupNames), create: v.optional(groupNames), update: v.optional(groupNames), delete: v.optional(groupNames), security: v.optional(groupNames) },
      'Access must be {read, create, update, delete, security?}, each a list of group names, "*" or "self"',
    ),
  ),
});
type Body = v.InferOutput<typeof ClassDeclarationBody>;

/** The body's declaration in the `schema` option's own form (PROTOCOL.md 6.8), which `ClassSchemas` checks. */
function runtimeClass(body: Body): RuntimeClass {
  if (Object.keys(body.Fields).length > MAX_FIELDS) throw new ApiError('400', `Fields declares at most ${MAX_FIELDS} fields`);
  const nul = withNul(body, '');
  // PostgreSQL cannot hold U+0000 in text: no store keeps it in a declaration (PROTOCOL.md 6.12)
  if (nul !== undefined) throw new ApiError('400', `${nul} contains the character U+0000, which a declaration may not hold`);
  const fields = Object.create(null) as Record<string, FieldDeclaration>;
  for (const [name, field] of Object.entries(body.Fields)) {
    const declared: Exclude<FieldDeclaration, string> = { type: field.Type };
    if (field.Required !== undefined) declared.required = field.Required;
    if (field.Class !== undefined && field.Type !== 'file') declared.class = field.Class;
    if (field.MaxLength !== undefined) declared.maxLength = field.MaxLength;
    if (field.Min !== undefined) declared.min = field.Min;
    if (field.Max !== undefined) declared.max = field.Max;
    if (field.Enum !== undefined) declared.enum = field.Enum;
    fields[name] = declared;
  }
  const declaration: ClassDeclaration = { fields, indexes: body.Indexes ?? [], strict: body.Strict ?? false };
  return { declaration, description: body.Description, access: body.Access };
}

/** The first member of `value` (a parsed body) whose name or string holds U+0000, as a path (`Fields.N.Enum.1`). */
function withNul(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, member] of Object.entries(value)) {
    const name = key.includes('\u0000') ? JSON.stringify(key) : key;
    const at = path === '' ? name : `${path}.${name}`;
    if (key.includes('\u0000')) return `the name of ${at}`;
    const found = withNul(member, at);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The path parameter: a name no class could have is `400` (checked before the body). */
const ClassParams = v.object({ className: classNameParam('class name', 'the class, [A-Za-z][A-Za-z0-9_]{0,63}') });

/** `400` for an internal class's name, `403` for a class the host declares. */
function declarable(ctx: ClassRoutesContext, className: string): void {
  if (ctx.internalClasses.has(className)) throw new ApiError('400', `${clip(className)} is an internal class of the service`);
  if (ctx.schema.isHostDeclared(className)) throw new ApiError('403', `${className} is declared by the host (its schema option) and read-only here`);
}

/** The declaration as `runtime.ts` takes it, read from the body after its members are checked. */
const DeclarationBody = v.pipe(ClassDeclarationBody, parsedBy(runtimeClass));

/**
 * The model's routes are for administrators; the request is checked first, with the input (as
 * `GET /v1/users` does): a malformed one is `400` for anyone.
 */
export function classDeclarationRoutes(ctx: ClassRoutesContext) {
  return [
    route({
      method: 'PUT',
      path: '/v1/model/classes/:className',
      auth: 'objects',
      admin: true,
      summary: 'Declares a class at run time, or replaces its declaration (users.admins only); 409 with Violations and Examples when stored objects would not satisfy it',
      params: ClassParams,
      body: DeclarationBody,
      refine: ({ params: { className }, body: entry }) => {
        declarable(ctx, className);
        ctx.runtimeModel.check(className, entry);
      },
      examples: {
        body: { Fields: { Title: { Type: 'string', Required: true, MaxLength: 200 }, Priority: { Type: 'integer', Min: 1, Max: 5 }, Customer: { Type: 'ref', Class: 'Customer' } }, Indexes: ['Priority'], Description: 'Support tickets', Access: { read: ['*'], create: ['sales'], update: ['sales'], delete: ['admins'] } },
        answer: { Name: 'Ticket', ClassID: 1234567, Declared: true, Members: [{ Name: 'Title', Type: 'string', Required: true, MaxLength: 200 }], Indices: [{ Name: 'Ticket_Priority', Members: ['Priority'] }], Runtime: true, Strict: false, Description: 'Support tickets' },
      },
      answer: "the class's entry as GET /v1/model/structure gives it, with Runtime, Strict, Description and Access",
      errors: ['403', '409'],
      handler: async (_request, { params: { className }, body: entry }) => {
        if (entry.access !== undefined && ctx.access.hostNames(className)) throw new ApiError('403', `the access rule of ${className} is set by the host (its access option) and read-only here`);
        await ctx.runtimeModel.declare(className, entry);
        return okReply(classStructure(ctx, className));
      },
    }),
    route({
      method: 'DELETE',
      path: '/v1/model/classes/:className',
      auth: 'objects',
      admin: true,
      summary: 'Removes the run-time declaration of a class without objects (users.admins only)',
      params: ClassParams,
      refine: ({ params: { className } }) => declarable(ctx, className),
      answer: 'nothing ({})',
      errors: ['403', '404', '409'],
      handler: async (_request, { params: { className } }) => {
        await ctx.runtimeModel.remove(className);
        return okReply({});
      },
    }),
  ];
}
