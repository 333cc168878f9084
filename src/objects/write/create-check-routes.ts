/**
 * `POST /v1/model/classes/{className}/check` (PROTOCOL.md 6.12, checking rows before an import): up
 * to 1,000 objects checked as `POST /v1/object/{className}` would check each, nothing written. The
 * checks are the one write path's (`bodyFields`, `checkCreate`), so a dry run and the import agree.
 */
import * as v from 'valibot';
import type { WriteContext } from './context.js';
import { okReply } from '../../http/envelope.js';
import { ApiError, clip } from '../../http/errors.js';
import type { ApiRequest } from '../../http/request.js';
import { route } from '../../http/router.js';
import { isClass } from '../known-classes.js';
import { CLASS_NAME } from '../names.js';
import { checkCreate, writerOf } from './write-path.js';
import { bodyFields } from './writes.js';

/** Objects one check takes (PROTOCOL.md 6.12). */
export const MOST_CHECKED = 1000;

const CheckBody = v.strictObject({
  Objects: v.pipe(
    v.array(v.unknown(), 'Objects must be a list of objects as a create would send them'),
    v.maxLength(MOST_CHECKED, `Objects holds at most ${MOST_CHECKED} objects; check them in parts`),
    v.description(`at most ${MOST_CHECKED} objects, each as the body of POST /v1/object/{className}`),
  ),
});

const CheckParams = v.object({
  className: v.pipe(
    v.string(),
    v.check((name) => CLASS_NAME.test(name), (issue) => `class name ${clip(String(issue.input))} must match [A-Za-z][A-Za-z0-9_]{0,63}`),
    v.description('the class the objects would be created in'),
  ),
});

/** What the check answers: how many were checked, and each refused one's index (0-based), code and message. */
const CreateCheckAnswer = v.strictObject({
  Checked: v.pipe(v.number(), v.integer()),
  Refused: v.array(v.strictObject({ Index: v.pipe(v.number(), v.integer(), v.description('0-based, in Objects')), Code: v.string(), Message: v.string() })),
});
type Refusal = v.InferOutput<typeof CreateCheckAnswer>['Refused'][number];

/** Each object through the create's own checks; a refusal is its code and message, anything else (a store that does not answer) the answer's. */
async function check(ctx: WriteContext, request: ApiRequest, className: string, objects: unknown[]) {
  if (ctx.internalClasses.has(className) || !(await isClass(ctx, className))) {
    throw new ApiError('404', `no class ${clip(className)} (not declared, not in the access rules, no objects)`);
  }
  const writer = writerOf(ctx, request);
  const refused: Refusal[] = [];
  for (const [index, object] of objects.entries()) {
    try {
      if (typeof object !== 'object' || object === null || Array.isArray(object)) throw new ApiError('400', 'object must be a JSON object');
      await checkCreate(writer, className, await bodyFields(object as Record<string, unknown>, ctx.store, writer.guard, ctx.internalClasses));
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      refused.push({ Index: index, Code: error.code, Message: error.message });
    }
  }
  return okReply({ Checked: objects.length, Refused: refused });
}

export function createCheckRoutes(ctx: WriteContext) {
  return [
    route({
      method: 'POST',
      path: '/v1/model/classes/:className/check',
      auth: 'objects',
      summary: 'Checks up to 1,000 objects as POST /v1/object/{className} would (declaration, create rule, references), writing nothing',
      params: CheckParams,
      body: CheckBody,
      answerSchema: CreateCheckAnswer,
      examples: {
        body: { Objects: [{ Name: 'Nora Berg', City: 'Kiel' }, { Name: 'Ben', AccountManager: { '~ObjectID': 'NOSUCHID' } }] },
        answer: { Checked: 2, Refused: [{ Index: 1, Code: '400', Message: 'field AccountManager references NOSUCHID, which does not exist or may not be read' }] },
      },
      answer: 'Checked: how many objects were checked; Refused: [{Index (0-based), Code (the internalStatus a create would get), Message}]',
      errors: ['404'],
      handler: (request, { params, body }) => check(ctx, request, params.className, body.Objects),
    }),
  ];
}
