import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { OdbRestConflictError, OdbRestError, type OdbRestClient, type SerializedObject } from 'odbrest/client';
import { referenceLabel, Value } from '../components/Value.js';
import { failureText } from '../data.js';
import { t } from '../i18n/index.js';
import { closeTop, openObject } from '../router.js';
import { changedFields, fieldErrors, FieldForm, fieldSpecs, textsOf, type FieldSpec } from './editors.js';
import { notice, touch } from './notice.js';
import { Alert } from '../components/Alert.js';
import { useFormFocus } from '../focus.js';

/** How the panel reads an object: in full, with what this session may do with it. */
const FULL = { type: 'full', securityRights: true } as const;

/**
 * The writes of the studio (PROTOCOL.md 6.3, 6.7), all through odbrest/client: edit an object under
 * its lock, create one, delete one to the recycle bin with undo, and the recycle bin with restore.
 */

/** Deletes to the recycle bin and offers Undo (a restore) at the foot of the page. */
export async function deleteToBin(client: OdbRestClient, object: SerializedObject): Promise<void> {
  const id = object['~ObjectID'];
  await client.deleteObject(id, { moveToRecycler: true });
  touch();
  notice.value = {
    text: t('movedToBin', { object: referenceLabel(object) }),
    action: {
      label: t('undo'),
      run: () =>
        client.restoreObject(id).then(
          () => touch(),
          (cause) => (notice.value = { text: failureText(cause), error: true }),
        ),
    },
  };
}

/** The object panel's actions when it is not being edited: Edit and Delete (to the recycle bin). */
export function ObjectActions({ client, object, onEdit }: { client: OdbRestClient; object: SerializedObject; onEdit(): void }) {
  const error = useSignal('');
  // ~SecurityRights (PROTOCOL.md 6.1): bit 2 write, bit 4 delete; what the session may not do is not offered
  const rights = typeof object['~SecurityRights'] === 'number' ? object['~SecurityRights'] : 0xff;
  return (
    <div class="object-actions">
      {(rights & 2) !== 0 && (
        <button type="button" class="primary" onClick={onEdit}>
          {t('edit')}
        </button>
      )}
      {(rights & 8) !== 0 && <button
        type="button"
        onClick={() =>
          deleteToBin(client, object).then(
            () => closeTop(),
            (cause) => (error.value = failureText(cause)),
          )
        }
      >
        {t('deleteToBin')}
      </button>}
      <Alert text={error.value} />
    </div>
  );
}

/**
 * Whether the form's fields may be sent: each field its editor refuses gets why and its limits beside
 * it, all at once, with a line above (`error`) and the focus on the first; nothing is sent then.
 */
function fieldsFit(form: HTMLFormElement, specs: FieldSpec[], errors: { value: Record<string, string> }, error: { value: string }): boolean {
  errors.value = fieldErrors(form, specs);
  const first = Object.keys(errors.value)[0];
  if (first === undefined) return true;
  error.value = t('formErrors');
  (form.elements.namedItem(first) as HTMLElement | null)?.focus();
  return false;
}

/** What a save refused with `409` found: the stored version, shown beside the edit. */
function Conflict({ specs, stored, texts, onReload, onOverwrite }: { specs: FieldSpec[]; stored: SerializedObject; texts: Record<string, string>; onReload(): void; onOverwrite(): void }) {
  const storedTexts = textsOf(specs, stored);
  const differing = specs.filter((spec) => (storedTexts[spec.name] ?? '') !== (texts[spec.name] ?? ''));
  return (
    <section class="conflict" role="alert" aria-labelledby="conflict-title">
      <h3 id="conflict-title">{t('conflictTitle')}</h3>
      <p>{t('conflictText', { time: stored['~StoreTime'] })}</p>
      <table class="grid compare">
        <thead>
          <tr>
            <th scope="col">{t('field')}</th>
            <th scope="col">{t('yourEdit')}</th>
            <th scope="col">{t('storedVersion')}</th>
          </tr>
        </thead>
        <tbody>
          {differing.map((spec) => (
            <tr key={spec.name} data-field={spec.name}>
              <th scope="row">{spec.name}</th>
              <td class="mine">{texts[spec.name]}</td>
              <td class="stored">
                <Value value={stored[spec.name]} compact />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="actions">
        <button type="button" onClick={onReload}>
          {t('reloadStored')}
        </button>
        <button type="button" class="primary" onClick={onOverwrite}>
          {t('overwrite')}
        </button>
      </div>
    </section>
  );
}

/**
 * Edits an object under this session's lock (PROTOCOL.md 6.7): taken when the form opens, released
 * when it closes (saved, cancelled, or the panel closed). A save sends the `~StoreTime` the person saw:
 * a `409` shows the stored version beside the edit, to reload or overwrite; a `423` names who holds the lock.
 */
export function ObjectEditor({ client, object, changedMeanwhile = 0, onDone }: { client: OdbRestClient; object: SerializedObject; changedMeanwhile?: number; onDone(saved?: SerializedObject): void }) {
  const id = object['~ObjectID'];
  /** The live version when the edit began: a later one means the object changed meanwhile (flagged before saving). */
  const began = useSignal(changedMeanwhile);
  const specs = useSignal<FieldSpec[] | undefined>(undefined);
  const base = useSignal<SerializedObject>(object);
  const texts = useSignal<Record<string, string>>({});
  const initial = useSignal<Record<string, string>>({});
  const locked = useSignal<'taking' | 'held' | 'refused'>('taking');
  const error = useSignal('');
  const conflict = useSignal<SerializedObject | undefined>(undefined);
  const busy = useSignal(false);
  const form = useRef<HTMLFormElement>(null);
  useFormFocus(form, specs.value !== undefined && locked.value !== 'refused');
  const fieldErrorsShown = useSignal<Record<string, string>>({});

  useEffect(() => {
    let held = false;
    let open = true;
    client.lockObject(id).then(
      () => {
        held = true;
        if (open) locked.value = 'held';
        else void client.unlockObject(id).catch(() => undefined);
      },
      (cause) => {
        if (!open) return;
        locked.value = 'refused';
        error.value = cause instanceof OdbRestError && cause.internalStatus === '423' ? t('lockedBy', { message: cause.message }) : failureText(cause);
      },
    );
    void fieldSpecs(client, object['~ClassName'], object).then((found) => {
      specs.value = found;
      texts.value = initial.value = textsOf(found, object);
    });
    return () => {
      open = false;
      if (held) void client.unlockObject(id).catch(() => undefined);
    };
  }, [client, id]);

  const save = async (storeTime: string) => {
    busy.value = true;
    error.value = '';
    try {
      const fields = changedFields(specs.value ?? [], texts.value, initial.value);
      const saved = Object.keys(fields).length === 0 ? base.value : await client.updateObject(id, fields, { storeTime, serialization: FULL });
      touch();
      onDone(saved);
    } catch (cause) {
      if (cause instanceof OdbRestConflictError) {
        conflict.value = await client.getObject(id, { serialization: FULL }).catch(() => undefined);
        if (!conflict.value) error.value = failureText(cause);
      } else error.value = failureText(cause);
    } finally {
      busy.value = false;
    }
  };

  const stored = conflict.value;
  return (
    <form
      ref={form}
      class="object-editor"
      noValidate
      aria-label={t('editing', { object: id })}
      onSubmit={(event) => {
        event.preventDefault();
        error.value = '';
        if (fieldsFit(event.currentTarget, specs.value ?? [], fieldErrorsShown, error)) void save(base.value['~StoreTime']);
      }}
    >
      <p class="hint" data-lock={locked.value}>
        {locked.value === 'held' ? t('lockHeld') : locked.value === 'taking' ? t('lockTaking') : ''}
      </p>
      {changedMeanwhile !== began.value && !stored && (
        <p class="error changed-meanwhile" role="alert">
          {t('changedMeanwhile')}
        </p>
      )}
      <Alert text={error.value} />
      {specs.value && locked.value !== 'refused' && (
        <FieldForm client={client} specs={specs.value} texts={texts.value} errors={fieldErrorsShown.value} prefix={`edit-${id}`} onInput={(name, text) => (texts.value = { ...texts.value, [name]: text })} />
      )}
      {stored && specs.value && (
        <Conflict
          specs={specs.value}
          stored={stored}
          texts={texts.value}
          onReload={() => {
            began.value = changedMeanwhile;
            base.value = stored;
            texts.value = initial.value = textsOf(specs.value!, stored);
            conflict.value = undefined;
          }}
          onOverwrite={() => {
            began.value = changedMeanwhile;
            base.value = stored;
            initial.value = textsOf(specs.value!, stored);
            conflict.value = undefined;
            void save(stored['~StoreTime']);
          }}
        />
      )}
      <div class="actions">
        {locked.value !== 'refused' && (
          <button type="submit" class="primary" disabled={busy.value || locked.value !== 'held' || !specs.value || stored !== undefined}>
            {t('save')}
          </button>
        )}
        <button type="button" onClick={() => onDone()}>
          {t('cancel')}
        </button>
      </div>
    </form>
  );
}

/** A new object of the class: every declared field with its editor; saved, it opens in a panel. */
export function NewObject({ client, className, onDone }: { client: OdbRestClient; className: string; onDone(): void }) {
  const specs = useSignal<FieldSpec[] | undefined>(undefined);
  const texts = useSignal<Record<string, string>>({});
  const error = useSignal('');
  const busy = useSignal(false);
  const form = useRef<HTMLFormElement>(null);
  useFormFocus(form, specs.value !== undefined);
  const fieldErrorsShown = useSignal<Record<string, string>>({});
  useEffect(() => {
    void fieldSpecs(client, className).then((found) => (specs.value = found.length > 0 ? found : [{ name: 'Name', type: 'string' }]));
  }, [client, className]);
  return (
    <form
      ref={form}
      class="new-object card"
      noValidate
      aria-labelledby="new-object-title"
      onSubmit={async (event) => {
        event.preventDefault();
        error.value = '';
        if (!fieldsFit(event.currentTarget, specs.value ?? [], fieldErrorsShown, error)) return;
        busy.value = true;
        try {
          const created = await client.createObject(className, changedFields(specs.value ?? [], texts.value, {}));
          touch();
          onDone();
          openObject(created['~ObjectID']);
        } catch (cause) {
          error.value = failureText(cause);
        } finally {
          busy.value = false;
        }
      }}
    >
      <h2 id="new-object-title">{t('newObjectOf', { class: className })}</h2>
      {!specs.value && <p aria-busy="true">{t('loading')}</p>}
      {specs.value && <FieldForm client={client} specs={specs.value} texts={texts.value} errors={fieldErrorsShown.value} prefix="new" onInput={(name, text) => (texts.value = { ...texts.value, [name]: text })} />}
      <Alert text={error.value} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy.value || !specs.value}>
          {t('create')}
        </button>
        <button type="button" onClick={onDone}>
          {t('cancel')}
        </button>
      </div>
    </form>
  );
}
