/** The typed client's model and v2 calls (odbrest/client) against the real service. */
import { describe, expect, test } from 'vitest';
import { createClient, OdbRestError, type SerializedObject } from '../../src/client/index.js';
import { demoAccess } from '../../examples/demo-access.mjs';
import { demoSchema } from '../../examples/demo-schema.mjs';
import { MemoryBlobStore } from '../../src/index.js';
import { APP_KEY, demoService, USERS } from '../helpers.js';

async function client() {
  const blobs = new MemoryBlobStore();
  await blobs.put('DOC00001', new Blob(['bytes of a file']).stream());
  const service = await demoService({ access: demoAccess, schema: demoSchema, files: { blobs }, v2: { appConfig: { start: 'crm' } } });
  const odb = createClient({ baseUrl: 'http://odbrest.test/', appKey: APP_KEY, fetch: (input, init) => service.fetch(new Request(input, init)) });
  await odb.login({ user: 'alice', password: USERS.alice, appNames: ['crm'] });
  return odb;
}

describe('client model and v2', () => {
  test('modelStructure, v2 object data, app config, version and file', async () => {
    const odb = await client();
    const model = await odb.modelStructure(['Customer']);
    expect(model['~Elements'][0]).toMatchObject({ Name: 'Customer', Declared: true });
    const [v2model] = await odb.v2.modelStructure([{ className: 'Customer', skipMembers: true }]);
    expect(v2model![0]!.Members).toEqual([]);
    const [ids] = await odb.v2.byId<SerializedObject & { Name: string }>([{ classId: model['~Elements'][0]!.ClassID, ids: ['CUS00001'] }]);
    expect(ids!['~Elements'][0]!.Name).toBe('Ben Bauer');
    const [page] = await odb.v2.byQuery([{ className: 'Customer', perPage: 2, order: 'Number DESC' }]);
    expect(page!['~Elements'].map((o) => o['~ObjectID'])).toEqual(['CUS00300', 'CUS00299']);
    const [parent] = await odb.v2.byParentObject([{ parentOID: 'USR00001', member: 'Groups', idList: true }]);
    expect(parent!['~Count']).toBe(2);
    expect(await odb.v2.appConfig()).toEqual({ start: 'crm' });
    expect(await odb.v2.appTheme()).toEqual({});
    expect(await odb.v2.versionInfo()).toHaveProperty('webserviceVersion');
    const file = await odb.v2.downloadFile('DOC00001');
    expect(await new Response(file.stream).text()).toBe('bytes of a file');
    await expect(odb.v2.downloadFile('DOC00001', { variant: { maxSize: '100' } })).rejects.toMatchObject({ internalStatus: '400' });
    await expect(odb.v2.viewLoad([{ viewName: 'edit' }])).rejects.toBeInstanceOf(OdbRestError);
  });
});
