import type { AuthContext } from './context.js';
import type { Session } from './sessions.js';
import { ApiError, clip } from '../http/errors.js';
import type { Access } from '../objects/access.js';

/** What the administrators' check reads: the `users.admins` group's name and the session's groups. */
export type AdminContext = Pick<AuthContext, 'principals'> & { readonly access: Pick<Access, 'inGroup'> };

/**
 * `403` unless the session is a database user in the `users.admins` group (PROTOCOL.md 2.8, 6.12
 * *admin*). The one check of who administers, run by the dispatcher for the routes declared `admin`.
 */
export async function requireAdmin(ctx: AdminContext, session: Session): Promise<void> {
  const group = ctx.principals.admins;
  if (group === undefined) throw new ApiError('403', 'administration is off on this service (no users.admins group is configured)');
  if (session.principal !== 'db' || !(await ctx.access.inGroup(session, group))) {
    throw new ApiError('403', `only members of the group ${JSON.stringify(clip(group))} may do this`);
  }
}
