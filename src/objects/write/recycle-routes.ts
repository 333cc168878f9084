/**
 * The recycle bin's routes (PROTOCOL.md 6.3): the caller's recycled objects, restoring one, emptying
 * the bin. Deleting into it is `DELETE /v1/object/{id}?moveToRecycler=true` (the write path).
 */
import type { WriteContext } from './context.js';
import { okReply, JsonReply } from '../../http/envelope.js';
import { route } from '../../http/router.js';
import { formatStoreTime, objectAnswer, setAnswer } from '../read/index.js';
import { emptyBin, recycledOf, restore } from './recycle.js';
import { afterWrite } from './write-path.js';
import { RECYCLE } from './write-contract.js';


export function recycleRoutes(ctx: WriteContext) {
  return [
    route({
      ...RECYCLE.getRecycleBin,
      auth: 'objects',
      summary: "This user's recycled objects (at most 1000, oldest first), each with ~DeletedAt",
      examples: { answer: { '~Count': 1, '~UnfilteredCount': 1, '~Elements': [{ '~ClassName': 'Customer', '~ObjectID': '45YTYRPB', '~StoreTime': '20261123T163837+00:00', Name: 'Nora Berg', Number: 301, City: 'Kiel', Active: true, AccountManager: { '~ClassName': 'Employee', '~ObjectID': 'EMP00001', '~StoreTime': '20261123T163830+00:00', Name1: 'Alice', Name2: 'Schmidt', Name3: 'Head of sales', Bild: { '~ClassName': 'Bild', '~ObjectID': 'IMG00001', '~StoreTime': '20261123T163830+00:00' }, Mitarbeiteransprechpartner: { '~ClassName': 'ContactPerson', '~ObjectID': 'CON00001', '~StoreTime': '20261123T163830+00:00', Name: 'carol', Name1: 'Carol', Name2: 'Meyer', Name3: 'Front office', Bild: { '~ClassName': 'Bild', '~ObjectID': 'IMG00003', '~StoreTime': '20261125T225642+00:00' } } }, '~DeletedAt': '20261123T163901+00:00' }] } },
      answer: 'a set of the recycled objects as they were, each with ~DeletedAt',
      handler: async (request, { query: { serialization } }) => {
        const guard = ctx.guard(request);
        const { entries, total } = await recycledOf(ctx, request.session!.principalId);
        const answer = await setAnswer(ctx, request, guard, entries.map((entry) => entry.object), total, serialization);
        // ~DeletedAt beside each object's metadata
        const envelope = JSON.parse(answer.text) as { data: { '~Elements'?: Array<Record<string, unknown>> } };
        envelope.data['~Elements']?.forEach((element, i) => {
          if (typeof element === 'object' && element !== null && entries[i]) element['~DeletedAt'] = formatStoreTime(entries[i].deletedAt);
        });
        return new JsonReply(JSON.stringify(envelope), answer.status, answer.headers, answer.internalStatus);
      },
    }),
    route({
      ...RECYCLE.postRecycleBinByIdRestore,
      auth: 'objects',
      summary: "Puts one of this user's recycled objects back as it was",
      examples: { answer: { '~ClassName': 'Customer', '~ObjectID': '45YTYRPB', '~StoreTime': '20261123T163837+00:00', Name: 'Nora Berg', Number: 301, City: 'Kiel', Active: true, AccountManager: { '~ClassName': 'Employee', '~ObjectID': 'EMP00001', '~StoreTime': '20261123T163830+00:00', Name1: 'Alice', Name2: 'Schmidt', Name3: 'Head of sales', Bild: { '~ClassName': 'Bild', '~ObjectID': 'IMG00001', '~StoreTime': '20261123T163830+00:00' }, Mitarbeiteransprechpartner: { '~ClassName': 'ContactPerson', '~ObjectID': 'CON00001', '~StoreTime': '20261123T163830+00:00', Name: 'carol', Name1: 'Carol', Name2: 'Meyer', Name3: 'Front office', Bild: { '~ClassName': 'Bild', '~ObjectID': 'IMG00003', '~StoreTime': '20261125T225642+00:00' } } } } },
      answer: 'the restored object, serialized as GET /v1/object/{id} answers it',
      handler: async (request, { params: { id }, query: { serialization } }) => {
        const restored = await restore(ctx, request.session!.principalId, id);
        const guard = ctx.guard(request);
        // back in every read: to subscribers (and the host's afterWrite) a restore is the object's creation
        await afterWrite({ ctx, request, guard }, { action: 'create', className: restored.className, object: restored });
        return objectAnswer(ctx, request, guard, restored, serialization);
      },
    }),
    route({
      ...RECYCLE.patchPersonalEmptyRecycleBin,
      auth: 'objects',
      summary: "Deletes this user's recycled objects for good (file bytes included)",
      answer: 'nothing ({})',
      handler: async (request) => {
        await emptyBin(ctx, request.session!.principalId);
        return okReply({});
      },
    }),
  ];
}
