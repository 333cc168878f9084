/**
 * The object reads' contracts (PROTOCOL.md 6.1, 6.2): method, path and schemas, without handlers
 * (http/route-spec.ts); objects/routes.ts attaches the handlers.
 */
import * as v from 'valibot';
import { spec } from '../http/route-spec.js';
import { integerParam } from '../http/validate.js';
import { DEFAULT_PER_PAGE, MAX_PER_PAGE, SERIALIZATION_PARAM } from './read/index.js';
import { ClassNameParams, ObjectIdParams } from './names.js';
import { ClassSummaries, ObjectSet, ServedObject } from '../openapi/schemas.js';

/** The query parameters of a listing (PROTOCOL.md 6.2). */
export const ListingQuerySchema = v.object({
  page: integerParam('page', 1_000_000_000, 'the page, from 0'),
  perPage: integerParam('perPage', MAX_PER_PAGE, `objects per page, default ${DEFAULT_PER_PAGE}`),
  query: v.optional(v.pipe(v.string(), v.description('a filter: a JSON object whose members all must hold: field conditions ($ne, $gt, $gte, $lt, $lte, $in, $prefix, $exists) and the query object members queryString, oids, sortIndex, macro, macroLevel, folderPath, folderType'))),
  orderBy: v.optional(v.pipe(v.string(), v.description('a field name, - in front for descending'))),
  reverseOrder: v.optional(v.picklist(['true', 'false'], 'reverseOrder must be true or false')),
  ...SERIALIZATION_PARAM,
});

export const READ = {
  getObjectById: spec({ method: 'GET', path: '/v1/object/:id', params: ObjectIdParams('an object id, or a class name with no object of that id (lists the class)'), query: ListingQuerySchema, answerSchema: v.union([ServedObject, ObjectSet]) }),
  getObjectsByClassName: spec({ method: 'GET', path: '/v1/objects/:className', params: ClassNameParams, query: ListingQuerySchema, answerSchema: ObjectSet }),
};

export const ReferencedByQuerySchema = v.object({
  page: integerParam('page', 1_000_000_000, 'the page, from 0'),
  perPage: integerParam('perPage', MAX_PER_PAGE, `objects per page, default ${DEFAULT_PER_PAGE}`),
  ...SERIALIZATION_PARAM,
});

export const CLASSES = {
  getClasses: spec({ method: 'GET', path: '/v1/classes', answerSchema: ClassSummaries }),
  getObjectByIdReferencedBy: spec({ method: 'GET', path: '/v1/object/:id/referencedBy', params: ObjectIdParams('the id of the referenced object'), query: ReferencedByQuerySchema, answerSchema: ObjectSet }),
};
