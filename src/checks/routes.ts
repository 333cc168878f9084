import type { ServiceContext } from '../context.js';
import type { ClassSchemas } from '../objects/model/index.js';
import { okReply } from '../http/envelope.js';
import { ApiError } from '../http/errors.js';
import { route } from '../http/router.js';
import { PACKAGE_VERSION } from '../version.js';
import { CHECKS } from './contract.js';


/** What `_CheckService` and `/v1/versioninfo` report, and how long the health check waits (PROTOCOL.md 2.5). */
export interface ServiceCheckOptions {
  /** `applicationName`. Default `odbrest`. */
  applicationName?: string;
  /** `applicationVersion`. Default: this package's version. */
  applicationVersion?: string;
  /** How long `_CheckService` waits for each store before answering `503`. Default 2000 ms. */
  timeoutMs?: number;
}

/** An object id no store holds (ids are alphanumeric), read to see that the object store answers. */
const PROBE_OBJECT_ID = '~odbrest-health';
const PROBE_KEY = 'health:probe';

/** Resolves when `work` settles in time; rejects when it fails or takes longer than `ms`. */
function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** `503` naming the first store that did not answer in time. */
async function checkStores(ctx: ServiceContext, timeoutMs: number): Promise<void> {
  const [store, kv] = await Promise.allSettled([within(timeoutMs, ctx.store.get(PROBE_OBJECT_ID)), within(timeoutMs, ctx.kv.get(PROBE_KEY))]);
  const down = store.status === 'rejected' ? 'the object store' : kv.status === 'rejected' ? 'the key-value store' : undefined;
  if (down) throw new ApiError('503', `${down} does not answer`, { headers: { 'retry-after': '1' } });
}

/** `/_CheckSession`, `/_CheckService` (beside `v1`) and `/v1/versioninfo`. */
export function checkRoutes(ctx: ServiceContext & { readonly schema: ClassSchemas }, options: ServiceCheckOptions = {}) {
  const { applicationName = 'odbrest', applicationVersion = PACKAGE_VERSION, timeoutMs = 2000 } = options;
  if (!(timeoutMs > 0)) throw new Error('serviceCheck.timeoutMs must be positive');
  const modules = [{ moduleName: applicationName, moduleVersion: applicationVersion }];
  const startedAt = new Date(ctx.now()).toISOString();
  return [
    // any credential; the session check itself (201/204) is the route's credential check
    route({
      ...CHECKS.getCheckSession,
      auth: 'session',
      summary: 'Whether the session lives (renews its idle timeout)',
      answer: 'nothing ({})',
      handler: async () => okReply({}),
    }),
    route({
      ...CHECKS.getCheckService,
      auth: 'none',
      appKey: false,
      summary: 'Health check: 0 when the object store and the key-value store answer, else 503 (no appkey needed)',
      examples: { answer: { applicationName: 'odbrest', applicationVersion: '0.1.0', webservice: { version: '0.1.0', moduleVersion: { demo: [{ moduleName: 'odbrest', moduleVersion: '0.1.0' }] } } } },
      answer: 'applicationName, applicationVersion and webservice: {version, moduleVersion}',
      handler: async () => {
        await checkStores(ctx, timeoutMs);
        return okReply({ applicationName, applicationVersion, webservice: { version: PACKAGE_VERSION, moduleVersion: { [ctx.databaseName]: modules } } });
      },
    }),
    route({
      ...CHECKS.getCheckLive,
      auth: 'none',
      appKey: false,
      summary: 'Liveness: 0 while the process answers requests, whatever its stores do (no appkey needed)',
      answer: 'nothing ({})',
      handler: async () => okReply({}),
    }),
    route({
      ...CHECKS.getCheckReady,
      auth: 'none',
      appKey: false,
      summary: 'Readiness: 0 while the stores answer and the instance is not draining, else 503 with Retry-After (no appkey needed); Problems lists stored class declarations that cannot be used',
      answer: 'nothing ({}), or {Problems: [sentences]} when a stored class declaration cannot be used (its class refuses writes; the instance stays ready)',
      errors: ['503'],
      handler: async () => {
        if (ctx.lifecycle.draining) throw new ApiError('503', 'this instance is draining (shutting down); send requests to another', { headers: { 'retry-after': '1' } });
        await checkStores(ctx, timeoutMs);
        // one class's unusable declaration is the same on every instance: reported, the instance stays in rotation
        const problems = ctx.schema.brokenDeclarations().map(({ className, problem }) => `class ${className}: its stored declaration cannot be used, its writes are refused (${problem})`);
        return okReply(problems.length > 0 ? { Problems: problems } : {});
      },
    }),
    // the v2 group's own path answers the same (PROTOCOL.md 6.9), never as a /v1/multi item
    ...[CHECKS.getVersioninfo, CHECKS.getVersionInfo].map(
      (declared) =>
        route({
        ...declared,
        auth: 'session',
        batch: declared.path.startsWith('/v1/'),
        summary: 'The service version and modules',
        examples: { answer: { webserviceVersion: '0.1.0', structureChangeDate: '2026-11-26T01:43:20.792Z', listOfModules: [{ moduleName: 'odbrest', moduleVersion: '0.1.0' }] } },
        answer: 'webserviceVersion, structureChangeDate and listOfModules',
        handler: async () => okReply({ webserviceVersion: PACKAGE_VERSION, structureChangeDate: startedAt, listOfModules: modules }),
        }),
    ),
  ];
}
