import * as v from 'valibot';
import type { ServiceContext } from '../context.js';
import type { Dispatch } from '../pipeline.js';
import { answerText, errorReply, okReply, toApiError, type Answer } from '../http/envelope.js';
import { asJsonObject, searchAsSent, type ApiRequest } from '../http/request.js';
import { route } from '../http/router.js';
import { parseInput } from '../http/validate.js';
import { BATCH } from './contract.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const MAX_PATH = 4096;

const ItemSchema = v.object({
  method: v.pipe(
    v.string('method must be a string'),
    v.transform((method) => method.toUpperCase()),
    v.check((method) => METHODS.includes(method), `method must be one of ${METHODS.join(', ')}`),
  ),
  path: v.pipe(
    v.string('path must be a string'),
    v.maxLength(MAX_PATH, `path must be at most ${MAX_PATH} characters`),
    v.regex(/^\/(?!\/)/, 'path must start with one / (relative to the service root, e.g. /v1/object/A1)'),
  ),
  data: v.optional(v.unknown()),
});


/**
 * One item as a request of its own: the outer request's headers (appkey, credential), client address
 * and session, the item's method, path and `data` as its JSON body.
 */
function itemRequest(outer: ApiRequest, item: unknown, index: number): ApiRequest {
  const what = `item ${index}`;
  const { method, path, data } = parseInput(ItemSchema, asJsonObject(item, what), what);
  // Concatenated, not resolved against a base: the path can never name another host.
  const url = new URL(`http://odbrest${path}`);
  const headers = new Headers(outer.headers);
  headers.delete('content-length');
  headers.set('content-type', 'application/json');
  return {
    method,
    path: url.pathname,
    target: url.pathname + searchAsSent(url.href),
    searchParams: url.searchParams,
    headers,
    raw: outer.raw,
    clientAddress: outer.clientAddress,
    bodyText: data === undefined ? '' : JSON.stringify(data),
    secure: outer.secure,
    session: outer.session,
    params: {},
    batchItem: true,
  };
}

/** `{httpStatus, result}` of one answer: the integer status and the whole envelope. */
async function itemResult(answer: Answer): Promise<{ httpStatus: number; result: unknown }> {
  const text = await answerText(answer);
  let result: unknown;
  try {
    result = JSON.parse(text);
  } catch {
    result = text; // a macro's own non-JSON answer
  }
  return { httpStatus: answer.status, result };
}

/**
 * `POST /v1/multi`: the items run in order, each as if sent alone with the outer credential; a failing
 * item does not stop the others. Through the secure transport the batch is one message: its items
 * share the session the transport accepted and never touch the replay window.
 */
export function batchRoutes(ctx: ServiceContext, dispatch: Dispatch) {
  return [
    route({
      ...BATCH.postMulti,
      auth: 'session',
      batch: false,
      summary: 'Runs requests in order with this credential; a failing item does not stop the others',
      examples: { body: [{ method: 'GET', path: '/v1/objects/Customer?perPage=0' }, { method: 'GET', path: '/v1/object/NOPE0000' }, { method: 'POST', path: '/v1/execute/countCustomers', data: { city: 'Hamburg' } }, { method: 'POST', path: '/v1/logout' }], answer: [{ httpStatus: 200, result: { status: { internalStatus: '0', statusMessage: 'ok' }, data: { '~Count': 0, '~UnfilteredCount': 300, '~Elements': [] } } }, { httpStatus: 404, result: { status: { internalStatus: '404', statusMessage: 'no object or class NOPE0000' }, data: {} } }, { httpStatus: 200, result: { status: { internalStatus: '0', statusMessage: 'ok' }, data: { city: 'Hamburg', count: 50 } } }, { httpStatus: 400, result: { status: { internalStatus: '400', statusMessage: 'POST /v1/logout is not allowed in /v1/multi (logins, logout and batches are not)' }, data: {} } }] },
      answer: 'one {httpStatus, result} per item, in order: the HTTP status (an integer) and the whole envelope',
      handler: async (request, { body: items }) => {
        const results = [];
        for (const [index, item] of items.entries()) {
          let answer: Answer;
          try {
            answer = await dispatch(itemRequest(request, item, index));
          } catch (error) {
            answer = errorReply(toApiError(error, ctx.onError)); // a malformed item
          }
          results.push(await itemResult(answer));
        }
        return okReply(results);
      },
    }),
  ];
}
