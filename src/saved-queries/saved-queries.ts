/**
 * Saved queries (PROTOCOL.md 6.12): per user, at most 200, kept in the object store as one object of
 * an internal class per user (so every store keeps them, every instance sees them, and a user's list
 * changes in one conditional write: two saves at once never lose one).
 */
import { ApiError, clip } from '../http/errors.js';
import { StoreConflictError } from '../storage/errors.js';
import type { ObjectStore } from '../storage/types.js';

/** The internal class of saved-query lists (never served). */
export const SAVED_QUERIES_CLASS = 'SavedQueryList';
export const MAX_SAVED_QUERIES = 200;

/** A saved query as the routes answer it. */
export interface SavedQuery {
  Name: string;
  Class: string;
  Query: string;
  OrderBy?: string;
  Columns?: string[];
}

const listId = (principalId: string) => `SAVEDQ_${principalId}`;

export class SavedQueries {
  constructor(private readonly store: ObjectStore) {}

  /** The user's saved queries, in the order saved. */
  async list(principalId: string): Promise<SavedQuery[]> {
    return (await this.#read(principalId)).queries;
  }

  /** Saves `query` under its name (replacing one of that name); `400` beyond the limit. */
  async save(principalId: string, query: SavedQuery): Promise<void> {
    await this.#change(principalId, (queries) => {
      const at = queries.findIndex((saved) => saved.Name === query.Name);
      if (at >= 0) queries[at] = query;
      else if (queries.length >= MAX_SAVED_QUERIES) throw new ApiError('400', `a user may save at most ${MAX_SAVED_QUERIES} queries; delete one first`);
      else queries.push(query);
    });
  }

  /** Deletes the saved query `name`; `404` when the user has none of that name. */
  async remove(principalId: string, name: string): Promise<void> {
    await this.#change(principalId, (queries) => {
      const at = queries.findIndex((saved) => saved.Name === name);
      if (at < 0) throw new ApiError('404', `no saved query ${JSON.stringify(clip(name))}`);
      queries.splice(at, 1);
    });
  }

  async #read(principalId: string): Promise<{ queries: SavedQuery[]; storeTime: number | null }> {
    const object = await this.store.get(listId(principalId));
    const text = object?.fields._queries;
    return { queries: typeof text === 'string' ? (JSON.parse(text) as SavedQuery[]) : [], storeTime: object?.storeTime ?? null };
  }

  /** Reads, changes and writes the list in one conditional write, again when another write came first. */
  async #change(principalId: string, change: (queries: SavedQuery[]) => void): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const { queries, storeTime } = await this.#read(principalId);
      change(queries);
      try {
        await this.store.put({ id: listId(principalId), className: SAVED_QUERIES_CLASS, fields: { _owner: principalId, _queries: JSON.stringify(queries) }, ifStoreTime: storeTime });
        return;
      } catch (error) {
        if (!(error instanceof StoreConflictError) || attempt >= 5) throw error;
      }
    }
  }
}
