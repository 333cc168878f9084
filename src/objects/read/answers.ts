/**
 * How every route that answers objects answers them (PROTOCOL.md 6.1): one object, or a set, serialized
 * for the request's session. The request's `serialization` parameter is read here, once, so by id,
 * listings, writes, actions, bulk writes and v2 object data all shape their answers alike.
 */
import * as v from 'valibot';
import type { ReadContext } from './context.js';
import { okTextReply, type JsonReply } from '../../http/envelope.js';
import type { ObjectSetData, ServedData } from '../../openapi/schemas.js';
import { andThen, type MaybePromise } from '../../maybe.js';
import { ApiError, clip } from '../../http/errors.js';
import type { ApiRequest } from '../../http/request.js';
import { parsedBy } from '../../http/validate.js';
import type { StoredObject } from '../../storage/types.js';
import type { Guard } from '../access.js';
import { FULL, type JsonObject, type Serialization, type SerializationHook, type SerializedSet } from './serialize.js';
import { MAX_PER_PAGE } from './selection.js';

/**
 * The `serialization` query parameter, as route tables list it (the OpenAPI document shows it): the
 * dispatcher parses it (`parseSerialization`, `400` naming the member), the route hands it to
 * `objectAnswer`/`setAnswer`.
 */
export const SERIALIZATION_PARAM = {
  serialization: v.optional(
    v.pipe(
      v.string(),
      v.description(
        'how the answer\'s objects are shaped, a JSON object: {"type": "full"} (default), "empty" (metadata), "oid" (~ObjectID only), ' +
          '"custom" ({"custom": {"type": "empty", "fieldList": [names], "fieldCustom": {<setField>: {"page", "perPage"}}}}), ' +
          '"class" ({"style": "preview" | "detailview", <ClassName>: {a serialization}}), "macro" ({"macro": name}); ' +
          'flags on any type: "getSize" (~Size), "securityRights" (~SecurityRights)',
      ),
      parsedBy((text: string) => parseSerialization(text)),
    ),
  ),
};

const FIELD_NAME = /^[^_]/;
const CLASS_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const MAX_FIELDS = 1000;
const MAX_PAGE = 1_000_000_000;

const flags = {
  getSize: v.optional(v.boolean('must be true or false')),
  securityRights: v.optional(v.boolean('must be true or false')),
};
/** A strict object's message: an unknown member, or not an object at all. */
const members = (what: string, names: string) => (issue: v.BaseIssue<unknown>) =>
  issue.expected === 'never' ? `is not a member of ${what} (it takes ${names})` : issue.received === 'undefined' && issue.path ? 'is required' : 'must be a JSON object';
/** `schema` for a JSON object only (valibot's object schemas take arrays). */
const jsonObject = <S extends v.GenericSchema<object>>(schema: S) =>
  v.pipe(v.custom<object>((x) => typeof x === 'object' && x !== null && !Array.isArray(x), 'must be a JSON object'), schema);
const fieldName = v.pipe(
  v.string('must be a field name (a string)'),
  v.minLength(1, 'must be a field name, not empty'),
  v.regex(FIELD_NAME, 'names an internal field (starting with _), which is never served'),
);
const whole = (max: number) => {
  const message = `must be a whole number from 0 to ${max}`;
  return v.pipe(
    v.union([v.number(message), v.pipe(v.string(message), v.regex(/^\d{1,10}$/, message), v.transform(Number))], message),
    v.integer(message),
    v.minValue(0, message),
    v.maxValue(max, message),
  );
};
const SetPageSchema = jsonObject(v.strictObject(
  { page: v.optional(whole(MAX_PAGE), 0), perPage: v.optional(v.pipe(whole(MAX_PER_PAGE), v.minValue(1, `must be a whole number from 1 to ${MAX_PER_PAGE}`)), 50) },
  members('a fieldCustom entry', 'page, perPage'),
));
const CustomSchema = jsonObject(v.strictObject(
  {
    type: v.optional(v.literal('empty', 'must be "empty" (the listed fields are added to the metadata)'), 'empty'),
    fieldList: v.optional(v.pipe(v.array(fieldName, 'must be a list of field names'), v.maxLength(MAX_FIELDS, `must name at most ${MAX_FIELDS} fields`)), []),
    fieldCustom: v.optional(
      v.pipe(
        v.record(fieldName, SetPageSchema, 'must map set field names to {"page", "perPage"}'),
        v.check((pages) => Object.keys(pages).length <= MAX_FIELDS, `must name at most ${MAX_FIELDS} fields`),
      ),
      {},
    ),
  },
  members('custom', 'type, fieldList, fieldCustom'),
));
const TYPES = 'full, empty, oid, custom, class, macro';
/** The types a class override may take (not `class` again). */
const shapes = [
  v.strictObject({ type: v.literal('full'), ...flags }, members('a full serialization', 'type, getSize, securityRights')),
  v.strictObject({ type: v.literal('empty'), ...flags }, members('an empty serialization', 'type, getSize, securityRights')),
  v.strictObject({ type: v.literal('oid'), ...flags }, members('an oid serialization', 'type, getSize, securityRights')),
  v.strictObject({ type: v.literal('custom'), custom: CustomSchema, ...flags }, members('a custom serialization', 'type, custom, getSize, securityRights')),
  v.strictObject(
    { type: v.literal('macro'), macro: v.pipe(v.string('must be a macro name'), v.minLength(1, 'must be a macro name')), ...flags },
    members('a macro serialization', 'type, macro, getSize, securityRights'),
  ),
] as const;
const unknownType = (types: string) => (issue: v.BaseIssue<unknown>) =>
  issue.received === 'undefined' ? `is required (one of ${types})` : issue.expected === 'Object' ? 'must be a JSON object' : `must be one of ${types}`;
const OverrideSchema = jsonObject(v.variant('type', [...shapes], unknownType('full, empty, oid, custom, macro')));
/** The members of a `class` serialization that are not class names. */
const CLASS_MEMBERS = new Set(['type', 'style', 'getSize', 'securityRights']);
const ClassSchema = v.pipe(
  v.objectWithRest(
    { type: v.literal('class'), style: v.optional(v.picklist(['preview', 'detailview'], 'must be "preview" or "detailview"')), ...flags },
    OverrideSchema,
    'must be a JSON object',
  ),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const name = Object.keys(dataset.value).find((key) => !CLASS_MEMBERS.has(key) && !CLASS_NAME.test(key));
    if (name !== undefined) {
      addIssue({ message: 'is neither a member of a class serialization (type, style, getSize, securityRights) nor a class name', path: [{ type: 'object', origin: 'value', input: dataset.value, key: name, value: dataset.value[name as 'type'] }] });
    }
  }),
);
const SerializationSchema = v.variant('type', [...shapes, ClassSchema], unknownType(TYPES));

type Parsed = v.InferOutput<typeof SerializationSchema>;
type ParsedShape = v.InferOutput<typeof OverrideSchema>;

function toSerialization(parsed: Parsed | ParsedShape): Serialization {
  const flagged = { getSize: parsed.getSize === true, securityRights: parsed.securityRights === true };
  switch (parsed.type) {
    case 'custom':
      return { type: 'custom', fieldList: parsed.custom.fieldList, fieldCustom: parsed.custom.fieldCustom, ...flagged };
    case 'macro':
      return { type: 'macro', macro: parsed.macro, ...flagged };
    case 'class': {
      const { type, style, getSize, securityRights, ...overrides } = parsed;
      void type, getSize, securityRights;
      const classes: Record<string, Serialization> = Object.create(null);
      for (const [name, override] of Object.entries(overrides)) {
        const own = toSerialization(override as ParsedShape);
        // the top level's flags hold for every class; an override may add its own
        classes[name] = { ...own, getSize: own.getSize || flagged.getSize, securityRights: own.securityRights || flagged.securityRights };
      }
      return { type: 'class', style, classes, ...flagged };
    }
    default:
      return { type: parsed.type, ...flagged };
  }
}

/** `serialization.custom.fieldList[2]` from a valibot issue's path. */
function pathOf(issue: v.BaseIssue<unknown>): string {
  let path = 'serialization';
  for (const item of issue.path ?? []) path += typeof item.key === 'number' ? `[${item.key}]` : `.${clip(String(item.key), 64)}`;
  return path;
}

/**
 * The `serialization` of PROTOCOL.md 6.1: a JSON object, or its text (the query parameter). Anything
 * not understood is `400` naming the member; never `full` for something else. Routes whose request
 * carries it elsewhere (v2's JSON items) parse it here and pass it to `objectAnswer`/`setAnswer`.
 */
export function parseSerialization(value: unknown): Serialization {
  if (value === undefined) return FULL;
  let json = value;
  if (typeof value === 'string') {
    try {
      json = JSON.parse(value);
    } catch {
      throw new ApiError('400', 'serialization must be a JSON object, e.g. {"type":"oid"}; this is not JSON');
    }
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new ApiError('400', 'serialization must be a JSON object, e.g. {"type":"oid"}');
  const result = v.safeParse(SerializationSchema, json, { abortEarly: true });
  if (!result.success) {
    const issue = result.issues[0];
    throw new ApiError('400', `${pathOf(issue)} ${issue.message}`);
  }
  return toSerialization(result.output);
}

/** `404` for a serialization macro the host did not register (write routes check before they write, so a bad one writes nothing). */
export function checkMacros(ctx: ReadContext, serialization: Serialization): void {
  if (serialization.type === 'macro' && !ctx.macros.serialization(serialization.macro)) {
    throw new ApiError('404', `no serialization macro ${clip(serialization.macro)}`);
  }
  if (serialization.type === 'class') for (const override of Object.values(serialization.classes)) checkMacros(ctx, override);
}

/** The request's serialization macros bound to its context (only when one is asked for). */
function macroOf(ctx: ReadContext, request: ApiRequest, serialization: Serialization): SerializationHook | undefined {
  if (serialization.type !== 'macro' && serialization.type !== 'class') return undefined;
  let context: ReturnType<ReadContext['macroContext']> | undefined;
  return async (object, json) => {
    // a class serialization's override names the macro of its class
    const name = serialization.type === 'macro' ? serialization.macro : (serialization.classes[object.className] as { macro: string }).macro;
    const macro = ctx.macros.serialization(name)!;
    const built = await macro((context ??= ctx.macroContext(request)), { obj: object, objectJson: json });
    return typeof built === 'object' && built !== null ? (built as JsonObject) : json;
  };
}

/**
 * One object as the request asked for it (`GET /v1/object/{id}`, a write's answer). `serialization`:
 * the route's input (its query parameter, a v2 item's member); none is `full`.
 */
export function objectAnswer(ctx: ReadContext, request: ApiRequest, guard: Guard, object: StoredObject, serialization?: Serialization): MaybePromise<JsonReply<ServedData>> {
  const shape = shapeOf(ctx, serialization);
  return andThen(ctx.serializer.objectText(object, guard, shape, macroOf(ctx, request, shape)), okTextReply<ServedData>);
}

/** The serialization the route read (its macros checked), else `full`. */
function shapeOf(ctx: ReadContext, serialization: Serialization | undefined): Serialization {
  if (!serialization) return FULL;
  checkMacros(ctx, serialization);
  return serialization;
}

/** A set (`~Count`, `~UnfilteredCount`, `~Elements`) as the request asked for it, without the envelope (v2 answers a list of them). */
export async function serializedSet(ctx: ReadContext, request: ApiRequest, guard: Guard, objects: StoredObject[], unfiltered: number, serialization?: Serialization): Promise<SerializedSet> {
  const shape = shapeOf(ctx, serialization);
  return ctx.serializer.set(objects, unfiltered, guard, shape, macroOf(ctx, request, shape));
}

/** A set as the request asked for it, in the envelope (its text written once, `Serializer.setText`). */
export function setAnswer(ctx: ReadContext, request: ApiRequest, guard: Guard, objects: StoredObject[], unfiltered: number, serialization?: Serialization): MaybePromise<JsonReply<ObjectSetData>> {
  const shape = shapeOf(ctx, serialization);
  return andThen(ctx.serializer.setText(objects, unfiltered, guard, shape, macroOf(ctx, request, shape)), okTextReply<ObjectSetData>);
}
