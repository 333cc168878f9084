import type { OrderBy, StoredObject, Where } from '../storage/types.js';

/** A listing request, also what the `xApi_FindObjects` hook receives and fills in (`elements`). */
export interface ObjectSet {
  className: string;
  where: Where;
  /** The listing's order (`orderBy`); absent: creation order. */
  orderBy: OrderBy | undefined;
  page: number;
  perPage: number;
  reverseOrder: boolean;
  /** Filled by the hook: the objects of the requested page. */
  elements: StoredObject[];
  /** Filled by the hook: matches before paging (defaults to `elements.length`). */
  unfilteredCount?: number;
}
