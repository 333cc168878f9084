/**
 * Every login answers its user serialized through the new session's access rules (PROTOCOL.md 6.4):
 * a reference the session may not read keeps only its metadata, exactly as `GET /v1/object/{id}` by
 * that session shows the same user. In the demo, alice's employee record references carol, a
 * contact person (custom-login principal) only carol may read.
 */
import { describe, expect, test } from 'vitest';
import { demoAccess } from '../../examples/demo-access.mjs';
import { MemoryObjectStore, type Service } from '../../src/index.js';
import { APP_KEY, call, CONTACTS, demoService, loginBody, USERS } from '../helpers.js';
import { createClient } from '../../src/client/index.js';
import { typescriptClient } from '../interop/clients.js';
import { KEY } from '../interop/vectors.js';
import { nodeKeyPair, nodeSecureLogin, secureCall } from '../secure/node-client.js';
import { enrol, loginWithCode, twoFactorService } from '../two-factor/support.js';
import { totpAt } from '../two-factor/rfc6238.js';

const METADATA = ['~ClassName', '~ObjectID', '~StoreTime'];

/** A login's `data.user`, and the same user as that session reads it by id. */
interface Answered {
  user: any;
  readBack: any;
}

async function readBack(service: Service, headers: Record<string, string>, id = 'USR00001') {
  return (await call(service, 'GET', `/v1/object/${id}`, { headers })).body.data;
}

const LOGINS: Record<string, () => Promise<Answered>> = {
  'POST /v1/login': async () => {
    const service = await demoService({ access: demoAccess });
    const { data } = (await call(service, 'POST', '/v1/login', { json: loginBody('alice', USERS.alice) })).body;
    return { user: data.user, readBack: await readBack(service, { sessionId: data.sessionId }) };
  },
  'POST /v2/login (JWT)': async () => {
    const service = await demoService({ access: demoAccess });
    const { data } = (await call(service, 'POST', '/v2/login', { json: loginBody('alice', USERS.alice) })).body;
    return { user: data.user, readBack: await readBack(service, { authorization: `Bearer ${data.token}` }) };
  },
  'POST /v2/login (hybrid)': async () => {
    const service = await demoService({ access: demoAccess, secure: { serverKey: KEY.privateKey } });
    const connection = { transport: (url: string, init: RequestInit) => service.fetch(new Request(url, init)), baseUrl: 'http://odbrest.test', appKey: APP_KEY };
    const login = await (await typescriptClient()).login(connection, { user: 'alice', password: USERS.alice, appNames: ['crm'] });
    return { user: login.envelope.data.user, readBack: await readBack(service, { sessionId: login.sessionId }) };
  },
  'POST /v2/login/secure': async () => {
    const service = await demoService({ access: demoAccess });
    const login = await nodeSecureLogin(service, nodeKeyPair());
    return { user: login.envelope.data.user, readBack: (await secureCall(service, login, 1, 'GET', '/v1/object/USR00001')).envelope.data };
  },
  'POST /v1/login with a second factor': async () => {
    const { service, clock } = await twoFactorService({ access: demoAccess });
    const { key } = await enrol(service, clock);
    const { data } = (await loginWithCode(service, 'alice', ['hr'], totpAt(key, clock.now()))).body;
    // using up the code stores the user again: the answer shows the record as stored (its ~StoreTime too)
    return { user: data.user, readBack: await readBack(service, { sessionId: data.sessionId }) };
  },
  'POST /v2/login/secure with a second factor': async () => {
    const { service, clock } = await twoFactorService({ access: demoAccess });
    const { key } = await enrol(service, clock);
    const client = createClient({ baseUrl: 'http://odbrest.test', appKey: APP_KEY, fetch: (input, init) => service.fetch(new Request(input, init)) });
    const { user } = await client.loginSecure({ user: 'alice', password: USERS.alice, appNames: ['hr'], twoFactorToken: totpAt(key, clock.now()) });
    return { user, readBack: await client.getObject('USR00001') };
  },
};

describe('a login answers its user as the new session may read it', () => {
  test.each(Object.keys(LOGINS))('%s: the contact person her own employee names is shown in full (issue 25 item 5), and as she reads it by id', async (name) => {
    const { user, readBack } = await LOGINS[name]!();
    expect(user.Employee).toMatchObject({ '~ObjectID': 'EMP00001', Name1: 'Alice' }); // readable: in full
    const contact = user.Employee.Mitarbeiteransprechpartner;
    expect(Object.keys(contact).filter((key) => !key.startsWith('~'))).toEqual(expect.arrayContaining(['Name1', 'Name2', 'Name3', 'Bild']));
    expect(contact).toMatchObject({ '~ClassName': 'ContactPerson', '~ObjectID': 'CON00001', '~StoreTime': expect.any(String) });
    expect(Object.keys(contact).some((key) => key.startsWith('_'))).toBe(false);
    expect(user).toEqual(readBack);
  });

  test('a contact person no employee of hers names stays metadata only (bob reads only dan, not carol)', async () => {
    const service = await demoService({ access: demoAccess });
    const { data } = (await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob) })).body;
    const headers = { sessionId: data.sessionId };
    expect(data.user.Employee.Mitarbeiteransprechpartner).toMatchObject({ '~ObjectID': 'CON00002', Name1: expect.any(String) });
    expect((await call(service, 'GET', '/v1/object/CON00001', { headers })).body.status.internalStatus).toBe('404');
  });

  test('POST /v1/auth/df: the custom-login principal sees only what it may read', async () => {
    // carol references her portrait; here only admins may read portraits, and custom-login principals have no groups
    const store = new MemoryObjectStore();
    const service = await demoService({ store, access: { rules: { ...demoAccess.rules, Bild: { read: ['admins'] } } } });
    const portrait = (await store.get('IMG00003'))!;
    await store.put({ ...portrait, fields: { ...portrait.fields, Caption: 'Carol at the front desk' } });
    const { data } = (await call(service, 'POST', '/v1/auth/df', { json: loginBody('carol', CONTACTS.carol) })).body;
    expect(data.user).toMatchObject({ '~ObjectID': 'CON00001', Name1: 'Carol' });
    expect(Object.keys(data.user.Bild)).toEqual(METADATA);
    expect(data.user).toEqual(await readBack(service, { sessionId: data.sessionId }, 'CON00001'));
  });

  test('the host authorize hook is asked with the new session', async () => {
    const asked: Array<[string | undefined, string]> = [];
    const service = await demoService({
      access: {
        ...demoAccess,
        authorizeClasses: undefined, // this authorize narrows every class
        authorize: (context, { object }) => {
          asked.push([context.session?.principalId, object?.id ?? '']);
          return object?.className !== 'UserGroup';
        },
      },
    });
    const { data } = (await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob) })).body;
    expect(data.user.Groups['~Elements'].map((group: object) => Object.keys(group))).toEqual([METADATA]);
    expect(asked).toContainEqual(['USR00002', 'GRP00003']);
  });
});
