/**
 * The model (PROTOCOL.md 6.8): `GET /v1/model/structure` and `POST /v2/model/structure`, answered from
 * the declarations (`schema`), only for classes the session may read. `Object` is the class every
 * class derives from: its members are the three metadata members, its derived classes every declared one.
 */
import type { ModelContext } from './context.js';
import { okReply } from '../../http/envelope.js';
import { ApiError } from '../../http/errors.js';
import { route } from '../../http/router.js';
import type { Guard } from '../access.js';
import { checkClassName } from '../names.js';
import { MODEL_STRUCTURE } from './contract.js';

export const ROOT_CLASS = 'Object';

/** A member of a class in the model (PROTOCOL.md 6.8); the typed client answers the same shape. */
export interface ModelMember {
  Name: string;
  Type: 'string' | 'number' | 'integer' | 'boolean' | 'date' | 'json' | 'ref' | 'set' | 'file';
  Class?: string;
  Required: boolean;
  MaxLength?: number;
  Min?: number;
  Max?: number;
  /** The values an `enum` allows (v2: unless `skipValueMapping`). */
  Values?: readonly (string | number)[];
  /** A member every object has (`~ObjectID`, `~ClassName`, `~StoreTime`), from `Object`. */
  Base?: true;
}

/** A class in the model: its stable `ClassID`, whether it is declared, its members and indices. */
export interface ClassStructure {
  Name: string;
  ClassID: number;
  /** False for a class without declaration (schemaless: no members to describe). */
  Declared: boolean;
  Members: ModelMember[];
  Indices: Array<{ Name: string; Members: string[] }>;
  /** Declared at run time (PROTOCOL.md 6.12), not by the host's `schema`: then also its `Strict`, `Description` and `Access`. */
  Runtime?: true;
  Strict?: boolean;
  Description?: string;
  Access?: Partial<Record<'read' | 'create' | 'update' | 'delete' | 'security', readonly string[]>>;
}

const BASE_MEMBERS: ModelMember[] = [
  { Name: '~ObjectID', Type: 'string', Required: true, Base: true },
  { Name: '~ClassName', Type: 'string', Required: true, Base: true },
  { Name: '~StoreTime', Type: 'date', Required: true, Base: true },
];

interface Shape {
  members: boolean;
  baseMembers: boolean;
  indices: boolean;
  valueMapping: boolean;
}

function structure(ctx: ModelContext, className: string, shape: Shape): ClassStructure {
  const fields = ctx.schema.fields(className);
  const root = className === ROOT_CLASS && !fields;
  const members: ModelMember[] = [];
  if (shape.members) {
    if (shape.baseMembers || root) members.push(...BASE_MEMBERS);
    for (const [name, spec] of Object.entries(fields ?? {})) {
      const member: ModelMember = { Name: name, Type: spec.type, Required: spec.required };
      if (spec.class !== undefined) member.Class = spec.class;
      if (spec.maxLength !== undefined) member.MaxLength = spec.maxLength;
      if (spec.min !== undefined) member.Min = spec.min;
      if (spec.max !== undefined) member.Max = spec.max;
      if (spec.enum && shape.valueMapping) member.Values = spec.enum;
      members.push(member);
    }
  }
  const indices = shape.indices ? ctx.schema.indexes(className).map((field) => ({ Name: `${className}_${field}`, Members: [field] })) : [];
  const answer: ClassStructure = { Name: className, ClassID: ctx.schema.classId(className), Declared: root || fields !== undefined, Members: members, Indices: indices };
  const runtime = ctx.runtimeModel.entry(className);
  if (runtime) {
    answer.Runtime = true;
    answer.Strict = runtime.declaration.strict ?? false;
    if (runtime.description !== undefined) answer.Description = runtime.description;
    if (runtime.access !== undefined) answer.Access = runtime.access;
  }
  return answer;
}

/** A class's entry as `GET /v1/model/structure` answers it (the run-time declaration routes answer it too). */
export function classStructure(ctx: ModelContext, className: string): ClassStructure {
  return structure(ctx, className, { members: true, baseMembers: false, indices: true, valueMapping: true });
}

/** Whether the session sees this class in the model: not internal, and its read rule lets it read some. */
async function visible(ctx: ModelContext, guard: Guard, className: string): Promise<boolean> {
  return className === ROOT_CLASS || (!ctx.internalClasses.has(className) && (await guard.scope('read', className)) !== 'none');
}

async function visibleOnly(ctx: ModelContext, guard: Guard, names: readonly string[]): Promise<string[]> {
  const answers = await Promise.all(names.map((name) => visible(ctx, guard, name)));
  return names.filter((_, i) => answers[i]);
}

const MAX_CLASSES = 100;

export function modelRoutes(ctx: ModelContext) {
  return [
    route({
      ...MODEL_STRUCTURE.getModelStructure,
      auth: 'objects',
      summary: 'The declared classes: members, indices and ClassIDs (only classes the session may read)',
      examples: { answer: { '~Count': 1, '~UnfilteredCount': 1, '~Elements': [{ Name: 'UserGroup', ClassID: 33534406, Declared: true, Members: [{ Name: 'Name', Type: 'string', Required: true }, { Name: 'Description', Type: 'string', Required: false }], Indices: [] }] } },
      answer: 'a set (~Count, ~UnfilteredCount, ~Elements) of {Name, ClassID, Declared, Members, Indices}',
      handler: async (request, { query: { classes } }) => {
        const named = classes === undefined ? ctx.schema.classNames : [...new Set(classes.split(',').map((name) => name.trim()).filter(Boolean))];
        if (named.length > MAX_CLASSES) throw new ApiError('400', `classes names at most ${MAX_CLASSES} classes`);
        for (const name of named) checkClassName(name, 'classes: class name');
        const shown = (await visibleOnly(ctx, ctx.guard(request), named)).map((name) => classStructure(ctx, name));
        return okReply({ '~Count': shown.length, '~UnfilteredCount': shown.length, '~Elements': shown });
      },
    }),
    route({
      ...MODEL_STRUCTURE.postModelStructure,
      auth: 'objects',
      batch: false,
      summary: 'The model as the 0.2 client asks for it: per item, the class and (for Object) its derived classes',
      answer: 'a list in item order; each a list of {Name, ClassID, Declared, Members, Indices}: the class (none when the session may not read it), then the classes derived from it',
      handler: async (request, { body: items }) => {
        const guard = ctx.guard(request);
        const answers = [];
        for (const [index, item] of items.entries()) {
          checkClassName(item.className, `item ${index}: className`);
          const shape = { members: !item.skipMembers, baseMembers: item.skipBaseMembers === false, indices: !item.skipIndices, valueMapping: !item.skipValueMapping };
          const derived = item.className === ROOT_CLASS && !item.skipDerivedClasses && !ctx.schema.isDeclared(ROOT_CLASS) ? ctx.schema.classNames : [];
          const names = await visibleOnly(ctx, guard, [item.className, ...derived]);
          answers.push(names.map((name) => structure(ctx, name, shape)));
        }
        return okReply(answers);
      },
    }),
  ];
}
