import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { ClassStructure, OdbRestClient } from 'odbrest/client';
import { failureText } from '../data.js';
import { t } from '../i18n/index.js';
import { openClass } from '../router.js';
import { Alert } from '../components/Alert.js';

/** The model (PROTOCOL.md 6.11 `GET /v1/model/structure`): each declared class and its fields: name, type, class, required. */
export function Model({ client }: { client: OdbRestClient }) {
  const classes = useSignal<ClassStructure[] | undefined>(undefined);
  const error = useSignal('');
  useEffect(() => {
    client.modelStructure().then(
      (set) => (classes.value = set['~Elements'].filter((entry) => entry.Declared).sort((a, b) => a.Name.localeCompare(b.Name))),
      (cause) => (error.value = failureText(cause)),
    );
  }, [client]);
  const list = classes.value ?? [];
  return (
    <section class="screen model" aria-labelledby="model-title">
      <h1 id="model-title">{t('model')}</h1>
      <p class="hint">{t('modelHint')}</p>
      <Alert text={error.value} />
      {!classes.value && !error.value && <p aria-busy="true">{t('loading')}</p>}
      {classes.value && list.length === 0 && <p>{t('modelEmpty')}</p>}
      {list.map((entry) => (
        <table class="grid model-class" key={entry.Name} data-class={entry.Name}>
          <caption>
            <a href={`#/class/${encodeURIComponent(entry.Name)}`} onClick={(event) => (event.preventDefault(), openClass(entry.Name))}>
              {entry.Name}
            </a>
          </caption>
          <thead>
            <tr>
              <th scope="col">{t('field')}</th>
              <th scope="col">{t('fieldType')}</th>
              <th scope="col">{t('fieldClass')}</th>
              <th scope="col">{t('fieldRequired')}</th>
            </tr>
          </thead>
          <tbody>
            {entry.Members.filter((member) => !member.Base).map((member) => (
              <tr key={member.Name} data-field={member.Name}>
                <th scope="row">{member.Name}</th>
                <td>{member.Values ? `${member.Type} (${member.Values.join(', ')})` : member.Type}</td>
                <td>
                  {member.Class ? (
                    <a href={`#/class/${encodeURIComponent(member.Class)}`} onClick={(event) => (event.preventDefault(), openClass(member.Class!))}>
                      {member.Class}
                    </a>
                  ) : (
                    ''
                  )}
                </td>
                <td>{member.Required ? t('yes') : t('no')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
    </section>
  );
}
