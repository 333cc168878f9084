import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { ClassStructure, ModelMember, OdbRestClient } from 'odbrest/client';
import { useAdmin } from '../admin.js';
import { failureText, loadClasses } from '../data.js';
import { ClassEditor } from '../features/index.js';
import { tConsole } from '../i18n/console.js';
import { t } from '../i18n/index.js';
import { openClass } from '../router.js';
import { Alert } from '../components/Alert.js';

const ClassLink = ({ name }: { name: string }) => (
  <a href={`#/class/${encodeURIComponent(name)}`} onClick={(event) => (event.preventDefault(), openClass(name))}>
    {name}
  </a>
);

/** A field's type as the table shows it: its values, range or length with it. */
function typeText(member: ModelMember): string {
  const limits = [
    member.Values ? member.Values.join(', ') : '',
    member.Min !== undefined || member.Max !== undefined ? `${member.Min ?? ''}…${member.Max ?? ''}` : '',
    member.MaxLength !== undefined ? `≤ ${member.MaxLength}` : '',
  ].filter(Boolean);
  return limits.length > 0 ? `${member.Type} (${limits.join('; ')})` : member.Type;
}

/**
 * The model (PROTOCOL.md 6.8 `GET /v1/model/structure`): each declared class and its fields. Classes
 * the host declares in code are marked and read-only; members of `users.admins` declare classes, change
 * those declared at run time and delete them while empty (6.12), in the editor (a chunk of its own).
 */
export function Model({ client }: { client: OdbRestClient }) {
  const classes = useSignal<ClassStructure[] | undefined>(undefined);
  const names = useSignal<string[]>([]);
  const error = useSignal('');
  /** The class being edited (a name), a new one (''), or none. */
  const editing = useSignal<string | undefined>(undefined);
  const deleting = useSignal<string | undefined>(undefined);
  const done = useSignal('');
  const loads = useSignal(0);
  const admin = useAdmin(client);
  useEffect(() => {
    client.modelStructure().then(
      (set) => (classes.value = set['~Elements'].filter((entry) => entry.Declared).sort((a, b) => a.Name.localeCompare(b.Name))),
      (cause) => (error.value = failureText(cause)),
    );
    loadClasses(client).then(
      (found) => (names.value = found.map((entry) => entry.Name).sort((a, b) => a.localeCompare(b))),
      () => undefined,
    );
  }, [client, loads.value]);
  const list = classes.value ?? [];
  const reload = (said: string) => {
    done.value = said;
    editing.value = undefined;
    deleting.value = undefined;
    loads.value += 1;
  };
  const remove = (name: string) =>
    client.admin.removeClassDeclaration(name).then(
      () => reload(tConsole('classDeleted', { class: name })),
      (cause) => ((error.value = failureText(cause)), (deleting.value = undefined)),
    );
  const editor = (entry?: ClassStructure) => (
    <ClassEditor
      client={client}
      entry={entry}
      classNames={names.value}
      onDone={(saved) => (saved ? reload(tConsole('declarationSaved')) : (editing.value = undefined))}
    />
  );
  return (
    <section class="screen model" aria-labelledby="model-title">
      <h1 id="model-title">{t('model')}</h1>
      <p class="hint">{admin ? tConsole('modelHintAdmin') : t('modelHint')}</p>
      {admin && editing.value === undefined && (
        <div class="toolbar">
          <button type="button" class="primary" onClick={() => ((editing.value = ''), (done.value = ''), (error.value = ''))}>
            {tConsole('newClass')}
          </button>
        </div>
      )}
      {done.value && (
        <p class="hint" role="status">
          {done.value}
        </p>
      )}
      <Alert text={error.value} />
      {editing.value === '' && editor()}
      {!classes.value && !error.value && <p aria-busy="true">{t('loading')}</p>}
      {classes.value && list.length === 0 && <p>{t('modelEmpty')}</p>}
      {list.map((entry) =>
        editing.value === entry.Name ? (
          <div key={entry.Name}>{editor(entry)}</div>
        ) : (
          <table class="grid model-class" key={entry.Name} data-class={entry.Name} data-declared-by={entry.Runtime ? 'runtime' : 'host'}>
            <caption>
              <ClassLink name={entry.Name} />{' '}
              {entry.Runtime ? <span class="tag">{tConsole('declaredHere')}</span> : <span class="tag" title={tConsole('declaredByHostHint')}>{tConsole('declaredByHost')}</span>}
              {entry.Description && <span class="description"> {entry.Description}</span>}
              {admin && entry.Runtime && editing.value === undefined && (
                <span class="class-actions">
                  <button type="button" onClick={() => ((editing.value = entry.Name), (done.value = ''), (error.value = ''))}>
                    {tConsole('editClass', { class: entry.Name })}
                  </button>
                  {deleting.value === entry.Name ? (
                    <>
                      <button type="button" class="primary" onClick={() => void remove(entry.Name)}>
                        {tConsole('confirmDeleteClass', { class: entry.Name })}
                      </button>
                      <button type="button" onClick={() => (deleting.value = undefined)}>
                        {t('cancel')}
                      </button>
                    </>
                  ) : (
                    <button type="button" onClick={() => ((deleting.value = entry.Name), (done.value = ''), (error.value = ''))}>
                      {tConsole('deleteClass', { class: entry.Name })}
                    </button>
                  )}
                </span>
              )}
            </caption>
            <thead>
              <tr>
                <th scope="col">{t('field')}</th>
                <th scope="col">{t('fieldType')}</th>
                <th scope="col">{t('fieldClass')}</th>
                <th scope="col">{t('fieldRequired')}</th>
                <th scope="col">{tConsole('fieldIndex')}</th>
              </tr>
            </thead>
            <tbody>
              {entry.Members.filter((member) => !member.Base).map((member) => (
                <tr key={member.Name} data-field={member.Name}>
                  <th scope="row">{member.Name}</th>
                  <td>{typeText(member)}</td>
                  <td>{member.Class ? <ClassLink name={member.Class} /> : ''}</td>
                  <td>{member.Required ? t('yes') : t('no')}</td>
                  <td>{entry.Indices.some((index) => index.Members.length === 1 && index.Members[0] === member.Name) ? t('yes') : t('no')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ),
      )}
    </section>
  );
}
