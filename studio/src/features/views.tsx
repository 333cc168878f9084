import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { OdbRestClient, SavedQuery } from 'odbrest/client';
import { Alert } from '../components/Alert.js';
import { Said, type Outcome } from '../components/Said.js';
import { failureText } from '../data.js';
import { tConsole } from '../i18n/console.js';
import { t } from '../i18n/index.js';
import { openView } from '../router.js';

/**
 * The user's saved views (PROTOCOL.md 6.12 `GET /v1/savedQueries`), beside the classes: a click opens
 * the view's class with its query text, order and columns; each may be deleted.
 */
export function SavedViews({ client }: { client: OdbRestClient }) {
  const views = useSignal<SavedQuery[] | undefined>(undefined);
  const error = useSignal('');
  const load = () =>
    client.savedQueries.list().then(
      (list) => ((views.value = list), (error.value = '')),
      (cause) => (error.value = failureText(cause)),
    );
  useEffect(() => void load(), [client]);
  const remove = (name: string) => client.savedQueries.remove(name).then(load, (cause) => (error.value = failureText(cause)));
  const list = views.value ?? [];
  return (
    <aside class="saved-views" aria-labelledby="saved-views-title">
      <h2 id="saved-views-title">{tConsole('savedViews')}</h2>
      <Alert text={error.value} />
      {views.value && list.length === 0 && <p class="hint">{tConsole('noSavedViews')}</p>}
      <ul>
        {list.map((view) => (
          <li key={view.Name} data-view={view.Name}>
            <a
              href={`#/class/${encodeURIComponent(view.Class)}`}
              title={view.Query ? `${view.Class}: ${view.Query}` : view.Class}
              onClick={(event) => (event.preventDefault(), openView(view))}
            >
              {view.Name}
            </a>{' '}
            <span class="hint">{view.Class}</span>
            <button type="button" class="icon" aria-label={tConsole('deleteView', { view: view.Name })} onClick={() => void remove(view.Name)}>
              ✕
            </button>
          </li>
        ))}
      </ul>
    </aside>
  );
}

/** Saves the table as it is (class, query text, order, the columns shown in their order) under a name, for this user (`PUT /v1/savedQueries/{name}`). */
export function SaveView({ client, view }: { client: OdbRestClient; view: Omit<SavedQuery, 'Name'> }) {
  const name = useSignal('');
  const outcome = useSignal<Outcome>(undefined);
  const save = (event: Event) => {
    event.preventDefault();
    const chosen = name.value.trim();
    if (!chosen) return;
    client.savedQueries.save(chosen, view).then(
      () => (outcome.value = { ok: true, text: tConsole('viewSaved', { view: chosen }) }),
      (cause) => (outcome.value = { ok: false, text: failureText(cause) }),
    );
  };
  return (
    <details class="save-view">
      <summary>{tConsole('saveView')}</summary>
      <form onSubmit={save}>
        <label>
          {tConsole('viewName')}
          <input name="view-name" required maxLength={128} value={name.value} onInput={(event) => (name.value = event.currentTarget.value)} />
        </label>
        <button type="submit" class="primary">
          {t('save')}
        </button>
        <Said outcome={outcome.value} />
      </form>
    </details>
  );
}
