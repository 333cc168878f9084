import type { ObjectsContext } from '../objects/context.js';
import { okReply } from '../http/envelope.js';
import { ApiError, clip } from '../http/errors.js';
import { route } from '../http/router.js';
import { MACROS } from './contract.js';

export function macroRoutes(ctx: ObjectsContext) {
  return [
    route({
      ...MACROS.postExecuteByMacroName,
      auth: 'session',
      summary: 'Runs a macro the host registered (the xApi_* hooks are not callable)',
      examples: { body: { city: 'Berlin' }, answer: { city: 'Berlin', count: 50 } },
      // no body means no parameters; a body must be an object (`null` included in the refusal)
      answer: 'what the macro returns (objects serialized)',
      // a macro's store writes meet the write path's conflicts and locks
      errors: ['404', '409', '423'],
      handler: async (request, { params: { macroName: name }, body }) => {
        const macro = ctx.macros.callable(name);
        if (!macro) throw new ApiError('404', `no macro ${clip(name)}`);
        const params = body ?? {};
        // the session's store: reads as it may read, writes through the write path (objects/write/session-store.ts)
        const result = await macro(ctx.sessionMacroContext(request), params);
        return okReply(result === undefined ? {} : await ctx.serializer.embedded(result, ctx.guard(request)));
      },
    }),
  ];
}
