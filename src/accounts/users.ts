import { passValue as loginPassValue } from '../auth/principals.js';
import { hashPassword } from '../auth/passwords.js';
import * as v from 'valibot';
import { ApiError, clip } from '../http/errors.js';
import { StoreConflictError } from '../storage/errors.js';
import type { FieldValue, Fields, ObjectStore, StoredObject } from '../storage/types.js';
import { isSet } from '../storage/types.js';
import { defaultPasswordPolicy, type AccountUserOptions } from './options.js';
import type { UserSessions } from './user-sessions.js';

/** Largest password accepted anywhere (PROTOCOL.md 2.8: "passwords over 1 KB refused"), in characters. */
export const MAX_PASSWORD = 1024;

/** A password member (`pass`, `newPass`): a string of at most 1 KB. */
export const passwordMember = (name: string) =>
  v.pipe(
    v.string(`${name} must be a string`),
    v.minLength(1, `${name} must not be empty`),
    v.maxLength(MAX_PASSWORD, `${name} must be at most ${MAX_PASSWORD} characters: longer passwords are refused`),
  );

/**
 * The value a new or current password is hashed and checked as (PROTOCOL.md 2.1), as a login reads
 * `pass`: the MD5 form as it is, anything else MD5-hashed here.
 */
export const passValue = (pass: string): string => loginPassValue(pass)!;

/** Whether a password was given in plain form (so the policy can check it). */
export const isPlainPassword = (pass: string): boolean => passValue(pass) !== pass;

/** A user's licence as `_licences` holds it (PROTOCOL.md 2.7). */
export const LicencesSchema = v.array(
  v.union(
    [
      v.string(),
      v.object({
        app: v.string(),
        parallel: v.pipe(v.number(), v.integer(), v.minValue(0)),
      }),
    ],
    'each licence must be an application name or {"app": name, "parallel": seats (a whole number)}',
  ),
  'Licences must be an array of application names or {"app", "parallel"} entries',
);
export type Licences = v.InferOutput<typeof LicencesSchema>;

/** What an administrator gives for a new user (PROTOCOL.md 2.8: `POST /v1/user`). */
export interface NewUser {
  Name: string;
  pass: string;
  Groups?: readonly string[];
  Description?: string;
  Licences?: Licences;
}

/** What an administrator changes of a user (`PATCH /v1/user/{name}`). */
export interface UserChange {
  Disabled?: boolean;
  Groups?: readonly string[];
  pass?: string;
  Licences?: Licences;
}

const MAX_WRITE_ATTEMPTS = 20;

/**
 * Database users as the account routes and `odbrest user` change them: passwords (hashed once, the
 * policy applied to plain ones), groups by name, licences, the `_disabled` flag. Each change is a
 * conditional write retried on conflict; a new password or a disabled user ends the user's sessions.
 */
export class UserAccounts {
  readonly userClass: string;
  readonly groupClass: string;
  readonly #iterations: number | undefined;
  readonly #policy: NonNullable<AccountUserOptions['passwordPolicy']>;

  constructor(
    private readonly store: ObjectStore,
    readonly sessions: UserSessions,
    options: AccountUserOptions & { className?: string; passwordIterations?: number } = {},
  ) {
    this.userClass = options.className ?? 'User';
    this.groupClass = options.groupClassName ?? 'UserGroup';
    this.#iterations = options.passwordIterations;
    this.#policy = options.passwordPolicy ?? defaultPasswordPolicy;
  }

  async find(name: string): Promise<StoredObject | undefined> {
    const { objects } = await this.store.find({ className: this.userClass, where: { Name: name }, limit: 1 });
    return objects[0];
  }

  /** Throws `400` with the policy's reason when a plain password does not meet it; the MD5 form cannot be checked. */
  async checkPolicy(pass: string, name: string, member = 'newPass'): Promise<void> {
    if (!isPlainPassword(pass)) return;
    const refusal = await this.#policy(pass, { name });
    if (refusal !== undefined) throw new ApiError('400', `${member} refused: ${refusal}`);
  }

  /** The slow hash a password is stored as (one PBKDF2 run). */
  hash(pass: string): Promise<string> {
    return hashPassword(passValue(pass), this.#iterations);
  }

  /** Group ids for group names; an unknown name is `400`. */
  async groupIds(names: readonly string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const name of new Set(names)) {
      const { objects } = await this.store.find({ className: this.groupClass, where: { Name: name }, limit: 1 });
      if (!objects[0]) throw new ApiError('400', `Groups: no group named ${JSON.stringify(clip(name))} (class ${this.groupClass})`);
      ids.push(objects[0].id);
    }
    return ids;
  }

  /** The names of a user's groups. */
  async groupNames(user: StoredObject): Promise<Set<string>> {
    const members = user.fields.Groups;
    if (!isSet(members) || members.$set.length === 0) return new Set();
    const groups = await this.store.getMany(members.$set);
    return new Set(groups.map((group) => group.fields.Name).filter((name): name is string => typeof name === 'string'));
  }

  /** Creates a user; `409` when the name is taken. */
  async create(input: NewUser): Promise<StoredObject> {
    if (await this.find(input.Name)) throw new ApiError('409', `a user named ${JSON.stringify(clip(input.Name))} exists already`);
    await this.checkPolicy(input.pass, input.Name, 'pass');
    const [groups, hash] = await Promise.all([this.groupIds(input.Groups ?? []), this.hash(input.pass)]);
    const fields: Fields = { Name: input.Name, Groups: { $set: groups }, _passwordHash: hash, _licences: (input.Licences ?? []) as FieldValue };
    if (input.Description !== undefined) fields.Description = input.Description;
    const created = await this.store.put({ className: this.userClass, fields });
    // two creates of one name at once: the later one goes again
    const { objects } = await this.store.find({ className: this.userClass, where: { Name: input.Name }, limit: 2 });
    if (objects.length > 1 && objects[0]!.id !== created.id) {
      await this.store.delete(created.id);
      throw new ApiError('409', `a user named ${JSON.stringify(clip(input.Name))} exists already`);
    }
    return created;
  }

  /** Changes a user; a new password or `Disabled: true` ends every session of the user (but `keepSession`). */
  async update(name: string, change: UserChange, keepSession?: string): Promise<StoredObject> {
    const user = await this.find(name);
    if (!user) throw new ApiError('404', `no user named ${JSON.stringify(clip(name))}`);
    if (change.pass !== undefined) await this.checkPolicy(change.pass, name, 'pass');
    const [groups, hash] = await Promise.all([
      change.Groups === undefined ? undefined : this.groupIds(change.Groups),
      change.pass === undefined ? undefined : this.hash(change.pass),
    ]);
    const updated = await this.change(user, (fields) => {
      const next: Fields = { ...fields };
      if (groups !== undefined) next.Groups = { $set: groups };
      if (hash !== undefined) next._passwordHash = hash;
      if (change.Licences !== undefined) next._licences = change.Licences as FieldValue;
      if (change.Disabled === true) next._disabled = true;
      if (change.Disabled === false) delete next._disabled;
      return next;
    });
    if (hash !== undefined || change.Disabled === true) await this.sessions.endAll(user.id, keepSession);
    return updated;
  }

  /** Stores a new password hash for the user (already checked) and ends its sessions but `keepSession`. */
  async setPasswordHash(user: StoredObject, hash: string, keepSession?: string): Promise<void> {
    await this.change(user, (fields) => ({ ...fields, _passwordHash: hash }));
    await this.sessions.endAll(user.id, keepSession);
  }

  /** Read-modify-write of a user's fields, retried when another write came between. */
  async change(user: StoredObject, change: (fields: Fields) => Fields): Promise<StoredObject> {
    let current: StoredObject | undefined = user;
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      current ??= await this.store.get(user.id);
      if (!current) throw new ApiError('404', 'the user no longer exists');
      try {
        return await this.store.put({ id: current.id, className: current.className, fields: change(current.fields), ifStoreTime: current.storeTime });
      } catch (error) {
        if (!(error instanceof StoreConflictError)) throw error;
        current = undefined;
      }
    }
    throw new ApiError('503', 'the user is being changed by other requests, retry later');
  }
}
