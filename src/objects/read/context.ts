import type { ApiRequest } from '../../http/request.js';
import type { MacrosContext } from '../../macros/context.js';
import type { Access, Guard } from '../access.js';
import type { Serializer } from './serialize.js';

/** What reading objects adds to the service context (PROTOCOL.md 6.1, 6.2, 6.4). */
export interface ReadContext extends MacrosContext {
  readonly serializer: Serializer;
  /** The access rules (PROTOCOL.md 6.4). */
  readonly access: Access;
  /** The access rules as this request's session sees them (made once per request). */
  guard(request: ApiRequest, rightsControlKey?: string): Guard;
}
