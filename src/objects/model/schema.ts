import { StorageUnavailableError } from '../../storage/errors.js';
/**
 * Declared classes (PROTOCOL.md 6.8): the `schema` option checked once at start-up and turned into one
 * valibot schema per class, which the one write path (`write-path.ts`) runs on the fields it is about
 * to store. The model routes, the OpenAPI document and `odbrest types` read the same declarations.
 */
import * as v from 'valibot';
import { ApiError, clip } from '../../http/errors.js';
import type { ClassRules, Fields, ObjectStore } from '../../storage/types.js';
import type { ClassDeclaration, FieldDeclaration, FieldType, SchemaDeclarations } from './declarations.js';
import { CLASS_NAME, withoutInternal } from '../names.js';

import { FIELD_TYPES } from './declarations.js';

export { FIELD_TYPES };
/** `~StoreTime`'s form, or ISO 8601 (a date, or a date and time with an optional zone). */
const DATE = /^(\d{8}T\d{6}[+-]\d{2}:\d{2}|\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?)$/;
/** Explicit `classId`s stay below this; ids derived from a name lie above it, so the two never meet. */
const DERIVED_BASE = 1 << 20;

/** A field's declaration in its long form, checked. */
export interface FieldSpec {
  type: FieldType;
  required: boolean;
  maxLength?: number;
  min?: number;
  max?: number;
  enum?: readonly (string | number)[];
  /** `ref`, `set`: the class referenced; `file`: the file class. */
  class?: string;
  /** What a value must be, in words: the end of every message about this field. */
  expects: string;
}

interface CompiledClass {
  name: string;
  classId: number;
  strict: boolean;
  fields: Record<string, FieldSpec>;
  indexes: readonly string[];
  schema: v.GenericSchema;
  /** The fields whose targets must be of one class (ref, set, file). */
  targeted: Array<[string, FieldSpec]>;
}

/**
 * A class's `ClassID` when its declaration gives none: FNV-1a of its name, above `DERIVED_BASE`. Derived
 * from the name alone, it stays the same across restarts, instances and added or removed classes,
 * which an id by position would not.
 */
export function derivedClassId(name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return DERIVED_BASE + (hash % (0x7fffffff - DERIVED_BASE));
}

/** The declarations, checked at start-up; `check` refuses writes that do not fit them. */
export class ClassSchemas {
  readonly #classes = new Map<string, CompiledClass>();
  readonly #byId = new Map<number, string>();
  /** The host's `schema`, as given (read-only at run time, PROTOCOL.md 6.12). */
  readonly #host: SchemaDeclarations = {};
  /** Classes declared at run time (PROTOCOL.md 6.12), as declared. */
  readonly #runtime = new Map<string, ClassDeclaration>();
  readonly #fileClass: string;
  /** Raised by every change of a run-time declaration (what is made from the declarations is made again). */
  version = 0;
  readonly #store: ObjectStore;
  /** The store as macros and hooks get it (`context.store`): its `put` checks declared classes too. */
  readonly checkedStore: ObjectStore;

  /** Throws an `Error` naming the class and field of the first declaration that contradicts itself. */
  constructor(declarations: SchemaDeclarations | undefined, fileClass: string, store: ObjectStore) {
    this.#store = store;
    this.#fileClass = fileClass;
    this.checkedStore = checkedStore(store, this);
    if (declarations === undefined) return;
    if (typeof declarations !== 'object' || declarations === null || Array.isArray(declarations)) throw new Error('schema must map class names to {fields, indexes?, strict?}');
    for (const [name, declaration] of Object.entries(declarations)) {
      const compiled = compileClass(name, declaration, fileClass);
      const taken = this.#byId.get(compiled.classId);
      if (taken !== undefined) throw new Error(`schema: classes ${taken} and ${name} have the same classId ${compiled.classId}; give one a classId of its own`);
      this.#classes.set(name, compiled);
      this.#byId.set(compiled.classId, name);
      this.#host[name] = declaration;
    }
  }

  /** Whether the host declares `className` in `schema` (then it is read-only at run time). */
  isHostDeclared(className: string): boolean {
    return Object.hasOwn(this.#host, className);
  }

  /** Whether `className` is declared at run time (PROTOCOL.md 6.12). */
  isRuntimeDeclared(className: string): boolean {
    return this.#runtime.has(className);
  }

  /**
   * Checks a run-time declaration (an `Error` saying what contradicts itself) and answers what a write
   * check and a store's violation count need of it, without applying it.
   */
  compile(className: string, declaration: ClassDeclaration): CompiledDeclaration {
    return new CompiledDeclaration(compileClass(className, declaration, this.#fileClass, `class ${className}`));
  }

  /**
   * Applies a run-time declaration of `className` (`undefined`: it has none any more): from now on
   * every write of the class on this instance is checked against it. Host declarations stay as they are.
   */
  /** Set while a run-time model (objects/model/runtime.ts) has not read its declarations from the store yet: writes answer `503` until then. */
  runtimePending = false;
  /** Classes whose stored run-time declaration cannot be compiled, with why: their writes are refused, other classes work. */
  readonly #broken = new Map<string, string>();

  /**
   * Applies a run-time declaration of `className` (`undefined`: it has none any more): from now on
   * every write of the class on this instance is checked against it. Host declarations stay as they
   * are. A declaration that cannot be compiled (a stored one an older version or a hand edit wrote)
   * leaves the class unusable for writes (`brokenDeclaration`) and answers why; other classes are untouched.
   */
  applyRuntime(className: string, declaration: ClassDeclaration | undefined): string | undefined {
    if (this.isHostDeclared(className)) return undefined;
    const previous = this.#classes.get(className);
    if (previous) this.#byId.delete(previous.classId);
    this.#classes.delete(className);
    this.#runtime.delete(className);
    this.#broken.delete(className);
    let problem: string | undefined;
    if (declaration) {
      try {
        const compiled = compileClass(className, declaration, this.#fileClass, `class ${className}`);
        this.#classes.set(className, compiled);
        if (!this.#byId.has(compiled.classId)) this.#byId.set(compiled.classId, className);
        this.#runtime.set(className, declaration);
      } catch (error) {
        problem = (error as Error).message;
        this.#broken.set(className, problem);
      }
    }
    this.version++;
    return problem;
  }

  /** Marks `className` as having a stored declaration that cannot be read at all (`undefined`: clears it). */
  markBroken(className: string, problem: string | undefined): void {
    if (problem === undefined) this.#broken.delete(className);
    else this.#broken.set(className, problem);
  }

  /** The classes whose stored declaration cannot be used, with why (`_CheckReady`, `odbrest check`, the log report them). */
  brokenDeclarations(): Array<{ className: string; problem: string }> {
    return [...this.#broken].map(([className, problem]) => ({ className, problem }));
  }

  /** Every declaration, the host's and those made at run time (the OpenAPI document and `odbrest types` describe them). */
  declarations(): SchemaDeclarations {
    return { ...this.#host, ...Object.fromEntries(this.#runtime) };
  }

  /** Declared class names, in declaration order. */
  get classNames(): string[] {
    return [...this.#classes.keys()];
  }

  isDeclared(className: string): boolean {
    return this.#classes.has(className);
  }

  /** The declared fields of a class (undefined: schemaless). */
  fields(className: string): Readonly<Record<string, FieldSpec>> | undefined {
    return this.#classes.get(className)?.fields;
  }

  indexes(className: string): readonly string[] {
    return this.#classes.get(className)?.indexes ?? [];
  }

  strict(className: string): boolean {
    return this.#classes.get(className)?.strict ?? false;
  }

  /** Any class's `ClassID`: its declared one, else the one derived from its name. */
  classId(className: string): number {
    return this.#classes.get(className)?.classId ?? derivedClassId(className);
  }

  /** The declared class with this `ClassID`. */
  classNamed(classId: number): string | undefined {
    return this.#byId.get(classId);
  }

  /**
   * `400` naming the first field of `fields` (what a write is about to store, metadata and `_` fields
   * aside) that does not fit the declaration of `className`. Undeclared classes take anything.
   */
  async check(className: string, fields: Fields): Promise<void> {
    const refused = await this.firstRefused([{ className, fields }]);
    if (refused) throw refused.error;
  }

  /**
   * The first of `objects` (in order) that `check` would refuse, with its `400`: each checked as `check`
   * checks one, their references looked up together. For writers that check a whole page before they
   * write any of it (`odbrest import`).
   */
  async firstRefused(objects: ReadonlyArray<{ className: string; fields: Fields }>): Promise<{ index: number; error: ApiError } | undefined> {
    // until the run-time declarations are read (the store did not answer at start), no write can be checked against them
    if (this.runtimePending) throw new StorageUnavailableError('the run-time class declarations are not read yet: the object store did not answer');
    const targeted: Array<{ index: number; compiled: CompiledClass; fields: Fields }> = [];
    for (const [index, { className, fields }] of objects.entries()) {
      const broken = this.#broken.get(className);
      if (broken !== undefined) return { index, error: unusableDeclaration(className, broken) };
      const compiled = this.#classes.get(className);
      if (!compiled) continue;
      const result = v.safeParse(compiled.schema, ownFields(fields), { abortEarly: true });
      // those after it cannot be the first refused
      if (!result.success) return (await wrongTargets(targeted, this.#store)) ?? { index, error: new ApiError('400', issueMessage(compiled, result.issues[0])) };
      if (compiled.targeted.length > 0) targeted.push({ index, compiled, fields });
    }
    return wrongTargets(targeted, this.#store);
  }
}

/**
 * A write to a class whose stored declaration cannot be compiled: `500`, since nothing is unreachable
 * (not `503`) and the request is not at fault (not `400`); only an administrator can mend it.
 */
function unusableDeclaration(className: string, problem: string): ApiError {
  return new ApiError('500', `writes to ${className} are refused: its stored declaration cannot be used (${problem}); an administrator replaces it (PUT /v1/model/classes/${className}) or deletes it`);
}

/**
 * `fields` as a record without prototype: a field named `toString`, `constructor` or `__proto__` is
 * then present only when the object holds it (a schema looks names up with `in`).
 */
export function ownFields(fields: Fields): Fields {
  const own = Object.create(null) as Fields;
  for (const name of Object.keys(fields)) own[name] = fields[name]!;
  return own;
}

function issueMessage(compiled: CompiledClass, issue: v.BaseIssue<unknown>): string {
  const field = String(issue.path?.[0]?.key ?? '');
  const spec = compiled.fields[field];
  if (!spec) return `field ${clip(field)} is not declared for ${compiled.name} (its declaration is strict)`;
  if (issue.input === undefined || (issue.input === null && spec.required)) return `field ${field} of ${compiled.name} is required: ${spec.expects}`;
  return `field ${field} of ${compiled.name} must be ${spec.expects}`;
}

/**
 * The first of `objects` holding a reference to an object of the wrong class (dangling ones, to objects
 * deleted since, are left alone), with its `400`; the referenced objects read at once.
 */
async function wrongTargets(objects: ReadonlyArray<{ index: number; compiled: CompiledClass; fields: Fields }>, store: ObjectStore): Promise<{ index: number; error: ApiError } | undefined> {
  const wanted: Array<[number, CompiledClass, string, string, FieldSpec]> = [];
  for (const { index, compiled, fields } of objects) {
    for (const [field, spec] of compiled.targeted) {
      const value = fields[field] as { $ref?: string; $set?: string[] } | null | undefined;
      if (!value) continue;
      for (const id of value.$set ?? (value.$ref === undefined ? [] : [value.$ref])) wanted.push([index, compiled, field, id, spec]);
    }
  }
  if (wanted.length === 0) return undefined;
  const found = new Map((await store.getMany([...new Set(wanted.map(([, , , id]) => id))])).map((object) => [object.id, object.className]));
  for (const [index, compiled, field, id, spec] of wanted) {
    const className = found.get(id);
    if (className !== undefined && className !== spec.class) return { index, error: new ApiError('400', `field ${field} of ${compiled.name} must be ${spec.expects}; ${clip(id)} is not a ${spec.class}`) };
  }
  return undefined;
}

/**
 * A declaration checked and compiled: whether stored fields satisfy it, as a write would be checked
 * (reference targets aside), and the rules a store counts violations of (`ObjectStore.violations`).
 */
export class CompiledDeclaration {
  readonly #compiled: CompiledClass;
  constructor(compiled: CompiledClass) {
    this.#compiled = compiled;
  }

  /** Whether `fields` (an object's as stored, `_` members included) would be refused by a write of this declaration. */
  violatedBy(fields: Fields): boolean {
    return !v.safeParse(this.#compiled.schema, ownFields(withoutInternal(fields)), { abortEarly: true }).success;
  }

  /** The declaration as the store-neutral rules of `ObjectStore.violations`. */
  get rules(): ClassRules {
    const fields = Object.create(null) as ClassRules['fields'];
    for (const [name, spec] of Object.entries(this.#compiled.fields)) {
      fields[name] = { type: spec.type, required: spec.required, maxLength: spec.maxLength, min: spec.min, max: spec.max, enum: spec.enum };
    }
    return { fields, strict: this.#compiled.strict };
  }
}

function compileClass(name: string, declaration: ClassDeclaration, fileClass: string, where = `schema: class ${name}`): CompiledClass {
  if (!CLASS_NAME.test(name)) throw new Error(`${where}: a class name must match [A-Za-z][A-Za-z0-9_]{0,63}`);
  if (typeof declaration !== 'object' || declaration === null || Array.isArray(declaration)) throw new Error(`${where}: must be {fields, indexes?, strict?, classId?}`);
  for (const key of Object.keys(declaration)) {
    if (!['fields', 'indexes', 'strict', 'classId'].includes(key)) throw new Error(`${where}: unknown member ${key} (allowed: fields, indexes, strict, classId)`);
  }
  const { fields: declared, indexes = [], strict = false, classId } = declaration;
  if (typeof declared !== 'object' || declared === null || Array.isArray(declared)) throw new Error(`${where}: fields must map field names to types`);
  if (typeof strict !== 'boolean') throw new Error(`${where}: strict must be true or false`);
  if (classId !== undefined && !(Number.isInteger(classId) && classId > 0 && classId < DERIVED_BASE)) throw new Error(`${where}: classId must be a whole number from 1 to ${DERIVED_BASE - 1}`);
  // without prototype: a field may be named __proto__, constructor or toString like any other
  const fields = Object.create(null) as Record<string, FieldSpec>;
  const entries = Object.create(null) as v.ObjectEntries;
  for (const [field, raw] of Object.entries(declared)) {
    if (field === '' || field.length > 128 || /^[~_$]/.test(field)) throw new Error(`${where}, field ${field}: a field name has 1 to 128 characters and does not start with ~, _ or $`);
    const spec = fieldSpec(`${where}, field ${field}`, raw, fileClass);
    fields[field] = spec;
    entries[field] = spec.required ? valueSchema(spec) : v.optional(v.nullable(valueSchema(spec)));
  }
  if (!Array.isArray(indexes)) throw new Error(`${where}: indexes must be a list of declared field names`);
  for (const index of indexes) if (!Object.hasOwn(fields, index)) throw new Error(`${where}: indexes names ${String(index)}, which is not a declared field`);
  return {
    name,
    classId: classId ?? derivedClassId(name),
    strict,
    fields,
    indexes,
    schema: strict ? v.strictObject(entries) : v.looseObject(entries),
    targeted: Object.entries(fields).filter(([, spec]) => spec.class !== undefined),
  };
}

function fieldSpec(where: string, raw: FieldDeclaration, fileClass: string): FieldSpec {
  const long = typeof raw === 'string' ? { type: raw } : raw;
  if (typeof long !== 'object' || long === null || Array.isArray(long)) throw new Error(`${where}: must be a type (${FIELD_TYPES.join(', ')}) or {type, ...}`);
  for (const key of Object.keys(long)) {
    if (!['type', 'required', 'maxLength', 'min', 'max', 'enum', 'class'].includes(key)) throw new Error(`${where}: unknown member ${key} (allowed: type, required, maxLength, min, max, enum, class)`);
  }
  const { type, required = false, maxLength, min, max, class: target } = long as Exclude<FieldDeclaration, string>;
  const values = (long as Exclude<FieldDeclaration, string>).enum;
  if (!FIELD_TYPES.includes(type)) throw new Error(`${where}: unknown type ${JSON.stringify(type)} (allowed: ${FIELD_TYPES.join(', ')})`);
  if (typeof required !== 'boolean') throw new Error(`${where}: required must be true or false`);
  const numeric = type === 'number' || type === 'integer';
  if (maxLength !== undefined && (type !== 'string' || !Number.isInteger(maxLength) || maxLength < 0)) throw new Error(`${where}: maxLength is a whole number, for a string field only`);
  for (const [bound, value] of [['min', min], ['max', max]] as const) {
    if (value !== undefined && (!numeric || typeof value !== 'number' || !Number.isFinite(value))) throw new Error(`${where}: ${bound} is a number, for a number or integer field only`);
  }
  if (min !== undefined && max !== undefined && min > max) throw new Error(`${where}: min ${min} is above max ${max}`);
  if (values !== undefined) {
    const of = type === 'string' ? 'string' : numeric ? 'number' : undefined;
    if (!of || !Array.isArray(values) || values.length === 0) throw new Error(`${where}: enum is a non-empty list, for a string, number or integer field only`);
    const at = values.findIndex((value) => typeof value !== of || (of === 'number' && !Number.isFinite(value)) || (type === 'integer' && !Number.isInteger(value)));
    if (at >= 0) throw new Error(`${where}: enum value ${typeof values[at] === 'string' ? JSON.stringify(values[at]) : String(values[at])} is not ${type === 'integer' ? 'an integer' : `a ${type === 'number' ? 'finite number' : type}`}`);
  }
  let referenced = target;
  if (type === 'ref' || type === 'set') {
    if (typeof target !== 'string' || !CLASS_NAME.test(target)) throw new Error(`${where}: a ${type} field names the class it references (class: <name>)`);
  } else if (target !== undefined) {
    if (type !== 'file') throw new Error(`${where}: class is for ref, set and file fields only`);
  }
  if (type === 'file') referenced = fileClass;
  const spec: FieldSpec = { type, required, maxLength, min, max, enum: values, class: referenced, expects: '' };
  spec.expects = expectation(spec);
  return spec;
}

function expectation(spec: FieldSpec): string {
  if (spec.enum) return `one of ${spec.enum.map((value) => JSON.stringify(value)).join(', ')}`;
  const range = spec.min !== undefined && spec.max !== undefined ? ` from ${spec.min} to ${spec.max}` : spec.min !== undefined ? ` of at least ${spec.min}` : spec.max !== undefined ? ` of at most ${spec.max}` : '';
  switch (spec.type) {
    case 'string':
      return spec.maxLength === undefined ? 'a string' : `a string of at most ${spec.maxLength} characters`;
    case 'number':
      return `a number${range}`;
    case 'integer':
      return `an integer${range}`;
    case 'boolean':
      return 'true or false';
    case 'date':
      return 'a date (ISO 8601, e.g. 2026-01-15 or 2026-01-15T09:00:00Z, or 20260115T090000+00:00)';
    case 'json':
      return 'any JSON value';
    case 'ref':
      return `a reference {"~ObjectID": "<id>"} to a ${spec.class}`;
    case 'file':
      return `a reference {"~ObjectID": "<id>"} to a file (${spec.class})`;
    case 'set':
      return `a set {"~Elements": [{"~ObjectID": "<id>"}, ...]} of ${spec.class} objects`;
  }
}

function valueSchema(spec: FieldSpec): v.GenericSchema {
  switch (spec.type) {
    case 'string': {
      const checks: v.PipeItem<string, string, v.BaseIssue<unknown>>[] = [];
      if (spec.maxLength !== undefined) checks.push(v.maxLength(spec.maxLength));
      if (spec.enum) checks.push(v.check((value) => spec.enum!.includes(value)));
      return v.pipe(v.string(), ...checks);
    }
    case 'number':
    case 'integer': {
      const checks: v.PipeItem<number, number, v.BaseIssue<unknown>>[] = [v.finite()];
      if (spec.type === 'integer') checks.push(v.integer());
      if (spec.min !== undefined) checks.push(v.minValue(spec.min));
      if (spec.max !== undefined) checks.push(v.maxValue(spec.max));
      if (spec.enum) checks.push(v.check((value) => spec.enum!.includes(value)));
      return v.pipe(v.number(), ...checks);
    }
    case 'boolean':
      return v.boolean();
    case 'date':
      return v.pipe(v.string(), v.regex(DATE), v.check((text) => text.includes('-') ? !Number.isNaN(Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text)) : true));
    case 'json':
      return v.unknown();
    case 'ref':
    case 'file':
      return v.strictObject({ $ref: v.string() });
    case 'set':
      return v.strictObject({ $set: v.array(v.string()) });
  }
}

/**
 * `store` as macros and hooks get it (`context.store`): its `put` checks declared classes as the write
 * path does, so a macro cannot store what a route would refuse.
 */
export function checkedStore(store: ObjectStore, schemas: ClassSchemas): ObjectStore {
  const put: ObjectStore['put'] = async (input) => {
    await schemas.check(input.className, withoutInternal(input.fields));
    return store.put(input);
  };
  return new Proxy(store, {
    get(target, name) {
      if (name === 'put') return put;
      const member = Reflect.get(target, name) as unknown;
      return typeof member === 'function' ? member.bind(target) : member;
    },
  });
}
