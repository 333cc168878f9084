/**
 * Saved queries (PROTOCOL.md 6.12): per user, at most 200, kept in the object store (so every store
 * keeps them and every instance sees them) as one object of an internal class per saved query: a save
 * writes that one entry, never the user's whole list.
 *
 * A user has 200 slots, `SAVEDQ:<user>:<slot>`; a new name takes a free slot with a create-only write
 * (`ifStoreTime: null`), so two saves at once never take one slot and never pass the limit. Two saves
 * of one new name at once may take two slots: the later one (creation order) then gives its slot back.
 *
 * Before issue 50 a user's queries were one object `SAVEDQ_<user>` holding the whole list: the first
 * access of that user (a read or a write) moves them into slots, in order, and deletes the old object.
 */
import * as v from 'valibot';
import { ApiError, clip } from '../http/errors.js';
import { StoreConflictError } from '../storage/errors.js';
import type { ObjectStore, StoredObject } from '../storage/types.js';

/** The internal class of saved queries (never served); the old one-list-per-user objects have it too. */
export const SAVED_QUERIES_CLASS = 'SavedQueryList';
export const MAX_SAVED_QUERIES = 200;

/** A saved query as the routes answer it (their `answerSchema`). */
export const SavedQuerySchema = v.strictObject({ Name: v.string(), Class: v.string(), Query: v.string(), OrderBy: v.optional(v.string()), Columns: v.optional(v.array(v.string())) });
export type SavedQuery = v.InferOutput<typeof SavedQuerySchema>;

/** The object of the list a user's queries were kept in before issue 50. */
const legacyId = (principalId: string) => `SAVEDQ_${principalId}`;
const slotId = (principalId: string, slot: number) => `SAVEDQ:${principalId}:${slot}`;

const queryOf = (object: StoredObject) => JSON.parse(object.fields._query as string) as SavedQuery;

export class SavedQueries {
  constructor(private readonly store: ObjectStore) {}

  /** The user's saved queries, in the order saved. */
  async list(principalId: string): Promise<SavedQuery[]> {
    await this.#migrate(principalId);
    return (await this.#entries(principalId)).map(queryOf);
  }

  /** Saves `query` under its name (replacing one of that name); `400` beyond the limit. */
  async save(principalId: string, query: SavedQuery): Promise<void> {
    await this.#migrate(principalId);
    const fields = { _owner: principalId, _name: query.Name, _query: JSON.stringify(query) };
    const existing = await this.#named(principalId, query.Name);
    if (existing) {
      await this.store.put({ id: existing.id, className: SAVED_QUERIES_CLASS, fields });
      return;
    }
    const held = await this.store.count(SAVED_QUERIES_CLASS, { _owner: principalId, _name: { $exists: true } });
    if (held >= MAX_SAVED_QUERIES) throw tooMany();
    for (let tried = 0; tried < MAX_SAVED_QUERIES; tried++) {
      const slot = (held + tried) % MAX_SAVED_QUERIES;
      try {
        await this.store.put({ id: slotId(principalId, slot), className: SAVED_QUERIES_CLASS, fields, ifStoreTime: null });
      } catch (error) {
        if (error instanceof StoreConflictError) continue;
        throw error;
      }
      await this.#keepFirst(principalId, query, slotId(principalId, slot));
      return;
    }
    throw tooMany();
  }

  /** Deletes the saved query `name`; `404` when the user has none of that name. */
  async remove(principalId: string, name: string): Promise<void> {
    await this.#migrate(principalId);
    const existing = await this.#named(principalId, name);
    if (!existing || !(await this.store.delete(existing.id))) throw new ApiError('404', `no saved query ${JSON.stringify(clip(name))}`);
  }

  /** The user's saved-query objects (old lists aside), in creation order. */
  async #entries(principalId: string): Promise<StoredObject[]> {
    const { objects } = await this.store.find({ className: SAVED_QUERIES_CLASS, where: { _owner: principalId, _name: { $exists: true } }, limit: MAX_SAVED_QUERIES * 2 });
    return objects;
  }

  async #named(principalId: string, name: string): Promise<StoredObject | undefined> {
    const { objects } = await this.store.find({ className: SAVED_QUERIES_CLASS, where: { _owner: principalId, _name: name }, limit: 1 });
    return objects[0];
  }

  /** After a new name took slot `mine`: when a save of the same name at once took another slot first, this one gives its slot back and writes there. */
  async #keepFirst(principalId: string, query: SavedQuery, mine: string): Promise<void> {
    const { objects } = await this.store.find({ className: SAVED_QUERIES_CLASS, where: { _owner: principalId, _name: query.Name }, limit: 2 });
    const first = objects[0];
    if (!first || first.id === mine) return;
    await this.store.delete(mine);
    await this.store.put({ id: first.id, className: SAVED_QUERIES_CLASS, fields: { _owner: principalId, _name: query.Name, _query: JSON.stringify(query) } });
  }

  /** Moves a list kept the old way (one object per user) into slots, in order, and deletes it. */
  async #migrate(principalId: string): Promise<void> {
    const legacy = await this.store.get(legacyId(principalId));
    const text = legacy?.fields._queries;
    if (!legacy) return;
    const queries = typeof text === 'string' ? (JSON.parse(text) as SavedQuery[]) : [];
    for (const [slot, query] of queries.slice(0, MAX_SAVED_QUERIES).entries()) {
      const fields = { _owner: principalId, _name: query.Name, _query: JSON.stringify(query) };
      // another instance moving the same list at once wrote the same slot: either write stands
      await this.store.put({ id: slotId(principalId, slot), className: SAVED_QUERIES_CLASS, fields, ifStoreTime: null }).catch((error: unknown) => {
        if (!(error instanceof StoreConflictError)) throw error;
      });
    }
    await this.store.delete(legacy.id);
  }
}

const tooMany = () => new ApiError('400', `a user may save at most ${MAX_SAVED_QUERIES} queries; delete one first`);
