import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { OdbRestError, type OdbRestClient, type SerializedObject } from 'odbrest/client';
import { Value } from '../components/Value.js';
import { CopyAs, FileView, ObjectActions, ObjectEditor, Upload } from '../features/index.js';
import { useLive } from '../features/live.js';
import { failureText } from '../data.js';
import { t } from '../i18n/index.js';
import { closeTop } from '../router.js';
import { ReferencedBy } from './ReferencedBy.js';
import { Alert } from '../components/Alert.js';
import { useReturnFocus } from '../focus.js';

const RIGHTS = ['rightRead', 'rightWrite', 'rightCreate', 'rightDelete', 'rightSecurity'] as const;

/** `~SecurityRights` in words: bit n (2^(n-1)) read, write, create, delete, security (PROTOCOL.md 6.1). */
function rightsText(bits: unknown): string {
  if (typeof bits !== 'number') return '–';
  return RIGHTS.filter((_, index) => (bits & (1 << index)) !== 0)
    .map((key) => t(key))
    .join(', ');
}

/** Whether the session may change the object (`~SecurityRights` bit 2), or the service did not say. */
const mayWrite = (object: SerializedObject) => typeof object['~SecurityRights'] !== 'number' || (object['~SecurityRights'] & 2) !== 0;

/** One object: every field with a viewer, references as links (a new panel), sets, metadata, what refers to it. */
export function ObjectPanel({ client, objectId, depth, top }: { client: OdbRestClient; objectId: string; depth: number; top: boolean }) {
  const object = useSignal<SerializedObject | undefined>(undefined);
  const error = useSignal('');
  const editing = useSignal(false);
  /** Live (PROTOCOL.md 8): bumped when the object changes elsewhere; the panel reads it again, an open edit is flagged. */
  const version = useSignal(0);
  useLive(client, top ? { objectId } : undefined, () => (version.value += 1), `${objectId}:${top}`);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    if (editing.peek()) return; // an open edit keeps what it began with (and flags the change)
    client.getObject(objectId, { serialization: { type: 'full', securityRights: true } }).then(
      (found) => (object.value = found),
      (cause) => (error.value = cause instanceof OdbRestError && cause.internalStatus === '404' ? t('notFound') : failureText(cause)),
    );
    // leaving an edit reads again: a change that arrived meanwhile (flagged in the editor) is shown after Cancel too
  }, [client, objectId, version.value, editing.value]);
  // the heading takes the focus when the panel comes on top or its object first shows (not after a save: the focus goes back to Edit)
  useEffect(() => {
    if (top) heading.current?.focus();
  }, [top, object.value === undefined]);
  // closed, the focus goes back to what opened it (a row's link, a reference)
  useReturnFocus();

  const found = object.value;
  const fields = found ? Object.entries(found).filter(([name]) => !name.startsWith('~')) : [];
  const titleId = `panel-title-${depth}`;
  return (
    <div
      class={`panel${top ? ' top' : ''}`}
      role="dialog"
      aria-modal={top}
      aria-labelledby={titleId}
      inert={!top}
      data-object={objectId}
      style={{ '--depth': String(depth) }}
    >
      <header class="panel-head">
        <h2 id={titleId} tabIndex={-1} ref={heading}>
          {found ? `${found['~ClassName']} ${found['~ObjectID']}` : objectId}
        </h2>
        <button type="button" onClick={closeTop} aria-label={depth > 0 ? t('back') : t('close')}>
          {depth > 0 ? `← ${t('back')}` : `✕ ${t('close')}`}
        </button>
      </header>
      <Alert text={error.value} />
      {!found && !error.value && <p aria-busy="true">{t('loading')}</p>}
      {found && editing.value && (
        <ObjectEditor client={client} object={found} changedMeanwhile={version.value} onDone={(saved?: SerializedObject) => ((editing.value = false), saved && (object.value = saved))} />
      )}
      {found && !editing.value && (
        <>
          <ObjectActions client={client} object={found} onEdit={() => (editing.value = true)} />
          <h3>{t('fields')}</h3>
          <dl class="fields">
            {fields.map(([name, value]) => (
              <div key={name} class="field" data-field={name}>
                <dt>{name}</dt>
                <dd>
                  <Value value={value} />
                </dd>
              </div>
            ))}
          </dl>
          <h3>{t('metadata')}</h3>
          <dl class="fields meta">
            {(['~ObjectID', '~ClassName', '~StoreTime'] as const).map((name) => (
              <div key={name} class="field">
                <dt>{name}</dt>
                <dd>{found[name]}</dd>
              </div>
            ))}
            <div class="field">
              <dt>~SecurityRights</dt>
              <dd>
                {String(found['~SecurityRights'] ?? '–')} <span class="hint">{rightsText(found['~SecurityRights'])}</span>
              </dd>
            </div>
          </dl>
          {/* a file object (PROTOCOL.md 6.6): the fields only uploads set */}
          {typeof found.Sha256 === 'string' && typeof found.ContentType === 'string' && (
            <>
              <FileView client={client} object={found} />
              {mayWrite(found) && <Upload client={client} replaceOID={objectId} onDone={() => (version.value += 1)} />}
            </>
          )}
          <ReferencedBy client={client} objectId={objectId} />
          <CopyAs client={client} target={{ objectId }} />
        </>
      )}
    </div>
  );
}
