/**
 * The v2 group of the product's current client (PROTOCOL.md 6.9): object data by query, by id and by
 * parent object, the model (objects/model/), the host's app configuration, theme, views and file
 * variants. None of them runs as a `/v1/multi` item.
 */
import * as v from 'valibot';
import type { ObjectsContext } from '../objects/context.js';
import { download } from '../files/downloads.js';
import { okReply } from '../http/envelope.js';
import { ApiError, clip } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import { route } from '../http/router.js';
import type { RouteSpec } from '../http/route-spec.js';
import { V2 } from './contract.js';
import type { MacroContext } from '../macros/registry.js';
import { served } from '../objects/read/index.js';
import type { StoredObject } from '../storage/types.js';
import { byId, byParentObject, byQuery, listReply } from './objectdata.js';

/** JSON the host gives, or a function of the request's context answering it. */
export type HostJson = Record<string, unknown> | ((context: MacroContext) => unknown | Promise<unknown>);

/** One item of `POST /v2/view/load`. */
export interface ViewLoadItem {
  viewName: string;
  className?: string;
  type?: string | number | null;
  context?: string | number | null;
}

/** What `GET /v2/file/{objectId}` may ask for beyond the bytes; each is as the query string gave it. */
export interface FileVariantParams {
  page?: string;
  usePdf?: string;
  attachItem?: string;
  zipItem?: string;
  maxSize?: string;
}

/** The host's side of the v2 group (PROTOCOL.md 6.9). Every one is optional. */
export interface V2Options {
  /** `GET /v2/appConfig`. Default `{}`. */
  appConfig?: HostJson;
  /** `GET /v2/appTheme`. Default `{}`. */
  appTheme?: HostJson;
  /** `POST /v2/view/load` (one answer per item) and `/v2/view/action`; without them those routes are `404`. */
  views?: {
    load?: (context: MacroContext, item: ViewLoadItem) => unknown | Promise<unknown>;
    action?: (context: MacroContext, body: Record<string, unknown>) => unknown | Promise<unknown>;
  };
  /**
   * A variant of a file (a page, a PDF, an attachment, a zipped item, a smaller size): the file object
   * (readable by the session) and the parameters asked for; answers the `Response` to send. Without it
   * a request naming any of these parameters is `400`.
   */
  fileVariants?: (context: MacroContext, request: { file: StoredObject; params: FileVariantParams }) => Response | Promise<Response>;
}

const VARIANT_PARAMS = ['page', 'usePdf', 'attachItem', 'zipItem', 'maxSize'] as const;

async function hostJson(ctx: ObjectsContext, request: ApiRequest, given: HostJson | undefined) {
  return okReply(typeof given === 'function' ? ((await given(ctx.macroContext(request))) ?? {}) : (given ?? {}));
}

/** A route of `/v2/objectdata/*`: each item of its body (its contract's `itemsBody`) answered in turn. */
function listRoute<I>(declared: RouteSpec<undefined, undefined, v.GenericSchema<unknown, I[]>, undefined, 'POST'>, summary: string, answer: (request: ApiRequest, item: I, where: string) => Promise<string>) {
  return route({
    ...declared,
    auth: 'objects',
    batch: false,
    summary,
    answer: 'a list in item order, each a set (~Count, ~UnfilteredCount, ~Elements)',
    handler: async (request, { body }) => {
      const items = body as I[];
      const parts: string[] = [];
      for (const [index, each] of items.entries()) parts.push(await answer(request, each, `item ${index}`));
      return listReply(parts);
    },
  });
}

export function v2Routes(ctx: ObjectsContext, options: V2Options = {}) {
  const { views, fileVariants } = options;
  const guard = (request: ApiRequest) => ctx.guard(request);
  return [
    listRoute(V2.postObjectdataByQuery, 'Objects by query text, order, word search and page, per item', (request, item, where) => byQuery(ctx, request, guard(request), item, where)),
    listRoute(V2.postObjectdataById, 'Objects by id (className or classId), per item; missing and unreadable ids left out', (request, item, where) => byId(ctx, request, guard(request), item, where)),
    listRoute(V2.postObjectdataByParentObject, "The objects in a parent's reference or set field, per item", (request, item, where) =>
      byParentObject(ctx, request, guard(request), item, where),
    ),
    route({ ...V2.getAppConfig, auth: 'objects', batch: false, summary: "The host's application configuration ({} by default)", answer: 'host-given JSON', handler: (request) => hostJson(ctx, request, options.appConfig) }),
    route({ ...V2.getAppTheme, auth: 'objects', batch: false, summary: "The host's application theme ({} by default)", answer: 'host-given JSON', handler: (request) => hostJson(ctx, request, options.appTheme) }),
    route({
      ...V2.postViewLoad,
      auth: 'objects',
      batch: false,
      summary: "Views, answered by the host's views hook (404 without one)",
      answer: 'a list in item order, each what the hook answers',
      handler: async (request, { body: items }) => {
        const load = views?.load;
        if (!load) throw new ApiError('404', 'this service has no views (the host gives no views.load hook)');
        const context = ctx.macroContext(request);
        const answers = [];
        for (const item of items) answers.push((await load(context, item)) ?? null);
        return okReply(answers);
      },
    }),
    route({
      ...V2.postViewAction,
      auth: 'objects',
      batch: false,
      summary: "A view's action, answered by the host's views hook (404 without one)",
      answer: 'what the hook answers',
      handler: async (request, { body }) => {
        const action = views?.action;
        if (!action) throw new ApiError('404', 'this service has no view actions (the host gives no views.action hook)');
        return okReply((await action(ctx.macroContext(request), body)) ?? {});
      },
    }),
    route({
      ...V2.getFileById,
      auth: 'objects',
      batch: false,
      summary: "A file's bytes, as /v1/file; page, usePdf, attachItem, zipItem and maxSize go to the host's fileVariants hook",
      rawAnswer: { status: 200, contentType: 'application/octet-stream', description: "the file's bytes (206 for a Range), or the variant the host's hook answers" },
      handler: async (request, { params: { id }, query }) => {
        const asked = VARIANT_PARAMS.filter((name) => query[name] !== undefined);
        if (asked.length === 0) return download(ctx, request, id);
        if (!fileVariants) throw new ApiError('400', `${asked[0]} asks for a file variant, and this service has no fileVariants hook`);
        const file = await served(ctx, ctx.guard(request), await ctx.store.get(id));
        if (!file || file.className !== ctx.files.className) throw new ApiError('404', `no file ${clip(id)}`);
        const params: FileVariantParams = {};
        for (const name of asked) params[name] = query[name];
        return fileVariants(ctx.macroContext(request), { file, params });
      },
    }),
  ];
}
