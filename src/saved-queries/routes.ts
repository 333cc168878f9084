/**
 * `GET /v1/savedQueries`, `PUT` and `DELETE /v1/savedQueries/{name}` (PROTOCOL.md 6.12): any session,
 * each user its own. A query text is checked as a listing's (6.2): `400` naming the position.
 */
import * as v from 'valibot';
import { SavedQueries, type SavedQuery } from './saved-queries.js';
import { okReply } from '../http/envelope.js';
import { ApiError, clip } from '../http/errors.js';
import { route } from '../http/router.js';
import { checkClassName } from '../objects/names.js';
import { queryTextWhere } from '../query/index.js';
import type { ServiceContext } from '../context.js';
import { SAVED_QUERIES, SAVED_QUERY_EXAMPLE, SavedQueryBody } from './contract.js';


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
  return [
    route({
      ...SAVED_QUERIES.getSavedQueries,
      auth: 'session',
      summary: "This user's saved queries, in the order saved",
      examples: { answer: { '~Count': 1, '~UnfilteredCount': 1, '~Elements': [SAVED_QUERY_EXAMPLE] } },
      answer: 'a set of {Name, Class, Query, OrderBy?, Columns?}',
      handler: async (request) => {
        const queries = await saved.list(request.session!.principalId);
        return okReply({ '~Count': queries.length, '~UnfilteredCount': queries.length, '~Elements': queries });
      },
    }),
    route({
      ...SAVED_QUERIES.putSavedQueriesByName,
      auth: 'session',
      summary: 'Saves a query (class, query text, order, columns) under a name for this user, replacing one of that name; at most 200',
      examples: { body: SAVED_QUERY_EXAMPLE, answer: SAVED_QUERY_EXAMPLE },
      answer: 'the saved query',
      handler: async (request, { params, body }) => {
        const query = savedQuery(params.name, body);
        await saved.save(request.session!.principalId, query);
        return okReply(query);
      },
    }),
    route({
      ...SAVED_QUERIES.deleteSavedQueriesByName,
      auth: 'session',
      summary: "Deletes one of this user's saved queries",
      answer: 'nothing ({})',
      errors: ['404'],
      handler: async (request, { params }) => {
        await saved.remove(request.session!.principalId, params.name);
        return okReply({});
      },
    }),
  ];
}
