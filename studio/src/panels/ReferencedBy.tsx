import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { OdbRestClient, SerializedObject, SerializedSet } from 'odbrest/client';
import { RefLink } from '../components/Value.js';
import { failureText } from '../data.js';
import { t } from '../i18n/index.js';

const PER_PAGE = 20;

/** The objects that hold a reference or a set element to this one (PROTOCOL.md 6.11), a page at a time. */
export function ReferencedBy({ client, objectId }: { client: OdbRestClient; objectId: string }) {
  const found = useSignal<SerializedSet<SerializedObject> | undefined>(undefined);
  const page = useSignal(0);
  const error = useSignal('');
  useEffect(() => {
    client.referencedBy(objectId, { page: page.value, perPage: PER_PAGE, serialization: { type: 'class', style: 'preview' } }).then(
      (set) => (found.value = set),
      (cause) => (error.value = failureText(cause)),
    );
  }, [client, objectId, page.value]);
  const set = found.value;
  const pages = set ? Math.max(1, Math.ceil(set['~UnfilteredCount'] / PER_PAGE)) : 1;
  return (
    <section class="referenced-by" aria-label={t('referencedBy')}>
      <h3>{t('referencedBy')}</h3>
      {error.value && <p class="error">{error.value}</p>}
      {set && set['~Elements'].length === 0 && <p class="hint">{t('noReferences')}</p>}
      {set && set['~Elements'].length > 0 && (
        <ul>
          {set['~Elements'].map((object) => (
            <li key={object['~ObjectID']}>
              <RefLink value={object} />
            </li>
          ))}
        </ul>
      )}
      {pages > 1 && (
        <nav class="pager" aria-label={t('referencedBy')}>
          <button type="button" disabled={page.value === 0} onClick={() => (page.value -= 1)} aria-label={t('previousPage')}>
            ‹
          </button>
          <span>{t('page', { page: page.value + 1, pages })}</span>
          <button type="button" disabled={page.value + 1 >= pages} onClick={() => (page.value += 1)} aria-label={t('nextPage')}>
            ›
          </button>
        </nav>
      )}
    </section>
  );
}
