import type { AuthContext } from '../auth/context.js';
import { ApiError, clip } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import type { Access } from '../objects/access.js';

/** `403` unless the request's session is a database user in the `users.admins` group (PROTOCOL.md 2.8, 6.12 *admin*). */
export async function requireAdmin(ctx: Pick<AuthContext, 'principals'> & { access: Access }, request: ApiRequest): Promise<void> {
  const group = ctx.principals.admins;
  if (group === undefined) throw new ApiError('403', 'administration is off on this service (no users.admins group is configured)');
  const session = request.session!;
  if (session.principal !== 'db' || !(await ctx.access.inGroup(session, group))) {
    throw new ApiError('403', `only members of the group ${JSON.stringify(clip(group))} may do this`);
  }
}
