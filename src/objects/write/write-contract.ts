/**
 * The object writes' contracts (PROTOCOL.md 6.3 to 6.12: writes, locks, bulk writes, the recycle bin, the create check): method, path and schemas, without handlers
 * (http/route-spec.ts); the route module attaches the handlers.
 */
import * as v from 'valibot';
import { spec } from '../../http/route-spec.js';
import { clip } from '../../http/errors.js';
import { integerParam, jsonObject } from '../../http/validate.js';
import { MAX_PER_PAGE, SERIALIZATION_PARAM } from '../read/index.js';
import { CLASS_NAME, classNameParam, nameParam, ObjectIdParams } from '../names.js';
import { Nothing, ServedObject } from '../../openapi/schemas.js';
import { DEFAULT_LOCK_MINUTES, MAX_LOCK_MINUTES } from './locks.js';

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

export const LockBodySchema = v.optional(
  v.object({
    minutes: v.optional(
      v.pipe(
        v.number(`minutes must be a whole number from 1 to ${MAX_LOCK_MINUTES}`),
        v.integer(`minutes must be a whole number from 1 to ${MAX_LOCK_MINUTES}`),
        v.minValue(1, `minutes must be a whole number from 1 to ${MAX_LOCK_MINUTES}`),
        v.maxValue(MAX_LOCK_MINUTES, `minutes must be a whole number from 1 to ${MAX_LOCK_MINUTES}`),
        v.description(`how long the lock holds, default ${DEFAULT_LOCK_MINUTES}`),
      ),
    ),
  }),
);

export const MAX_ENTRIES = 100;
export const SecurityBodySchema = v.object({
  security: v.pipe(
    v.array(
      v.object({
        userObjectName: v.pipe(v.string(), v.minLength(1, 'userObjectName must name a user or group'), v.maxLength(128, 'userObjectName must have at most 128 characters')),
        rights: v.pipe(v.number(), v.integer('rights must be an integer from 0 to 31'), v.minValue(0, 'rights must be an integer from 0 to 31'), v.maxValue(31, 'rights must be an integer from 0 to 31')),
      }),
    ),
    v.maxLength(MAX_ENTRIES, `security holds at most ${MAX_ENTRIES} entries`),
    v.description('entries {userObjectName: a user or group name, rights: bits as ~SecurityRights (1 read, 2 write, 4 create, 8 delete, 16 change security)}'),
  ),
  replace: v.optional(v.pipe(v.boolean(), v.description('true: these entries replace all; otherwise merged per name ([] with replace removes them)'))),
});

export const LockStatus = v.strictObject({ isLocked: v.pipe(v.boolean(), v.description('true only when another session holds the lock')), messages: v.array(v.string()) });

export const LOCK = {
  getLockObjectById: spec({ method: 'GET', path: '/v1/lock/object/:id', params: ObjectIdParams('the object'), answerSchema: LockStatus }),
  postLockObjectById: spec({ method: 'POST', path: '/v1/lock/object/:id', params: ObjectIdParams('the object'), body: LockBodySchema, answerSchema: LockStatus }),
  deleteLockObjectById: spec({ method: 'DELETE', path: '/v1/lock/object/:id', params: ObjectIdParams('the object'), answerSchema: LockStatus }),
  postSetObjectSecurityById: spec({ method: 'POST', path: '/v1/setObjectSecurity/:id', params: ObjectIdParams('the object'), body: SecurityBodySchema, answerSchema: Nothing }),
};

/** Objects one check takes (PROTOCOL.md 6.12). */
export const MOST_CHECKED = 1000;

export const CheckBody = v.strictObject({
  Objects: v.pipe(
    v.array(v.unknown(), 'Objects must be a list of objects as a create would send them'),
    v.maxLength(MOST_CHECKED, `Objects holds at most ${MOST_CHECKED} objects; check them in parts`),
    v.description(`at most ${MOST_CHECKED} objects, each as the body of POST /v1/object/{className}`),
  ),
});

export const CheckParams = v.object({
  className: v.pipe(
    v.string(),
    v.check((name) => CLASS_NAME.test(name), (issue) => `class name ${clip(String(issue.input))} must match [A-Za-z][A-Za-z0-9_]{0,63}`),
    v.description('the class the objects would be created in'),
  ),
});

/** What the check answers: how many were checked, and each refused one's index (0-based), code and message. */
export const CreateCheckAnswer = v.strictObject({
  Checked: v.pipe(v.number(), v.integer()),
  Refused: v.array(v.strictObject({ Index: v.pipe(v.number(), v.integer(), v.description('0-based, in Objects')), Code: v.string(), Message: v.string() })),
});

export const CREATE_CHECK = {
  postModelClassesByClassNameCheck: spec({ method: 'POST', path: '/v1/model/classes/:className/check', params: CheckParams, body: CheckBody, answerSchema: CreateCheckAnswer }),
};

export const QUERY = v.optional(v.pipe(v.string(), v.description('the selection: a JSON query object as for listings; empty: the whole class')));

/** The class of the selection (a name that is no class is `404`). */
export const ClassParams = v.object({ className: nameParam('class name', 'the class of the selection') });
export const { rightsControlKey } = WRITE_PARAMS;
export const BulkQuerySchema = v.object({ query: QUERY, rightsControlKey, ...SERIALIZATION_PARAM });
export const ActionQuerySchema = v.object({
  query: QUERY,
  actions: v.pipe(v.string('actions is required: a JSON array of {"type", ...}'), v.description('a JSON array (at most 20) of {"type", ...}: add/remove {object, field, operation?} or a host action')),
  page: integerParam('page', 1_000_000_000, 'the page of the selection, from 0'),
  perPage: integerParam('perPage', MAX_PER_PAGE, 'objects per page, default 50'),
  rightsControlKey,
  ...SERIALIZATION_PARAM,
});

export const BULK = {
  postActionByClassName: spec({ method: 'POST', path: '/v1/action/:className', params: ClassParams, query: ActionQuerySchema }),
  patchObjectsByClassName: spec({ method: 'PATCH', path: '/v1/objects/:className', params: ClassParams, query: BulkQuerySchema, body: v.pipe(jsonObject('object must be a JSON object'), v.description('the fields to change on every selected object, as for PATCH /v1/object/{id}')) }),
};

export const SerializationQuery = v.object(SERIALIZATION_PARAM);

export const RECYCLE = {
  getRecycleBin: spec({ method: 'GET', path: '/v1/recycleBin', query: SerializationQuery }),
  postRecycleBinByIdRestore: spec({ method: 'POST', path: '/v1/recycleBin/:id/restore', params: ObjectIdParams('the recycled object'), query: SerializationQuery }),
  patchPersonalEmptyRecycleBin: spec({ method: 'PATCH', path: '/v1/personal/emptyRecycleBin' }),
};
