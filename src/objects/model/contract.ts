/**
 * The model routes' contracts (PROTOCOL.md 6.12 *model*): method, path and schemas, without handlers
 * (http/route-spec.ts); class-routes.ts and structure.ts attach the handlers.
 */
import * as v from 'valibot';
import { ApiError } from '../../http/errors.js';
import { spec } from '../../http/route-spec.js';
import { jsonObject, parsedBy } from '../../http/validate.js';
import { classNameParam } from '../names.js';
import { FIELD_TYPES, type ClassDeclaration, type FieldDeclaration } from './declarations.js';
import type { RuntimeClass } from './runtime.js';
import { flag, itemsBody, text } from '../../v2/items.js';

export const MAX_FIELDS = 200;
export const groupNames = v.pipe(v.array(v.pipe(v.string(), v.maxLength(200, 'a group name has at most 200 characters'))), v.maxLength(100, 'a rule names at most 100 groups'));
export const FieldBody = v.strictObject({
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
export const FieldsBody = v.pipe(
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
export const ClassParams = v.object({ className: classNameParam('class name', 'the class, [A-Za-z][A-Za-z0-9_]{0,63}') });

/** The declaration as `runtime.ts` takes it, read from the body after its members are checked. */
export const DeclarationBody = v.pipe(ClassDeclarationBody, parsedBy(runtimeClass));

export const MODEL_CLASSES = {
  putModelClassesByClassName: spec({ method: 'PUT', path: '/v1/model/classes/:className', params: ClassParams, body: DeclarationBody }),
  deleteModelClassesByClassName: spec({ method: 'DELETE', path: '/v1/model/classes/:className', params: ClassParams }),
};

export const ModelQuerySchema = v.object({
  classes: v.optional(v.pipe(v.string(), v.description('class names, comma-separated (default: every declared class)'))),
});

export const V2ItemSchema = v.strictObject({
  className: text,
  skipDerivedClasses: v.optional(flag),
  skipMembers: v.optional(flag),
  skipBaseMembers: v.optional(flag),
  skipIndices: v.optional(flag),
  skipValueMapping: v.optional(flag),
});

export const MODEL_STRUCTURE = {
  getModelStructure: spec({ method: 'GET', path: '/v1/model/structure', query: ModelQuerySchema }),
  postModelStructure: spec({ method: 'POST', path: '/v2/model/structure', body: itemsBody(V2ItemSchema) }),
};
