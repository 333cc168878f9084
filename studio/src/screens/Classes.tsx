import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { ClassSummary, OdbRestClient } from 'odbrest/client';
import { failureText, loadClasses } from '../data.js';
import { formatCount, t } from '../i18n/index.js';
import { useRowKeys } from '../keys.js';
import { openClass } from '../router.js';
import { Alert } from '../components/Alert.js';
import { SavedViews } from '../features/index.js';

/** The classes the session may read, with their counts, and a filter box; the user's saved views beside them. */
export function Classes({ client }: { client: OdbRestClient }) {
  const classes = useSignal<ClassSummary[] | undefined>(undefined);
  const error = useSignal('');
  const filter = useSignal('');
  const selected = useSignal(0);

  useEffect(() => {
    loadClasses(client).then(
      (found) => (classes.value = found.sort((a, b) => a.Name.localeCompare(b.Name))),
      (cause) => (error.value = failureText(cause)),
    );
  }, [client]);

  const visible = () => {
    const needle = filter.peek().trim().toLowerCase();
    return (classes.peek() ?? []).filter((entry) => entry.Name.toLowerCase().includes(needle));
  };
  const shown = (classes.value, filter.value, visible());
  const at = Math.min(selected.value, Math.max(0, shown.length - 1));
  // the keys read the signals, not this render's values: keys pressed faster than renders still count
  useRowKeys({
    move: (by) => {
      const count = visible().length;
      selected.value = Math.max(0, Math.min(count - 1, Math.min(selected.peek(), count - 1) + by));
    },
    open: () => {
      const list = visible();
      const entry = list[Math.min(selected.peek(), list.length - 1)];
      if (entry) openClass(entry.Name);
    },
  });

  return (
    <section class="screen" aria-labelledby="classes-title">
      <h1 id="classes-title">{t('classes')}</h1>
      <label class="search">
        <span class="visually-hidden">{t('filterClasses')}</span>
        <input data-search type="search" placeholder={t('filterClasses')} value={filter.value} onInput={(e) => ((filter.value = e.currentTarget.value), (selected.value = 0))} />
      </label>
      <div class="with-side">
        <div>
          <Alert text={error.value} />
          {!classes.value && !error.value && <p aria-busy="true">{t('loading')}</p>}
          {classes.value && shown.length === 0 && <p>{t('noClasses')}</p>}
          {shown.length > 0 && (
            <table class="grid classes">
              <thead>
                <tr>
                  <th scope="col">{t('className')}</th>
                  <th scope="col" class="num">
                    {t('count')}
                  </th>
                </tr>
              </thead>
              <tbody>
                {shown.map((entry, index) => (
                  <tr key={entry.Name} class={index === at ? 'selected' : undefined} aria-selected={index === at}>
                    <td>
                      <a href={`#/class/${encodeURIComponent(entry.Name)}`}>{entry.Name}</a>
                      {entry.Declared && <span class="tag">{t('declared')}</span>}
                    </td>
                    <td class="num">
                      {entry.CountEstimated ? t('countEstimated', { count: entry.Count }) : formatCount(entry.Count)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
        <SavedViews client={client} />
      </div>
      <p class="hint">{t('keyboardHelp')}</p>
    </section>
  );
}
