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
import { checkCreate, writerOf } from './write-path.js';
import { bodyFields } from './writes.js';
import { CREATE_CHECK, CreateCheckAnswer } from './write-contract.js';

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
      ...CREATE_CHECK.postModelClassesByClassNameCheck,
      auth: 'objects',
      summary: 'Checks up to 1,000 objects as POST /v1/object/{className} would (declaration, create rule, references), writing nothing',
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
