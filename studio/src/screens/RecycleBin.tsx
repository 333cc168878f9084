import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { OdbRestClient, SerializedObject } from 'odbrest/client';
import { referenceLabel } from '../components/Value.js';
import { failureText } from '../data.js';
import { changed, notice, touch } from '../features/notice.js';
import { t } from '../i18n/index.js';
import { openObject } from '../router.js';
import { Alert } from '../components/Alert.js';

type Recycled = SerializedObject & { '~DeletedAt': string };

/** This user's recycle bin (PROTOCOL.md 6.3): what was deleted, when, and Restore. */
export function RecycleBin({ client }: { client: OdbRestClient }) {
  const objects = useSignal<Recycled[] | undefined>(undefined);
  const error = useSignal('');
  useEffect(() => {
    client.recycleBin().then(
      (set) => ((objects.value = set['~Elements']), (error.value = '')),
      (cause) => (error.value = failureText(cause)),
    );
  }, [client, changed.value]);
  const restore = (object: Recycled) =>
    client.restoreObject(object['~ObjectID']).then(
      () => {
        touch();
        notice.value = { text: t('restored', { object: referenceLabel(object) }), action: { label: t('open'), run: () => openObject(object['~ObjectID']) } };
      },
      (cause) => (error.value = failureText(cause)),
    );
  const list = objects.value ?? [];
  return (
    <section class="screen" aria-labelledby="bin-title">
      <h1 id="bin-title">{t('recycleBin')}</h1>
      <p class="hint">{t('recycleBinHint')}</p>
      <Alert text={error.value} />
      {!objects.value && !error.value && <p aria-busy="true">{t('loading')}</p>}
      {objects.value && list.length === 0 && <p>{t('binEmpty')}</p>}
      {list.length > 0 && (
        <table class="grid bin">
          <thead>
            <tr>
              <th scope="col">{t('object')}</th>
              <th scope="col">{t('deletedAt')}</th>
              <th scope="col">
                <span class="visually-hidden">{t('restore')}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((object) => (
              <tr key={object['~ObjectID']} data-object={object['~ObjectID']}>
                <td>{referenceLabel(object)}</td>
                <td>{object['~DeletedAt']}</td>
                <td>
                  <button type="button" onClick={() => void restore(object)} aria-label={t('restoreObject', { object: referenceLabel(object) })}>
                    {t('restore')}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
