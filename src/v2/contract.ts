/**
 * The `/v2` routes' contracts (PROTOCOL.md 6.9): method, path and schemas, without handlers
 * (http/route-spec.ts); v2/routes.ts attaches the handlers.
 */
import * as v from 'valibot';
import { FileParams } from '../files/downloads.js';
import { spec } from '../http/route-spec.js';
import { itemsBody, passed, text } from './items.js';
import { ByIdItem, ByParentItem, ByQueryItem } from './objectdata.js';

const ViewLoadSchema = v.strictObject({ viewName: text, className: v.optional(text), type: v.optional(passed), context: v.optional(passed) });
const variant = v.optional(v.pipe(v.string(), v.description('passed to the host fileVariants hook')));
const FileQuerySchema = v.object({ page: variant, usePdf: variant, attachItem: variant, zipItem: variant, maxSize: variant });

export const V2 = {
  postObjectdataByQuery: spec({ method: 'POST', path: '/v2/objectdata/byQuery', body: itemsBody(ByQueryItem) }),
  postObjectdataById: spec({ method: 'POST', path: '/v2/objectdata/byid', body: itemsBody(ByIdItem) }),
  postObjectdataByParentObject: spec({ method: 'POST', path: '/v2/objectdata/byParentObject', body: itemsBody(ByParentItem) }),
  getAppConfig: spec({ method: 'GET', path: '/v2/appConfig' }),
  getAppTheme: spec({ method: 'GET', path: '/v2/appTheme' }),
  postViewLoad: spec({ method: 'POST', path: '/v2/view/load', body: itemsBody(ViewLoadSchema) }),
  // the hook gets the whole body, its other members too
  postViewAction: spec({ method: 'POST', path: '/v2/view/action', body: v.looseObject({ action: v.record(v.string(), v.unknown(), 'must be a JSON object') }) }),
  getFileById: spec({ method: 'GET', path: '/v2/file/:id', params: FileParams, query: FileQuerySchema }),
};
