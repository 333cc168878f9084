/**
 * What a class is (PROTOCOL.md 6.2, 6.11): a name declared in `schema`, named in the access rules, or
 * holding objects; never an internal class. One rule for every route that names a class: an existing
 * class without objects lists as the empty set, a name that is no class (a mistyped one) is `404`.
 */
import { ApiError, clip } from '../http/errors.js';
import { plainEquality } from '../query/index.js';
import type { ModelContext } from './model/index.js';
import { parseSelection, type ReadContext, type Selection, type SelectionParams } from './read/index.js';
import { CLASS_NAME } from './names.js';

type ClassesContext = ReadContext & Pick<ModelContext, 'schema'>;

/** Whether `className` names a class. */
export async function isClass(ctx: ClassesContext, className: string): Promise<boolean> {
  if (ctx.internalClasses.has(className) || !CLASS_NAME.test(className)) return false;
  return ctx.schema.isDeclared(className) || ctx.access.names(className) || (await ctx.store.count(className)) > 0;
}

/**
 * `404` when a selection of `className` found nothing because there is no such class, rather than
 * because none of its objects matched (the empty set). Asked only of empty answers, so the others
 * cost nothing. Under the host's `xApi_FindObjects` hook the hook fills listings, so it decides.
 */
export async function requireClass(ctx: ClassesContext, className: string, found: number, where = ''): Promise<void> {
  if (found > 0 || ctx.macros.hook('xApi_FindObjects') || (await isClass(ctx, className))) return;
  throw new ApiError('404', `${where}no class ${clip(className)} (not declared, not in the access rules, no objects)`);
}

/** Declared types whose values are never references: `=` on them is plain equality. */
const PLAIN_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'date']);

/**
 * A selection of `className` from a request's parameters (`parseSelection`), its query text's `=`
 * on fields the class declares as plain values compiled to plain equality (`plainEquality`).
 */
export function classSelection(ctx: ClassesContext, className: string, params: SelectionParams): Selection {
  const selection = parseSelection(className, params);
  const fields = ctx.schema.fields(className);
  if (fields) selection.where = plainEquality(selection.where, (field) => Object.hasOwn(fields, field) && PLAIN_TYPES.has(fields[field]!.type));
  return selection;
}
