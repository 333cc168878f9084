/**
 * The saved query routes' contracts (PROTOCOL.md 6.12): method, path and schemas, without handlers (http/route-spec.ts); the
 * route modules attach the handlers.
 */
import * as v from 'valibot';
import { spec } from '../http/route-spec.js';
import { Nothing, setOf } from '../openapi/schemas.js';
import { SavedQuerySchema, type SavedQuery } from './saved-queries.js';

/** An example saved query, for the OpenAPI document. */
export const SAVED_QUERY_EXAMPLE: SavedQuery = { Name: 'Kiel customers', Class: 'Customer', Query: 'City = "Kiel" and Active = true', OrderBy: '-Revenue', Columns: ['Name', 'City', 'Revenue'] };

/** Bounds of a saved query (PROTOCOL.md 6.12), checked before anything else: the text is parsed only within them. */
export const MAX_NAME = 100;
export const MAX_QUERY = 2000;
export const MAX_COLUMNS = 100;
export const savedName = v.pipe(v.string('Name must be a string'), v.minLength(1, 'Name must not be empty'), v.maxLength(MAX_NAME, `Name has at most ${MAX_NAME} characters`));
/** A field name (PROTOCOL.md 6.3): 1 to 128 characters, not starting with _, $ or ~. */
export const fieldName = (what: string) =>
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
export const SavedQueryParams = (description: string, max = 128) =>
  v.object({ name: v.pipe(v.string(), v.maxLength(max, `saved query name is longer than ${max} characters`), v.description(description)) });

export const SAVED_QUERIES = {
  getSavedQueries: spec({ method: 'GET', path: '/v1/savedQueries', answerSchema: setOf(SavedQuerySchema, 'the saved queries in ~Elements', 'the saved queries in ~Elements', { '~Count': 1, '~UnfilteredCount': 1, '~Elements': [SAVED_QUERY_EXAMPLE] }) }),
  putSavedQueriesByName: spec({ method: 'PUT', path: '/v1/savedQueries/:name', params: SavedQueryParams(`the saved query, 1 to ${MAX_NAME} characters`, MAX_NAME), body: SavedQueryBody, answerSchema: SavedQuerySchema }),
  deleteSavedQueriesByName: spec({ method: 'DELETE', path: '/v1/savedQueries/:name', params: SavedQueryParams('the saved query'), answerSchema: Nothing }),
};
