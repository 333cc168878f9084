/**
 * The batch route's contract (PROTOCOL.md 6.5): method, path and schemas, without handlers
 * (http/route-spec.ts); batch/routes.ts attaches the handler.
 */
import * as v from 'valibot';
import { spec } from '../http/route-spec.js';
import { Envelope } from '../openapi/schemas.js';

/** Most items in one `/v1/multi` batch (PROTOCOL.md 6.5). */
export const MAX_BATCH_ITEMS = 100;

/** The body: a list of at most 100 items; each item is checked on its own with `ItemSchema` (a bad item fails alone). */
const BatchBodySchema = v.pipe(
  v.array(v.unknown(), 'the body must be a JSON array of {method, path, data?} items'),
  v.maxLength(MAX_BATCH_ITEMS, (issue) => `a batch has at most ${MAX_BATCH_ITEMS} items, not ${(issue.input as unknown[]).length}`),
  v.description('the items: {method, path (relative to the service root, query included), data? (its JSON body)}'),
);

export const BATCH = {
  postMulti: spec({
    method: 'POST',
    path: '/v1/multi',
    body: BatchBodySchema,
    answerSchema: v.array(
      v.object({
        httpStatus: v.pipe(v.number(), v.integer(), v.description("the item's HTTP status")),
        // a macro's own Response (POST /v1/execute) is answered as it came: its JSON, or its text
        result: v.union([Envelope, v.pipe(v.unknown(), v.description("a macro's own answer: its JSON, or its text"))]),
      }),
    ),
  }),
};
