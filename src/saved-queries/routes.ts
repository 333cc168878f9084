/**
 * `GET /v1/savedQueries`, `PUT` and `DELETE /v1/savedQueries/{name}` (PROTOCOL.md 6.12): any session,
 * each user its own. A query text is checked as a listing's (6.2): `400` naming the position.
 */
import * as v from 'valibot';
import { SavedQueries, type SavedQuery } from './saved-queries.js';
import { okReply } from '../http/envelope.js';
import { ApiError, clip } from '../http/errors.js';
import { route, type Route } from '../http/router.js';
import { checkClassName } from '../objects/names.js';
import { queryTextWhere } from '../query/index.js';
import type { ServiceContext } from '../context.js';

const name = (what: string) => v.pipe(v.string(`${what} must be a string`), v.minLength(1, `${what} must not be empty`), v.maxLength(128, `${what} has at most 128 characters`));
export const SavedQueryBody = v.strictObject({
  Name: v.optional(name('Name')),
  Class: name('Class'),
  Query: v.pipe(v.string('Query must be query text (PROTOCOL.md 6.2)'), v.description('query text (PROTOCOL.md 6.2); "" for none')),
  OrderBy: v.optional(v.pipe(v.string('OrderBy must be a string'), v.maxLength(1000, 'OrderBy has at most 1000 characters'))),
  Columns: v.optional(v.pipe(v.array(name('a column'), 'Columns must be a list of field names'), v.maxLength(200, 'Columns lists at most 200 names'))),
});

/** The path parameter naming a saved query: at most 128 characters. */
const SavedQueryParams = (description: string) =>
  v.object({ name: v.pipe(v.string(), v.maxLength(128, 'saved query name is longer than 128 characters'), v.description(description)) });

function savedQuery(queryName: string, body: v.InferOutput<typeof SavedQueryBody>): SavedQuery {
  if (body.Name !== undefined && body.Name !== queryName) throw new ApiError('400', `Name ${JSON.stringify(clip(body.Name))} differs from the name in the path`);
  checkClassName(body.Class, 'Class');
  if (body.Query.trim() !== '') queryTextWhere(body.Query);
  const saved: SavedQuery = { Name: queryName, Class: body.Class, Query: body.Query };
  if (body.OrderBy !== undefined) saved.OrderBy = body.OrderBy;
  if (body.Columns !== undefined) saved.Columns = body.Columns;
  return saved;
}

export function savedQueryRoutes(ctx: Pick<ServiceContext, 'store'>): Route[] {
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
      params: SavedQueryParams('the saved query, at most 128 characters'),
      body: SavedQueryBody,
      examples: { body: example, answer: example },
      answer: 'the saved query',
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
      errors: ['404'],
      handler: async (request, { params }) => {
        await saved.remove(request.session!.principalId, params.name);
        return okReply({});
      },
    }),
  ];
}
