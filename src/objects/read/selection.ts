/**
 * The one selection path (PROTOCOL.md 6.2, 6.4): which objects of a class a request selects, as the
 * session may see them. Listings answer a page of it; everything else that works on "the objects a
 * query names" (v2 object data, bulk writes, actions, event subscriptions) goes through here too, so
 * the query language, the access rules and the `xApi_FindObjects` hook hold alike everywhere.
 */
import type { ReadContext } from './context.js';
import { ApiError, clip } from '../../http/errors.js';
import type { ApiRequest } from '../../http/request.js';
import type { FindQuery, OrderBy, StoredObject, Where } from '../../storage/types.js';
import type { ObjectSet } from '../../macros/registry.js';
import { SECURED, type Guard, type Scope } from '../access.js';
import { compileListingQuery, MAX_PATH_REFERENCES, type FolderSelection, type QueryParams, type SelectionMacro } from '../../query/index.js';
import { compileWhere, followsReferences } from '../../storage/filter.js';
import { served } from './served.js';

export const DEFAULT_PER_PAGE = 50;
export const MAX_PER_PAGE = 1000;
/**
 * Most objects the query object's `macro` may receive: the selection it filters is read whole (the
 * macro decides what to keep before paging, so `~Count` and pages are right), and this bounds it. A
 * larger selection is `400`: narrow it with other members first.
 */
export const MAX_MACRO_OBJECTS = 10_000;

/** What a request selects: a class, a filter, an order and a page. */
export interface Selection {
  className: string;
  where: Where;
  /** Absent: creation order. */
  orderBy: OrderBy | undefined;
  reverseOrder: boolean;
  /** 0-based. */
  page: number;
  perPage: number;
  /** The query object's `macro` (6.2): filters the selection before paging. */
  macro?: SelectionMacro;
  /** The query object's `folderPath`/`folderType` (6.2): only the objects the host's `folders` hook names. */
  folder?: FolderSelection;
}

/** The listing's parameters as sent: the query (compiled once by `src/query`), the order and the page. */
export interface SelectionParams extends QueryParams {
  reverseOrder?: 'true' | 'false';
  page?: number;
  perPage?: number;
}

/** A selection from the listing's parameters (`400` naming the member at fault). */
export function parseSelection(className: string, params: SelectionParams): Selection {
  const { where, orderBy, macro, folder } = compileListingQuery(params);
  const selection: Selection = { className, where, orderBy, reverseOrder: params.reverseOrder === 'true', page: params.page ?? 0, perPage: params.perPage ?? DEFAULT_PER_PAGE };
  if (macro) selection.macro = macro;
  if (folder) selection.folder = folder;
  return selection;
}

/** A page of the selection and how many objects matched before paging (`~UnfilteredCount`). */
export interface SelectedPage {
  objects: StoredObject[];
  unfiltered: number;
}

/**
 * The page of `selection` this request's session may read: `404` for an internal class, `403` for a
 * class it may not read. Objects it may not read never show, not even in counts. A folder narrows the
 * filter to the ids the host's `folders` hook names; a macro filters the whole selection (at most
 * `MAX_MACRO_OBJECTS`) before it is paged. `readOnly`: the caller only serializes the page's objects
 * (a listing), which may then be the store's frozen ones (`FindQuery.frozen`).
 */
export async function selectPage(ctx: ReadContext, request: ApiRequest, guard: Guard, selection: Selection, readOnly = false): Promise<SelectedPage> {
  const { className, macro, folder, ...plain } = selection;
  if (folder && !ctx.folders) throw new ApiError('400', `query member ${folder.folderPath === undefined ? 'folderType' : 'folderPath'}: this service has no folders hook`);
  const runMacro = macro && queryMacro(ctx, macro.name);
  if (ctx.internalClasses.has(className)) throw new ApiError('404', `no class ${className}`);
  const scope = await guard.scope('read', className);
  if (scope === 'none') throw new ApiError('403', `this session may not read ${className} objects`);
  const narrowed = folder ? { ...plain, className, where: { $and: [plain.where, { $oids: await folderIds(ctx, request, folder) }] } } : { ...plain, className };
  if (!runMacro) return candidates(ctx, request, guard, scope, narrowed, readOnly);
  const all = await candidates(ctx, request, guard, scope, { ...narrowed, page: 0, perPage: MAX_MACRO_OBJECTS });
  if (all.unfiltered > MAX_MACRO_OBJECTS) {
    throw new ApiError('400', `query member macro: the selection holds ${all.unfiltered} objects, a macro filters at most ${MAX_MACRO_OBJECTS} (narrow it with other members)`);
  }
  const kept = await runMacro(request, className, all.objects, macro.level);
  const offset = selection.page * selection.perPage;
  return { objects: kept.slice(offset, offset + selection.perPage), unfiltered: kept.length };
}

type PlainSelection = Omit<Selection, 'macro' | 'folder'>;

/** The page of a selection without macro and folder: the `xApi_FindObjects` hook's or the store's. */
async function candidates(ctx: ReadContext, request: ApiRequest, guard: Guard, scope: Exclude<Scope, 'none'>, selection: PlainSelection, readOnly = false): Promise<SelectedPage> {
  const { className } = selection;
  const hook = ctx.macros.hook('xApi_FindObjects');
  if (hook) {
    const set: ObjectSet = { ...selection, elements: [] };
    const ok = await hook(ctx.macroContext(request), { objectSet: set });
    if (ok === false) throw new ApiError('500', `xApi_FindObjects could not list ${className}`);
    const objects = await readableOnly(guard, set.elements);
    return { objects, unfiltered: (set.unfilteredCount ?? set.elements.length) - (set.elements.length - objects.length) };
  }
  const offset = selection.page * selection.perPage;
  const where = await readablePaths(ctx, guard, selection.where);
  const query: FindQuery = { className, where, orderBy: selection.orderBy, reverse: selection.reverseOrder };
  if (!where) {
    // paths the store cannot be trusted with (authorize decides per object): every readable object of
    // the class, in order, then the filter in process over the referenced objects the session may read
    const all = { ...query, where: undefined };
    const candidates = scope === 'self' ? await ownObject(ctx, guard, all) : await readableMatches(ctx, guard, all);
    const kept = await throughReadable(ctx, guard, candidates, selection.where);
    return { objects: kept.slice(offset, offset + selection.perPage), unfiltered: kept.length };
  }
  if (scope === 'all' && !guard.authorizes(className)) {
    // whether objects of the class carry per-object security is asked with the page (one round trip
    // on a remote store), or after it where the store does not answer it; the page is used only when none does
    const page: FindQuery = { ...query, offset, limit: selection.perPage, alsoCount: SECURED };
    if (readOnly) page.frozen = true;
    const found = await ctx.store.find(page);
    if (!(await guard.narrowedIn(className, found.alsoCounted))) return { objects: found.objects, unfiltered: found.total };
  }
  // only readable objects are filtered and counted: the others never show, not even in counts
  const readable = scope === 'self' ? await ownObject(ctx, guard, query) : await readableMatches(ctx, guard, query);
  return { objects: readable.slice(offset, offset + selection.perPage), unfiltered: readable.length };
}

/** The ids the host's `folders` hook names for this folder (its own `ApiError`, e.g. `404`, passes through). */
async function folderIds(ctx: ReadContext, request: ApiRequest, folder: FolderSelection): Promise<string[]> {
  const ids = await ctx.folders!(ctx.macroContext(request), folder);
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) throw new Error('the folders hook must return a list of object ids');
  return ids;
}

/**
 * The registered macro a query object names, as the selection runs it: it receives the objects and
 * the session's context (as `/v1/execute` gives it) and returns those to keep, as objects or ids. It
 * can only narrow: what it returns that was not in the selection is not answered. Its own `ApiError`
 * is answered as `/v1/execute` answers it; any other failure is `400` naming the member.
 */
function queryMacro(ctx: ReadContext, name: string) {
  const macro = ctx.macros.callable(name);
  if (!macro) throw new ApiError('400', `query member macro: no macro ${clip(name)}`);
  return async (request: ApiRequest, className: string, objects: StoredObject[], macroLevel: number | undefined): Promise<StoredObject[]> => {
    let result: unknown;
    try {
      result = await macro(ctx.sessionMacroContext(request), { className, objects, macroLevel });
    } catch (error) {
      if (error instanceof ApiError) throw error;
      ctx.onError(error);
      throw new ApiError('400', `query member macro: macro ${name} failed`);
    }
    if (!Array.isArray(result)) throw new ApiError('400', `query member macro: macro ${name} must return the objects (or object ids) to keep`);
    const keep = new Set(result.map((kept: unknown) => (typeof kept === 'string' ? kept : (kept as StoredObject | null)?.id)));
    return objects.filter((object) => keep.has(object.id));
  };
}

/**
 * `where` with every reference path (`$match`) held to the objects the session may read (6.4: an
 * object it may not read is only metadata where another references it, and "filters apply only to
 * readable objects"): a referenced object it may not read never matches, as if it did not exist, so
 * no filter reveals its fields. `undefined` where the host's `authorize` decides per object: then
 * `throughReadable` answers the paths.
 */
async function readablePaths(ctx: ReadContext, guard: Guard, where: Where): Promise<Where | undefined> {
  if (!followsReferences(where)) return where;
  const reach = await guard.pathReach(ctx.internalClasses);
  if (!reach) return undefined;
  const held = (filter: unknown): unknown => {
    if (Array.isArray(filter)) return filter.map(held);
    if (typeof filter !== 'object' || filter === null) return filter;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(filter)) out[key] = key === '$match' ? { $and: [held(value), reach] } : held(value);
    return out;
  };
  return held(where) as Where;
}

/** The objects that match `where`, its paths reaching only objects this session may read (as `GET` serves them). */
async function throughReadable(ctx: ReadContext, guard: Guard, objects: StoredObject[], where: Where): Promise<StoredObject[]> {
  const known = new Map<string, StoredObject | null>();
  // each round loads the referenced objects the last one asked for: one round per reference followed
  for (let round = 0; round <= MAX_PATH_REFERENCES + 1; round++) {
    const missing = new Set<string>();
    const test = compileWhere(where, (id) => {
      const found = known.get(id);
      if (found === undefined) missing.add(id);
      return found ?? undefined;
    });
    const kept = objects.filter((object) => test(object.fields, object));
    if (missing.size === 0) return kept;
    const loaded = await ctx.store.getMany([...missing]);
    const shown = await Promise.all(loaded.map((object) => served(ctx, guard, object)));
    for (const id of missing) known.set(id, null);
    for (const object of shown) if (object) known.set(object.id, object);
  }
  throw new ApiError('400', `query: at most ${MAX_PATH_REFERENCES} references followed in a path`);
}

async function readableOnly(guard: Guard, objects: StoredObject[]): Promise<StoredObject[]> {
  const answers = await Promise.all(objects.map((object) => guard.readable(object)));
  return objects.filter((_, i) => answers[i]);
}

/** A `self` listing: the session's own principal object, when it is of this class and matches. */
async function ownObject(ctx: ReadContext, guard: Guard, query: FindQuery): Promise<StoredObject[]> {
  const own = guard.principalId === undefined ? undefined : await ctx.store.get(guard.principalId);
  if (!own || own.className !== query.className) return [];
  // the store answers the filter (reference paths and all), restricted to the own object
  const { objects } = await ctx.store.find({ className: query.className, where: { $and: [query.where ?? {}, { $oids: [own.id] }] }, limit: 1 });
  return readableOnly(guard, objects);
}

const SCAN_PAGE = 1000;

/** Every match the host's `authorize` lets this session read, in order (it narrows per object, so all are asked). */
async function readableMatches(ctx: ReadContext, guard: Guard, query: FindQuery): Promise<StoredObject[]> {
  const readable: StoredObject[] = [];
  for (let offset = 0; ; offset += SCAN_PAGE) {
    const { objects } = await ctx.store.find({ ...query, offset, limit: SCAN_PAGE });
    readable.push(...(await readableOnly(guard, objects)));
    if (objects.length < SCAN_PAGE) return readable;
  }
}

/**
 * Every object of `selection` this session may read, in its order, up to `limit` (bulk writes and
 * actions, PROTOCOL.md 6.3): the first page of `limit` objects, with how many matched in all, so the
 * caller can refuse a selection larger than it works on.
 */
export async function selectAll(ctx: ReadContext, request: ApiRequest, guard: Guard, selection: Selection, limit: number): Promise<SelectedPage> {
  return selectPage(ctx, request, guard, { ...selection, page: 0, perPage: limit });
}

/**
 * v2's `order` (`"Name ASC"`, `"Nummer DESC"`, 6.9) in the listing's `orderBy` form (`-` in front for
 * descending). A selection orders by one field (`OrderBy`), so a second is `400`, never dropped.
 */
export function orderByOfText(text: string | undefined, what = 'order'): string | undefined {
  const parts = (text ?? '').split(',').map((part) => part.trim()).filter(Boolean);
  if (parts.length === 0) return undefined;
  if (parts.length > 1) throw new ApiError('400', `${what} may name one field only ("Name ASC" or "Name DESC"), not ${parts.length}`);
  const found = /^(\S+)(?:\s+(asc|desc))?$/i.exec(parts[0]!);
  if (!found) throw new ApiError('400', `${what} must be a field name followed by ASC or DESC, e.g. "Name ASC"`);
  return found[2]?.toLowerCase() === 'desc' ? `-${found[1]}` : found[1];
}
