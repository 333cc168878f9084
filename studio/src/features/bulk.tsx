import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { batchItem, OdbRestError, type BatchItem, type Filter, type LockStatus, type OdbRestClient, type SerializedObject } from 'odbrest/client';
import { Alert } from '../components/Alert.js';
import { Refusals } from '../components/Refusals.js';
import { RefLink } from '../components/Value.js';
import { failureText, messageOf } from '../data.js';
import { batched, refusedItem, writable } from './batch.js';
import { t } from '../i18n/index.js';
import { FieldEditor, fieldSpecs, fromText, type FieldSpec } from './editors.js';
import { notice, touch } from './notice.js';

/** The rows picked: these ids, or every object the query text matches. */
export type Selection = { ids: string[] } | { queryText: string };

/** The most objects one bulk step works on: what `PATCH /v1/objects/{className}` takes (PROTOCOL.md 6.3). */
const MOST = 1000;
/** `~SecurityRights` bits (PROTOCOL.md 6.1): 2 write, 4 delete. */
const WRITE = 2;
const DELETE = 8;
const LABEL_FIELDS = ['Name', 'Name1', 'Title', 'Nummer'];

/** An object the service (or its `~SecurityRights`) refused, and why. */
interface Refusal {
  object: SerializedObject;
  why: string;
}

/** What a bulk step would do: the objects it may, those it may not, and the field's values before. */
interface Plan {
  kind: 'change' | 'delete';
  allowed: SerializedObject[];
  refused: Refusal[];
  field?: string;
  value?: unknown;
}

/**
 * The objects of the selection as they are now (at most 1,000, as a bulk change takes), with what this
 * session may do with each and the fields that name them; `field` too, for the Undo.
 */
async function readSelection(client: OdbRestClient, className: string, selection: Selection, fields: string[]): Promise<SerializedObject[]> {
  const which = 'ids' in selection ? { oids: selection.ids } : selection.queryText.trim() ? { queryText: selection.queryText } : {};
  const set = await client.listObjects(className, { ...which, perPage: MOST, serialization: { type: 'custom', custom: { fieldList: fields }, securityRights: true } });
  if (set['~UnfilteredCount'] > MOST) throw new Error(t('bulkTooMany', { count: set['~UnfilteredCount'].toLocaleString(), most: MOST.toLocaleString() }));
  return set['~Elements'];
}

/**
 * Bulk work on the picked rows (PROTOCOL.md 6.3): one field changed on all of them through `PATCH
 * /v1/objects/{className}` (all or nothing), or all of them moved to the recycle bin (a `/v1/multi` of
 * deletes: 6.3 has no bulk delete). Before either, the objects are read with their `~SecurityRights`:
 * those the session may not change (or delete) are listed with why, and the rest may go ahead. One Undo
 * puts back the values (or restores the objects) that the step changed.
 */
export function Bulk({ client, className, selection, count, fields, onClear }: { client: OdbRestClient; className: string; selection: Selection; count: number; fields: string[]; onClear(): void }) {
  const specs = useSignal<FieldSpec[]>([]);
  const field = useSignal('');
  const text = useSignal('');
  const plan = useSignal<Plan | undefined>(undefined);
  const refused = useSignal<Refusal[]>([]);
  const error = useSignal('');
  const busy = useSignal(false);
  useEffect(() => {
    void fieldSpecs(client, className).then((found) => {
      const declared = found.filter((spec) => spec.type !== 'file');
      const known = new Set(declared.map((spec) => spec.name));
      specs.value = [...declared, ...fields.filter((name) => !known.has(name)).map((name) => ({ name, type: 'string' as const }))];
      field.value ||= specs.value[0]?.name ?? '';
    });
  }, [client, className]);
  const spec = specs.value.find((candidate) => candidate.name === field.value);
  const labels = fields.filter((name) => LABEL_FIELDS.includes(name));

  /** Reads the selection and sorts it into what may go ahead and what may not. */
  const prepare = async (kind: Plan['kind']) => {
    error.value = '';
    refused.value = [];
    busy.value = true;
    try {
      const value = kind === 'change' && spec ? fromText(spec, text.value) : undefined;
      const objects = await readSelection(client, className, selection, [...new Set([...labels, ...(kind === 'change' ? [field.value] : [])])]);
      const bit = kind === 'change' ? WRITE : DELETE;
      const may = (object: SerializedObject) => typeof object['~SecurityRights'] !== 'number' || (object['~SecurityRights'] & bit) !== 0;
      const next: Plan = {
        kind,
        field: field.value,
        value,
        allowed: objects.filter(may),
        refused: objects.filter((object) => !may(object)).map((object) => ({ object, why: t(kind === 'change' ? 'mayNotChange' : 'mayNotDelete') })),
      };
      if (next.refused.length === 0) await carryOut(next);
      else plan.value = next;
    } catch (cause) {
      error.value = failureText(cause);
    } finally {
      busy.value = false;
    }
  };

  const carryOut = async (next: Plan) => {
    plan.value = undefined;
    refused.value = next.refused;
    if (next.allowed.length === 0) return;
    busy.value = true;
    try {
      if (next.kind === 'change') await change(next);
      else await remove(next);
    } catch (cause) {
      error.value = failureText(cause);
    } finally {
      busy.value = false;
    }
  };

  /** The field changed on every allowed object, all or nothing; Undo writes each one's value back where it was not changed since. */
  const change = async ({ allowed, field: name = '', value }: Plan) => {
    const ids = allowed.map((object) => object['~ObjectID']);
    // `oids` is a member of the query object (PROTOCOL.md 6.2), the ids read above: the objects whose values Undo knows
    let changed;
    try {
      changed = await client.updateObjects(className, { [name]: value }, { query: { oids: ids } as unknown as Filter });
    } catch (cause) {
      // a lock refuses the whole change without naming the object: the locks of the selection say which
      if (cause instanceof OdbRestError && cause.internalStatus === '423') refused.value = [...refused.value, ...(await lockedOf(client, allowed))];
      throw cause;
    }
    touch();
    const after = new Map(changed['~Elements'].map((object) => [object['~ObjectID'], object['~StoreTime']]));
    notice.value = {
      text: t('bulkChanged', { field: name, count: changed['~Count'] }),
      action: {
        label: t('undo'),
        run: () =>
          undo(
            allowed.map((object) => batchItem('PATCH', '/v1/object/:id', { params: { id: object['~ObjectID'] }, data: { [name]: writable(object[name]), '~StoreTime': after.get(object['~ObjectID']) } })),
            allowed,
          ),
      },
    };
    onClear();
  };

  /** Every allowed object to the recycle bin; those the service refuses are listed with its reason. Undo restores the others. */
  const remove = async ({ allowed }: Plan) => {
    const results = await batched(
      client,
      allowed.map((object) => batchItem('DELETE', '/v1/object/:id', { params: { id: object['~ObjectID'] }, query: { moveToRecycler: 'true' } })),
    );
    touch();
    const gone = allowed.filter((_, index) => !refusedItem(results[index]!));
    refused.value = [...refused.value, ...allowed.flatMap((object, index) => (refusedItem(results[index]!) ? [{ object, why: results[index]!.result.status.statusMessage }] : []))];
    notice.value = {
      text: t('bulkDeleted', { count: gone.length }),
      action: { label: t('undo'), run: () => undo(gone.map((object) => batchItem('POST', '/v1/recycleBin/:id/restore', { params: { id: object['~ObjectID'] } })), gone) },
    };
    onClear();
  };

  /** Sends the Undo's items; those refused (changed since, or gone) are listed. */
  const undo = async (items: BatchItem[], objects: SerializedObject[]) => {
    try {
      const results = await batched(client, items);
      touch();
      const left = objects.flatMap((object, index) => (refusedItem(results[index]!) ? [{ object, why: results[index]!.result.status.statusMessage }] : []));
      refused.value = left;
      notice.value = { text: left.length === 0 ? t('undone', { count: objects.length }) : t('undonePartly', { count: objects.length - left.length, refused: left.length }), error: left.length > 0 };
    } catch (cause) {
      notice.value = { text: messageOf(cause), error: true };
    }
  };

  const pending = plan.value;
  if (count === 0 && !pending && refused.value.length === 0 && !error.value) return null;
  return (
    <section class="bulk" aria-labelledby="bulk-title">
      <h2 id="bulk-title" class="visually-hidden">
        {t('bulkTitle')}
      </h2>
      {count > 0 && (
        <div class="bulk-bar">
          <strong data-picked={count}>{t('picked', { count })}</strong>
          <label class="inline">
            <span>{t('bulkField')}</span>
            <select value={field.value} onChange={(event) => ((field.value = event.currentTarget.value), (text.value = ''))}>
              {specs.value.map((candidate) => (
                <option key={candidate.name} value={candidate.name}>
                  {candidate.name}
                </option>
              ))}
            </select>
          </label>
          {spec && (
            <span class="bulk-value">
              <label for="bulk-value" class="visually-hidden">
                {t('bulkValue', { field: spec.name })}
              </label>
              <FieldEditor key={spec.name} client={client} spec={spec} id="bulk-value" text={text.value} onInput={(next) => (text.value = next)} />
            </span>
          )}
          <button type="button" class="primary" disabled={busy.value || !spec} onClick={() => void prepare('change')}>
            {t('bulkChange', { count })}
          </button>
          <button type="button" disabled={busy.value} onClick={() => void prepare('delete')}>
            {t('bulkDelete', { count })}
          </button>
          <button type="button" onClick={onClear}>
            {t('clearPicked')}
          </button>
        </div>
      )}
      <Alert text={error.value} />
      {pending && (
        <div class="bulk-confirm" role="alert">
          <p>{t(pending.kind === 'change' ? 'bulkSomeRefusedChange' : 'bulkSomeRefusedDelete', { refused: pending.refused.length, allowed: pending.allowed.length })}</p>
          <Refused refusals={pending.refused} />
          <div class="actions">
            {pending.allowed.length > 0 && (
              <button type="button" class="primary" onClick={() => void carryOut(pending)}>
                {t(pending.kind === 'change' ? 'bulkChangeOthers' : 'bulkDeleteOthers', { count: pending.allowed.length })}
              </button>
            )}
            <button type="button" onClick={() => (plan.value = undefined)}>
              {t('cancel')}
            </button>
          </div>
        </div>
      )}
      {!pending && refused.value.length > 0 && (
        <div class="bulk-refused" role="alert">
          <p>{t('bulkRefused', { count: refused.value.length })}</p>
          <Refused refusals={refused.value} />
        </div>
      )}
    </section>
  );
}

/** The objects of `objects` another session holds a lock on, with who and since when (`/v1/multi` of lock reads). */
async function lockedOf(client: OdbRestClient, objects: SerializedObject[]): Promise<Refusal[]> {
  const results = await batched(client, objects.map((object) => batchItem('GET', '/v1/lock/object/:id', { params: { id: object['~ObjectID'] } })));
  return objects.flatMap((object, index) => {
    const status = results[index]!.result.data as Partial<LockStatus>;
    return status.isLocked ? [{ object, why: status.messages?.join('; ') || t('locked') }] : [];
  });
}

/** Which objects were (or would be) refused, and why, each a link to its panel. */
function Refused({ refusals }: { refusals: Refusal[] }) {
  const rows = refusals.map(({ object, why }) => ({ key: object['~ObjectID'], data: { 'data-object': object['~ObjectID'] }, what: <RefLink value={object} />, why }));
  return <Refusals head={t('object')} rows={rows} />;
}
