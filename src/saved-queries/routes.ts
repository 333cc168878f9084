/**
 * `GET /v1/savedQueries`, `PUT` and `DELETE /v1/savedQueries/{name}` (PROTOCOL.md 6.12): any session,
 * each user its own. A query text is checked as a listing's (6.2): `400` naming the position.
 */
import * as v from 'valibot';
import { SavedQueries, SavedQuerySchema, type SavedQuery } from './saved-queries.js';
import { Nothing, setOf } from '../openapi/schemas.js';
import { okReply } from '../http/envelope.js';
import { ApiError, clip } from '../http/errors.js';
import { route } from '../http/router.js';
import { checkClassName } from '../objects/names.js';
import { queryTextWhere } from '../query/index.js';
import type { ServiceContext } from '../context.js';

/** Bounds of a saved query (PROTOCOL.md 6.12), checked before anything else: the text is parsed only within them. */
export const MAX_NAME = 100;
export const MAX_QUERY = 2000;
export const MAX_COLUMNS = 100;
const savedName = v.pipe(v.string('Name must be a string'), v.minLength(1, 'Name must not be empty'), v.maxLength(MAX_NAME, `Name has at most ${MAX_NAME} characters`));
/** A field name (PROTOCOL.md 6.3): 1 to 128 characters, not starting with _, $ or ~. */
const fieldName = (what: string) =>
  v.pipe(
    v.string(`${what} must be a field name`),
    v.minLength(1, `${what} must not be empty`),
    v.maxLength(128, `${what} has at most 128 characters`),
    v.check((name) => !/^[_$~]/.test(name), `${what} must be a field name (not starting with _, $ or ~)`),
  );
export const SavedQueryBody = v.strictObject({
  Name: v.optional(savedName),
  Class: v.pipe(v.string('Class must be a string'), v.maxLength(64, 'Class has at most 64 characters')),
  Query: v.pipe(v.string('Query must be query text (PROTOCOL.md 6.2)'), v.maxLength(MAX_QUERY, `Query has at most ${MAX_QUERY} characters (blank or not)`), v.description('query text (PROTOCOL.md 6.2); "" for none')),
  // a field name, `-` in front for descending (as a listing's orderBy)
  OrderBy: v.optional(
    v.pipe(
      v.string('OrderBy must be a field name'),
      v.check((order) => /^-?[^_$~-]/.test(order) && order.replace(/^-/, '').length <= 128, 'OrderBy must be a field name of 1 to 128 characters (not starting with _, $ or ~), - in front for descending'),
    ),
  ),
  Columns: v.optional(v.pipe(v.array(fieldName('a column'), 'Columns must be a list of field names'), v.maxLength(MAX_COLUMNS, `Columns lists at most ${MAX_COLUMNS} names`))),
});

/** The path parameter naming a saved query (a `PUT` names a new one: at most 100 characters; older ones may have 128). */
const SavedQueryParams = (description: string, max = 128) =>
  v.object({ name: v.pipe(v.string(), v.maxLength(max, `saved query name is longer than ${max} characters`), v.description(description)) });

function savedQuery(queryName: string, body: v.InferOutput<typeof SavedQueryBody>): SavedQuery {
  if (body.Name !== undefined && body.Name !== queryName) throw new ApiError('400', `Name ${JSON.stringify(clip(body.Name))} differs from the name in the path`);
  checkClassName(body.Class, 'Class');
  if (queryName === '') throw new ApiError('400', 'Name must not be empty');
  if (body.Query.trim() !== '') queryTextWhere(body.Query);
  const saved: SavedQuery = { Name: queryName, Class: body.Class, Query: body.Query };
  if (body.OrderBy !== undefined) saved.OrderBy = body.OrderBy;
  if (body.Columns !== undefined) saved.Columns = body.Columns;
  return saved;
}

export function savedQueryRoutes(ctx: Pick<ServiceContext, 'store'>) {
  const saved = new SavedQueries(ctx.store);
  const example: SavedQuery = { Name: 'Kiel customers', Class: 'Customer', Query: 'City = "Kiel" and Active = true', OrderBy: '-Revenue', Columns: ['Name', 'City', 'Revenue'] };
  return [
    route({
      method: 'GET',
      path: '/v1/savedQueries',
      auth: 'session',
      summary: "This user's saved queries, in the order saved",
      examples: { answer: { '~Count': 1, '~UnfilteredCount': 1, '~Elements': [example] } },
      answer: 'a set of {Name, Class, Query, OrderBy?, Columns?}',
      answerSchema: setOf(SavedQuerySchema, 'the saved queries in ~Elements', 'the saved queries in ~Elements', { '~Count': 1, '~UnfilteredCount': 1, '~Elements': [example] }),
      handler: async (request) => {
        const queries = await saved.list(request.session!.principalId);
        return okReply({ '~Count': queries.length, '~UnfilteredCount': queries.length, '~Elements': queries });
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/savedQueries/:name',
      auth: 'session',
      summary: 'Saves a query (class, query text, order, columns) under a name for this user, replacing one of that name; at most 200',
      params: SavedQueryParams(`the saved query, 1 to ${MAX_NAME} characters`, MAX_NAME),
      body: SavedQueryBody,
      examples: { body: example, answer: example },
      answer: 'the saved query',
      answerSchema: SavedQuerySchema,
      handler: async (request, { params, body }) => {
        const query = savedQuery(params.name, body);
        await saved.save(request.session!.principalId, query);
        return okReply(query);
      },
    }),
    route({
      method: 'DELETE',
      path: '/v1/savedQueries/:name',
      auth: 'session',
      summary: "Deletes one of this user's saved queries",
      params: SavedQueryParams('the saved query'),
      answer: 'nothing ({})',
      answerSchema: Nothing,
      errors: ['404'],
      handler: async (request, { params }) => {
        await saved.remove(request.session!.principalId, params.name);
        return okReply({});
      },
    }),
  ];
}
