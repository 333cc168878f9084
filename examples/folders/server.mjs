// A folder tree served through the `folders` hook (PROTOCOL.md 6.2, 6.10): folders are objects of
// class Folder (Name, Type, Parent, Items); a listing's query object names one by path
//   GET /v1/objects/Document?query={"folderPath":"/Projects/Alpha"}
// and the hook answers the ids of its items, which the listing then filters, orders and pages as
// any other (field conditions, queryString, macro, ... all must hold). A host route shows the tree.
// Run: npm run build && node examples/folders/server.mjs   (PORT=3000 by default; user alice, password alice)
import { ApiError, clientPassValue, createService, defineRoute } from 'odbrest';
import { serve } from 'odbrest/node';

const ref = (id) => ({ $ref: id });
const set = (...ids) => ({ $set: ids });

/** The tree: / Projects (Alpha, Beta), Mail (Inbox). */
export const folderData = {
  objects: [
    { '~ClassName': 'User', '~ObjectID': 'USR00001', Name: 'alice', _password: 'alice', _licences: ['demo'] },
    { '~ClassName': 'Document', '~ObjectID': 'DOC00001', Name: 'Alpha plan', Kind: 'plan' },
    { '~ClassName': 'Document', '~ObjectID': 'DOC00002', Name: 'Alpha budget', Kind: 'budget' },
    { '~ClassName': 'Document', '~ObjectID': 'DOC00003', Name: 'Beta plan', Kind: 'plan' },
    { '~ClassName': 'Document', '~ObjectID': 'DOC00004', Name: 'Welcome mail', Kind: 'mail' },
    { '~ClassName': 'Folder', '~ObjectID': 'FLD00001', Name: 'Projects', Type: 'documents' },
    { '~ClassName': 'Folder', '~ObjectID': 'FLD00002', Name: 'Alpha', Type: 'documents', Parent: ref('FLD00001'), Items: set('DOC00001', 'DOC00002') },
    { '~ClassName': 'Folder', '~ObjectID': 'FLD00003', Name: 'Beta', Type: 'documents', Parent: ref('FLD00001'), Items: set('DOC00003') },
    { '~ClassName': 'Folder', '~ObjectID': 'FLD00004', Name: 'Mail', Type: 'mail' },
    { '~ClassName': 'Folder', '~ObjectID': 'FLD00005', Name: 'Inbox', Type: 'mail', Parent: ref('FLD00004'), Items: set('DOC00004') },
  ],
};

/** The folder a path names, walking the tree from the top through the store the hook is given. */
async function folderAt(store, path) {
  let parent;
  for (const name of path.split('/').filter(Boolean)) {
    const where = parent === undefined ? { Name: name, Parent: { $exists: false } } : { Name: name, Parent: { $ref: parent.id } };
    const { objects } = await store.find({ className: 'Folder', where, limit: 1 });
    if (objects.length === 0) throw new ApiError('404', `no folder ${path}`);
    parent = objects[0];
  }
  if (!parent) throw new ApiError('400', 'folderPath must name a folder, e.g. "/Projects/Alpha"');
  return parent;
}

/** Every folder under `folder` (itself included). */
async function subtree(store, folder) {
  const { objects: children } = await store.find({ className: 'Folder', where: { Parent: { $ref: folder.id } }, limit: 1000 });
  return [folder, ...(await Promise.all(children.map((child) => subtree(store, child)))).flat()];
}

/**
 * The `folders` hook: the items of the folder at `folderPath` and of the folders below it; with
 * `folderType` alone, the items of every folder of that type.
 */
export async function folders(context, { folderPath, folderType }) {
  let chosen;
  if (folderPath !== undefined) chosen = await subtree(context.store, await folderAt(context.store, folderPath));
  else chosen = (await context.store.find({ className: 'Folder', where: { Type: folderType }, limit: 1000 })).objects;
  if (folderType !== undefined) chosen = chosen.filter((folder) => folder.fields.Type === folderType);
  return [...new Set(chosen.flatMap((folder) => folder.fields.Items?.$set ?? []))];
}

/** `GET v1/folders/tree`: the folder tree by name, for a client's navigation pane. */
const folderTree = defineRoute({
  method: 'GET',
  path: 'v1/folders/tree',
  summary: 'The folder tree: each folder with its path, type and item count',
  async handler(context) {
    const { objects } = await context.store.find({ className: 'Folder', limit: 1000 });
    const byId = new Map(objects.map((folder) => [folder.id, folder]));
    const pathOf = (folder) => (folder.fields.Parent ? `${pathOf(byId.get(folder.fields.Parent.$ref))}/` : '/') + folder.fields.Name;
    return objects.map((folder) => ({ path: pathOf(folder), type: folder.fields.Type, items: folder.fields.Items?.$set.length ?? 0 })).sort((a, b) => a.path.localeCompare(b.path));
  },
});

export function createFolderService() {
  return createService({
    appKeys: ['folders-demo'],
    data: folderData,
    folders,
    routes: [folderTree],
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const service = createFolderService();
  await service.ready;
  const server = await serve(service, { port: Number(process.env.PORT ?? 3000), hostname: process.env.HOST ?? '127.0.0.1' });
  const base = `http://127.0.0.1:${server.address().port}`;
  console.log(`folders example listening on ${base}`);
  console.log(`login: curl -s ${base}/v1/login -H 'appkey: folders-demo' -H 'content-type: application/json' -d '{"user":"alice","pass":"${clientPassValue('alice')}","appNames":["demo"]}'`);
}
