/**
 * The object writes' contracts (PROTOCOL.md 6.3): method, path and schemas, without handlers
 * (http/route-spec.ts); the route module attaches the handlers.
 */
import * as v from 'valibot';
import { spec } from '../../http/route-spec.js';
import { jsonObject } from '../../http/validate.js';
import { SERIALIZATION_PARAM } from '../read/answers.js';
import { classNameParam, ObjectIdParams } from '../names.js';
import { Nothing, ServedObject } from '../../openapi/schemas.js';

/**
 * A create or update body: a JSON object of fields, handed on as it came (a valibot record would drop
 * `__proto__` members, which `bodyFields` refuses by name), `bodyFields` checks each member.
 */
export const ObjectBodySchema = v.pipe(
  jsonObject('object must be a JSON object'),
  v.description('the fields by name; a reference is {"~ObjectID": id}, a set of references {"~Elements": [...]}; ~ members are ignored, _ and $ members refused'),
);

/** The parameters of every write (PROTOCOL.md 6.3); any other value of these is `400`. */
export const WRITE_PARAMS = {
  storeMode: v.optional(v.pipe(v.picklist(['0', '10'], 'storeMode must be 0 (merge the given members) or 10 (replace the whole object)'), v.description('0 (default): merge the given members; 10: the object becomes exactly the body (members not given are removed)'))),
  rightsControlKey: v.optional(v.pipe(v.string(), v.maxLength(1024, 'rightsControlKey must have at most 1024 characters'), v.description('an opaque string handed to the host authorize function'))),
  storeSecurityPolice: v.optional(v.pipe(v.picklist(['0', '10', '20', '30', '40', '50', '60'], 'storeSecurityPolice must be one of 0, 10, 20, 30, 40, 50, 60'), v.description('accepted and ignored'))),
  actions: v.optional(v.pipe(v.string(), v.description('a JSON array (at most 20) of {"type", "when"?: Success|Error|Any, ...}: add/remove {object, field, operation?} or a host action'))),
};
/** The query parameters of a create or update (the answer's `serialization` is read before anything is written). */
export const WriteQuerySchema = v.object({ ...WRITE_PARAMS, ...SERIALIZATION_PARAM });
export const DeleteQuerySchema = v.object({
  rightsControlKey: WRITE_PARAMS.rightsControlKey,
  moveToRecycler: v.optional(v.pipe(v.picklist(['true', 'false'], 'moveToRecycler must be true or false'), v.description("true: to the deleting user's recycle bin (the host's objects.deleteMode sets the default)"))),
});

export const WRITE = {
  postObjectById: spec({ method: 'POST', path: '/v1/object/:id', params: v.object({ id: classNameParam('class name', 'the class of the new object (for GET, PATCH and DELETE this segment is an object id)') }), query: WriteQuerySchema, body: ObjectBodySchema, answerSchema: ServedObject }),
  patchObjectById: spec({ method: 'PATCH', path: '/v1/object/:id', params: ObjectIdParams('the object'), query: WriteQuerySchema, body: v.pipe(ObjectBodySchema, v.description('the fields to change (null stores null); ~StoreTime: the version read (as read, or ISO 8601)')), answerSchema: ServedObject }),
  deleteObjectById: spec({ method: 'DELETE', path: '/v1/object/:id', params: ObjectIdParams('the object'), query: DeleteQuerySchema, answerSchema: Nothing }),
};
