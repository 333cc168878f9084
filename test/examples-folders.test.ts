/**
 * examples/folders: a folder tree served through the `folders` hook (issue 26), run as its comment
 * says (`node examples/folders/server.mjs`) under each Node (the runner's and Node 24), asked over
 * HTTP as a client would.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { clientPassValue } from '../src/index.js';
import { testNodes } from './support/nodes.js';
import { spawnLines, type LineProcess } from './support/processes.js';

const names = (answer: { body: { data: { '~Elements': { Name: string }[] } } }) => answer.body.data['~Elements'].map((o) => o.Name);

describe.each(testNodes())('under $name', ({ path: node }) => {
  let server: LineProcess;
  let base = '';
  let sessionId = '';

  async function get(path: string) {
    const response = await fetch(`${base}${path}`, { headers: { appkey: 'folders-demo', sessionId } });
    return { status: response.status, body: await response.json() };
  }
  const listing = (query: unknown) => get(`/v1/objects/Document?query=${encodeURIComponent(JSON.stringify(query))}`);

  beforeAll(async () => {
    server = spawnLines(node, ['examples/folders/server.mjs'], { PORT: '0' }, { cwd: new URL('../', import.meta.url).pathname });
    base = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(await server.waitFor((line) => line.includes('listening on')))![1]!;
    const login = await fetch(`${base}/v1/login`, { method: 'POST', headers: { appkey: 'folders-demo', 'content-type': 'application/json' }, body: JSON.stringify({ user: 'alice', pass: clientPassValue('alice'), appNames: ['demo'] }) });
    sessionId = (await login.json()).data.sessionId;
  });
  afterAll(() => server?.stop());

  test('a folder path lists its items and those of the folders below it, combined with field conditions', async () => {
    expect(names(await listing({ folderPath: '/Projects/Alpha' }))).toEqual(['Alpha plan', 'Alpha budget']);
    expect(names(await listing({ folderPath: '/Projects', sortIndex: 'Name' }))).toEqual(['Alpha budget', 'Alpha plan', 'Beta plan']);
    expect(names(await listing({ folderPath: '/Projects', Kind: 'plan' }))).toEqual(['Alpha plan', 'Beta plan']);
    expect(names(await listing({ folderType: 'mail' }))).toEqual(['Welcome mail']);
    expect(names(await listing({ folderPath: '/Projects', folderType: 'mail' }))).toEqual([]);
  });

  test('an unknown folder is 404; the tree route shows the folders', async () => {
    const missing = await listing({ folderPath: '/Projects/Gamma' });
    expect([missing.status, missing.body.status]).toEqual([404, { internalStatus: '404', statusMessage: 'no folder /Projects/Gamma' }]);
    const tree = await get('/v1/folders/tree');
    expect(tree.body.data).toEqual([
      { path: '/Mail', type: 'mail', items: 0 },
      { path: '/Mail/Inbox', type: 'mail', items: 1 },
      { path: '/Projects', type: 'documents', items: 0 },
      { path: '/Projects/Alpha', type: 'documents', items: 2 },
      { path: '/Projects/Beta', type: 'documents', items: 1 },
    ]);
  });
});
