import type { ServiceContext } from '../../context.js';
import type { ApiRequest } from '../../http/request.js';
import type { Guard } from '../access.js';
import type { RuntimeModel } from './runtime.js';
import type { ClassSchemas } from './schema.js';

/** What the model adds to the service context (PROTOCOL.md 6.8). */
export interface ModelContext extends ServiceContext {
  /** The declared classes: writes are checked against them. */
  readonly schema: ClassSchemas;
  /** Classes declared at run time (PROTOCOL.md 6.12), applied to `schema` and the access rules. */
  readonly runtimeModel: RuntimeModel;
  /** The access rules as this request's session sees them (made once per request). */
  guard(request: ApiRequest, rightsControlKey?: string): Guard;
}
