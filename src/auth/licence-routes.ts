import type { AuthContext } from './context.js';
import { okReply } from '../http/envelope.js';
import { route } from '../http/router.js';
import { LICENCE } from './login-contract.js';


/**
 * `POST /v1/license/release` (PROTOCOL.md 2.7): the session gives back its seats of `appNames` and no
 * longer holds those applications. The session changes first, so a failure in between leaves a seat
 * held a while too long, never an application used without its seat. Names the session does not
 * hold are ignored.
 */
export function licenceRoutes(ctx: AuthContext) {
  return [
    route({
      ...LICENCE.postLicenseRelease,
      auth: 'session',
      summary: 'Gives back the seats of these applications; the session no longer holds them',
      examples: { body: { appNames: ['shop'] } },
      answer: 'nothing ({})',
      handler: async (request, { body: { appNames } }) => {
        const session = request.session!;
        const released = new Set(appNames);
        await ctx.sessions.update(session.id, (current) => ({ ...current, appNames: current.appNames.filter((app) => !released.has(app)) }));
        await ctx.seats.release(session.principalId, session.id, appNames);
        return okReply({}, 'licences released');
      },
    }),
  ];
}
