/**
 * The macro route's contract (PROTOCOL.md 7): method, path and schemas, without handlers
 * (http/route-spec.ts); macros/routes.ts attaches the handler.
 */
import * as v from 'valibot';
import { spec } from '../http/route-spec.js';
import { jsonObject } from '../http/validate.js';

export const MACROS = {
  postExecuteByMacroName: spec({
    method: 'POST',
    path: '/v1/execute/:macroName',
    params: v.object({ macroName: v.pipe(v.string(), v.description('the macro, as the host registered it')) }),
    body: v.optional(v.pipe(jsonObject('macro parameters must be a JSON object'), v.description('the macro parameters'))),
    answerSchema: v.pipe(v.unknown(), v.description('what the macro returns (objects serialized)')),
  }),
};
