/**
 * Access rules (PROTOCOL.md 6.4): per class and action, lists of group names, `"*"` and `"self"`,
 * then the host's `authorize`, which may only narrow. One `Guard` per request answers every question.
 */
import type { Session } from '../auth/sessions.js';
import { RequestMemo, type ApiRequest } from '../http/request.js';
import type { MacroContext } from '../macros/registry.js';
import { andThen, type MaybePromise } from '../maybe.js';
import { isSet, type Fields, type ObjectStore, type StoredObject, type Where } from '../storage/types.js';

/**
 * `security` changes an object's per-object security entries (PROTOCOL.md 6.7): no one by default, and
 * never through `"*"` of the `"*"` class rule unless a rule names it.
 */
export type AccessAction = 'read' | 'create' | 'update' | 'delete' | 'security';
/** Who may do each action on a class: group names, `"*"` (every session allowed to use objects), `"self"`. */
export type ClassAccess = Partial<Record<AccessAction, readonly string[]>>;
/** Rules by class name; `"*"` holds the rule of classes without their own (action by action). */
export type AccessRules = Record<string, ClassAccess>;

/** What `authorize` is asked: `object` is the stored object (absent on create), `fields` what a write stores. */
export interface AccessQuestion {
  action: AccessAction;
  className: string;
  object?: StoredObject;
  fields?: Fields;
  /** The request's `rightsControlKey` parameter (PROTOCOL.md 6.3): an opaque string for the host. */
  rightsControlKey?: string;
}
/** Refuses (false) per object after the class rules allowed; it can never allow what they refuse. */
export type Authorize = (context: MacroContext, question: AccessQuestion) => boolean | Promise<boolean>;

/** The `access` service option. */
export interface AccessOptions {
  /** Merged over the defaults class by class, action by action. */
  rules?: AccessRules;
  authorize?: Authorize;
  /**
   * The classes `authorize` narrows (it is asked about their objects only); absent: every class. The
   * other classes are decided by the rules and per-object security alone, so their listings are
   * answered a page at a time instead of asking `authorize` about every object of the class.
   */
  authorizeClasses?: readonly string[];
  /** The class of user groups, whose `Name`s per-object security entries may name (PROTOCOL.md 6.7). Default `UserGroup`. */
  groupClass?: string;
}

/** `~SecurityRights` bits (PROTOCOL.md 6.1): bit n is 2^(n-1). */
export const RIGHT_BITS: Readonly<Record<AccessAction, number>> = { read: 1, update: 2, create: 4, delete: 8, security: 16 };

/** The internal field holding an object's per-object security entries (PROTOCOL.md 6.7; never served). */
export const SECURITY_FIELD = '_security';

/** The objects that carry per-object security entries (whose class must then be read object by object). */
export const SECURED: Where = Object.freeze({ [SECURITY_FIELD]: Object.freeze({ $exists: true }) });

/** One per-object security entry as stored: a user or group name and its rights bits. */
export interface SecurityEntry {
  name: string;
  rights: number;
}

/** The entries of an object (none: the class rules alone decide). */
export function securityEntries(object: StoredObject): SecurityEntry[] {
  const value = object.fields[SECURITY_FIELD];
  if (!Array.isArray(value)) return [];
  return value.filter((entry): entry is { name: string; rights: number } => typeof entry === 'object' && entry !== null && !Array.isArray(entry) && typeof entry.name === 'string' && typeof entry.rights === 'number');
}

/** A class's objects answered at once where the class rules alone decide (`true`/`false`), `undefined` for one that must be asked (`Guard.readable`). */
export type ClassReader = (object: StoredObject) => boolean | undefined;

/** How much of a class an action reaches: every object, only the session's own principal, or none. */
export type Scope = 'all' | 'self' | 'none';

/** The per-request view of the rules, also what the serializer asks about referenced objects. */
export interface Guard {
  scope(action: AccessAction, className: string): Promise<Scope>;
  /** Class rules (with `self`) and then `authorize`. */
  may(action: AccessAction, className: string, object?: StoredObject, fields?: Fields): Promise<boolean>;
  /** `may('read', ...)`, answered without a promise where the class rules decide (or `authorize` answers at once). */
  readable(object: StoredObject): MaybePromise<boolean>;
  /** See `Reader.classReader`: decided once per class and request. */
  classReader(className: string): MaybePromise<ClassReader | undefined>;
  /** The session's principal id (for `self`). */
  readonly principalId: string | undefined;
  /** Whether the host's `authorize` decides objects of `className` (listings must then ask it per object). */
  authorizes(className: string): boolean;
  /**
   * Whether objects of `className` must be asked one by one: `authorize`, or objects with per-object
   * security. `secured`: how many objects of the class match `SECURED`, when the caller has it
   * already (a listing's `FindResult.alsoCounted`); the store is not asked then.
   */
  narrowedIn(className: string, secured?: number): Promise<boolean>;
  /**
   * The filter an object reached through a reference path (`$match`) must also match, so that a
   * filter never reveals what the session may not read (PROTOCOL.md 6.4): its class is one the session
   * reads (all of it, or `self` and it is the session's own object; never an internal class), and it
   * has no per-object security entries (those are decided per user). `undefined` when the host's
   * `authorize` narrows the rules: it decides per object, which no filter can hold.
   */
  pathReach(internalClasses: ReadonlySet<string>): Promise<Where | undefined>;
}

export class Access {
  readonly #rules: AccessRules;
  readonly #authorize: Authorize | undefined;
  /** The classes `authorize` narrows; `undefined`: all. */
  readonly #authorizeClasses: ReadonlySet<string> | undefined;
  /** Rules of classes declared at run time (PROTOCOL.md 6.12), for classes the host's rules do not name. */
  readonly #runtime = new Map<string, ClassAccess>();
  readonly groupClass: string;
  readonly #guards = new RequestMemo<Guard>();

  constructor(
    private readonly store: ObjectStore,
    options: AccessOptions = {},
    principalClasses: readonly string[],
  ) {
    const rules: AccessRules = { '*': { read: ['*'] } };
    for (const name of principalClasses) rules[name] = { read: ['self'] };
    for (const [name, rule] of Object.entries(options.rules ?? {})) rules[name] = { ...rules[name], ...rule };
    this.#rules = rules;
    this.#authorize = options.authorize;
    this.#authorizeClasses = options.authorizeClasses && new Set(options.authorizeClasses);
    this.groupClass = options.groupClass ?? 'UserGroup';
  }

  /** Whether the host's `authorize` is asked about objects of `className`. */
  authorizes(className: string): boolean {
    return this.#authorize !== undefined && (this.#authorizeClasses === undefined || this.#authorizeClasses.has(className));
  }

  /** Whether the rules name this class itself (not only through `"*"`), the host's or one declared at run time. */
  names(className: string): boolean {
    return this.hostNames(className) || this.#runtime.has(className);
  }

  /** Whether the host's rules (or their defaults, for the principal classes) name this class: its rule is then read-only at run time (PROTOCOL.md 6.12). */
  hostNames(className: string): boolean {
    return className !== '*' && Object.hasOwn(this.#rules, className);
  }

  /** The classes the rules name themselves (`GET /v1/classes` lists them, PROTOCOL.md 6.11). */
  namedClasses(): string[] {
    return [...Object.keys(this.#rules).filter((name) => name !== '*'), ...this.#runtime.keys()];
  }

  /** Sets (or, `undefined`, removes) the rule of a class declared at run time; a class the host's rules name keeps the host's. */
  setRuntimeRule(className: string, rule: ClassAccess | undefined): void {
    if (rule && !this.hostNames(className)) this.#runtime.set(className, rule);
    else this.#runtime.delete(className);
  }

  /** Who may do `action` on `className`. */
  allowed(action: AccessAction, className: string): readonly string[] {
    const rule = Object.hasOwn(this.#rules, className) ? this.#rules[className] : this.#runtime.get(className);
    return rule?.[action] ?? this.#rules['*']?.[action] ?? [];
  }

  /**
   * The guard of a request (one per request, so the session's groups are read once); a write's
   * `rightsControlKey` parameter (its route's input) goes to the host's `authorize`.
   */
  forRequest(request: ApiRequest, context: (request: ApiRequest | undefined) => MacroContext, rightsControlKey?: string): Guard {
    return this.#guards.get(request) ?? this.#guards.set(request, new RequestGuard(this, request.session, context, request, rightsControlKey));
  }

  /** The rules as one request's session sees them. */
  guard(session: Session | undefined, context: () => MacroContext, rightsControlKey?: string): Guard {
    return new RequestGuard(this, session, context, undefined, rightsControlKey);
  }

  /** `authorize`'s answer about an object of a class it narrows (see `authorizes`). */
  askAuthorize(context: MacroContext, question: AccessQuestion): boolean | Promise<boolean> {
    return this.#authorize!(context, question);
  }

  /** Whether the host's `authorize` is set at all (`Guard.pathReach` has no filter then). */
  get hasAuthorize(): boolean {
    return this.#authorize !== undefined;
  }

  /** How many objects of `className` carry per-object security entries. */
  securedCount(className: string): Promise<number> {
    return this.store.count(className, SECURED);
  }

  /** Whether the session's database user is a member of the group named `name`. */
  async inGroup(session: Session, name: string): Promise<boolean> {
    return (await this.groupsOf(session)).has(name);
  }

  /** Whether `name` is a database user's or a group's `Name` (what per-object security entries may name). */
  async knownName(name: string, userClass: string): Promise<boolean> {
    for (const className of [userClass, this.groupClass]) {
      if ((await this.store.find({ className, where: { Name: name }, limit: 1 })).objects.length > 0) return true;
    }
    return false;
  }

  /** The `Name`s of the groups of a session's database user (none for other principals). */
  async groupsOf(session: Session | undefined): Promise<ReadonlySet<string>> {
    if (!session || session.principal !== 'db') return new Set();
    const user = await this.store.get(session.principalId);
    const members = user?.fields.Groups;
    if (!isSet(members) || members.$set.length === 0) return new Set();
    const groups = await this.store.getMany(members.$set);
    return new Set(groups.map((group) => group.fields.Name).filter((name): name is string => typeof name === 'string'));
  }
}

/** A class's objects are all hidden from the session (`Guard.classReader`). */
const hidden: ClassReader = () => false;
/** A class the session reads all of: an object without per-object security is answered at once. */
const open: ClassReader = (object) => (securityEntries(object).length === 0 ? true : undefined);
const ofScope = (reach: Scope): ClassReader | undefined => (reach === 'none' ? hidden : reach === 'self' ? undefined : open);
const ownOnly = (action: AccessAction, allowed: readonly string[]): Scope => (allowed.includes('self') && (action === 'read' || action === 'update') ? 'self' : 'none');

/**
 * One request's guard: its own state in fields and its methods on the shared prototype (as Fastify's
 * `Request` and `Reply`), so a request pays for one object, not a closure per question. What it
 * works out (the session's groups, `authorize`'s macro context, per-class answers) is made on first use.
 */
class RequestGuard implements Guard {
  readonly principalId: string | undefined;
  readonly #access: Access;
  readonly #session: Session | undefined;
  readonly #context: (request: ApiRequest | undefined) => MacroContext;
  readonly #request: ApiRequest | undefined;
  readonly #rightsControlKey: string | undefined;
  #groups: Promise<ReadonlySet<string>> | undefined;
  // the macro context `authorize` is asked with, made once per request
  #macroContext: MacroContext | undefined;
  #secured: Map<string, Promise<boolean>> | undefined;
  #classReaders: Map<string, MaybePromise<ClassReader | undefined>> | undefined;

  constructor(access: Access, session: Session | undefined, context: (request: ApiRequest | undefined) => MacroContext, request: ApiRequest | undefined, rightsControlKey: string | undefined) {
    this.#access = access;
    this.#session = session;
    this.#context = context;
    this.#request = request;
    this.#rightsControlKey = rightsControlKey;
    this.principalId = session?.principalId;
  }

  #groupsOf(): Promise<ReadonlySet<string>> {
    return (this.#groups ??= this.#access.groupsOf(this.#session));
  }

  /** The scope when the class rule decides it without the session's groups, else `undefined`. */
  #ruleScope(action: AccessAction, className: string): Scope | undefined {
    if (!this.#session) return 'none';
    const allowed = this.#access.allowed(action, className);
    if (allowed.includes('*')) return 'all';
    return allowed.some((name) => name !== 'self') ? undefined : ownOnly(action, allowed);
  }

  async scope(action: AccessAction, className: string): Promise<Scope> {
    const known = this.#ruleScope(action, className);
    if (known !== undefined) return known;
    // the session's groups are read (from the store) only when the rule names a group
    const allowed = this.#access.allowed(action, className);
    const mine = await this.#groupsOf();
    return allowed.some((name) => mine.has(name)) ? 'all' : ownOnly(action, allowed);
  }

  // per-object security (PROTOCOL.md 6.7): an object with entries is usable only by the names listed, for their bits
  async #objectRights(object: StoredObject): Promise<number | undefined> {
    const entries = securityEntries(object);
    if (entries.length === 0) return undefined;
    const session = this.#session;
    if (!session) return 0;
    const mine = entries.some((entry) => entry.name !== session.user) ? await this.#groupsOf() : new Set<string>();
    let bits = 0;
    for (const entry of entries) if (entry.name === session.user || mine.has(entry.name)) bits |= entry.rights;
    return bits;
  }

  /** Whether the scope and the object's own rights let `action` through (`authorize` is asked after). */
  #within(action: AccessAction, reach: Scope, rights: number | undefined, object: StoredObject | undefined): boolean {
    // bit 5 on the object, or the class rule `security`
    if (action === 'security') return reach !== 'none' || (rights !== undefined && (rights & RIGHT_BITS.security) !== 0);
    if (reach === 'none' || (reach === 'self' && object?.id !== this.#session?.principalId)) return false;
    return rights === undefined || (rights & RIGHT_BITS[action]) !== 0;
  }

  /** `authorize`'s answer (none: allowed), without a promise when it answers at once. */
  #authorized(action: AccessAction, className: string, object?: StoredObject, fields?: Fields): MaybePromise<boolean> {
    if (!this.#access.authorizes(className)) return true;
    const context = (this.#macroContext ??= this.#context(this.#request));
    return andThen(this.#access.askAuthorize(context, { action, className, object, fields, rightsControlKey: this.#rightsControlKey }), (answer) => answer === true);
  }

  async #asked(action: AccessAction, className: string, object?: StoredObject, fields?: Fields): Promise<boolean> {
    const reach = await this.scope(action, className);
    const rights = object ? await this.#objectRights(object) : undefined;
    if (!this.#within(action, reach, rights, object)) return false;
    return this.#authorized(action, className, object, fields);
  }

  // Most reads are decided by the class rule alone (no group named, no per-object entries, no
  // `authorize`): answered without the awaits the general case needs, with the same checks.
  #decided(action: AccessAction, className: string, object?: StoredObject, fields?: Fields): MaybePromise<boolean> {
    const reach = this.#ruleScope(action, className);
    if (reach === undefined || (object && securityEntries(object).length > 0)) return this.#asked(action, className, object, fields);
    return this.#within(action, reach, undefined, object) && this.#authorized(action, className, object, fields);
  }

  async may(action: AccessAction, className: string, object?: StoredObject, fields?: Fields): Promise<boolean> {
    return this.#decided(action, className, object, fields);
  }

  readable(object: StoredObject): MaybePromise<boolean> {
    return this.#decided('read', object.className, object);
  }

  // where the class rules alone decide (no `authorize`), an object without per-object security is answered at once
  classReader(className: string): MaybePromise<ClassReader | undefined> {
    if (this.#access.authorizes(className)) return undefined;
    const readers = (this.#classReaders ??= new Map());
    let reader = readers.get(className);
    if (reader === undefined && !readers.has(className)) {
      const reach = this.#ruleScope('read', className);
      reader = reach !== undefined ? ofScope(reach) : this.scope('read', className).then(ofScope);
      readers.set(className, reader);
    }
    return reader;
  }

  authorizes(className: string): boolean {
    return this.#access.authorizes(className);
  }

  async narrowedIn(className: string, counted?: number): Promise<boolean> {
    if (this.#access.authorizes(className)) return true;
    const secured = (this.#secured ??= new Map());
    let answer = secured.get(className);
    if (!answer) secured.set(className, (answer = counted === undefined ? this.#access.securedCount(className).then((n) => n > 0) : Promise.resolve(counted > 0)));
    return answer;
  }

  async pathReach(internalClasses: ReadonlySet<string>): Promise<Where | undefined> {
    if (this.#access.hasAuthorize) return undefined;
    // the classes with a rule of their own (the host's and those declared at run time with one), and
    // the internal ones; every other class has the "*" rule
    const named = [...new Set([...this.#access.namedClasses(), ...internalClasses])];
    const scopes = await Promise.all(named.map(async (name) => (internalClasses.has(name) ? 'none' : await this.scope('read', name))));
    const withScope = (wanted: Scope) => named.filter((_, i) => scopes[i] === wanted);
    const anyOther = await this.scope('read', '*');
    const classes: Where = anyOther === 'all' ? { $not: { $classes: [...withScope('self'), ...withScope('none')] } } : { $classes: withScope('all') };
    const principalId = this.#session?.principalId;
    const own = principalId === undefined || withScope('self').length === 0 ? [] : [{ $classes: withScope('self'), $oids: [principalId] }];
    return { $and: [own.length === 0 ? classes : { $or: [classes, ...own] }, { [SECURITY_FIELD]: { $exists: false } }] };
  }
}
