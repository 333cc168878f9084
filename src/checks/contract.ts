/**
 * The check routes' contracts (PROTOCOL.md 2.5, 6.9): method, path and schemas, without handlers
 * (http/route-spec.ts); checks/routes.ts attaches the handlers.
 */
import * as v from 'valibot';
import { spec } from '../http/route-spec.js';
import { Nothing } from '../openapi/schemas.js';

const ModuleSchema = v.object({ moduleName: v.string(), moduleVersion: v.string() });
const VersionInfo = v.object({ webserviceVersion: v.string(), structureChangeDate: v.pipe(v.string(), v.isoTimestamp()), listOfModules: v.array(ModuleSchema) });

export const CHECKS = {
  getCheckSession: spec({ method: 'GET', path: '/_CheckSession', answerSchema: Nothing }),
  getCheckService: spec({
    method: 'GET',
    path: '/_CheckService',
    answerSchema: v.object({
      applicationName: v.string(),
      applicationVersion: v.string(),
      webservice: v.object({ version: v.string(), moduleVersion: v.pipe(v.record(v.string(), v.array(ModuleSchema)), v.description('the modules by database name')) }),
    }),
  }),
  getCheckLive: spec({ method: 'GET', path: '/_CheckLive', answerSchema: Nothing }),
  getCheckReady: spec({ method: 'GET', path: '/_CheckReady', answerSchema: v.object({ Problems: v.optional(v.array(v.string())) }) }),
  getVersioninfo: spec({ method: 'GET', path: '/v1/versioninfo', answerSchema: VersionInfo }),
  // the v2 group's own path answers the same (PROTOCOL.md 6.9)
  getVersionInfo: spec({ method: 'GET', path: '/v2/versionInfo', answerSchema: VersionInfo }),
};
