import * as v from 'valibot';
import type { ObjectsContext } from '../objects/context.js';
import { okReply } from '../http/envelope.js';
import { ApiError, clip } from '../http/errors.js';
import { asJsonObject, readJson } from '../http/request.js';
import type { Route } from '../http/router.js';

export function macroRoutes(ctx: ObjectsContext): Route[] {
  return [
    {
      method: 'POST',
      path: '/v1/execute/:macroName',
      auth: 'session',
      summary: 'Runs a macro the host registered (the xApi_* hooks are not callable)',
      examples: { body: { city: 'Berlin' }, answer: { city: 'Berlin', count: 50 } },
      // documented here; checked below (a record schema would take an array)
      body: v.optional(v.pipe(v.record(v.string(), v.unknown()), v.description('the macro parameters'))),
      answer: 'what the macro returns (objects serialized)',
      answerSchema: v.pipe(v.unknown(), v.description('what the macro returns (objects serialized)')),
      // a macro's store writes meet the write path's conflicts and locks
      errors: ['404', '409', '423'],
      handler: async (request) => {
        const name = request.params.macroName!;
        const macro = ctx.macros.callable(name);
        if (!macro) throw new ApiError('404', `no macro ${clip(name)}`);
        // No body means no parameters; a body must be an object (`null` included in the refusal).
        const body = readJson(request);
        const params = body === undefined ? {} : asJsonObject(body, 'macro parameters');
        // the session's store: reads as it may read, writes through the write path (objects/write/session-store.ts)
        const result = await macro(ctx.sessionMacroContext(request), params);
        return okReply(result === undefined ? {} : await ctx.serializer.embedded(result, ctx.guard(request)));
      },
    },
  ];
}
