import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { t } from '../i18n/index.js';
import { prefs, RECENT as RECENT_KEY, userKey } from '../prefs.js';
import { session } from '../session.js';
import type { QueryFailure } from '../data.js';

const RECENT = 10;

/** The query text where the service found an error: the character at `at` marked. */
function MarkedQuery({ text, at }: { text: string; at: number }) {
  return (
    <pre class="query-marked" data-position={at}>
      {text.slice(0, at)}
      <mark>{text.slice(at, at + 1) || ' '}</mark>
      {text.slice(at + 1)}
    </pre>
  );
}

/** A refused query text: the service's message, and the text with the position it names marked. */
export function QueryError({ failure, id }: { failure: QueryFailure; id?: string }) {
  return (
    <div id={id} class="error query-error" role="alert">
      <p>{t('queryError', { message: failure.message })}</p>
      {failure.at !== undefined && <MarkedQuery text={failure.text} at={failure.at} />}
    </div>
  );
}

/**
 * The query text box (PROTOCOL.md 6.2): runs on Enter, offers the recent queries of the class, and
 * shows a `400`'s message with the position it names marked in the text.
 */
export function QueryBox(props: { className: string; applied: string; ran: string; error?: QueryFailure; onRun(text: string): void }) {
  const text = useSignal(props.applied);
  // the person's own recent queries (kept per user; dropped at logout)
  const key = userKey(session.value?.user ?? '', `${RECENT_KEY}${props.className}`);
  const recent = useSignal<string[]>(prefs.getJson<string[]>(key, []));
  // text applied from elsewhere (a column's filter) shows in the box, to read and edit
  useEffect(() => void (text.value = props.applied), [props.applied]);
  useEffect(() => {
    // a query that loaded a page joins the recent ones (one the service refused does not)
    const ran = props.ran.trim();
    if (!ran) return;
    const next = [ran, ...recent.peek().filter((entry) => entry !== ran)].slice(0, RECENT);
    recent.value = next;
    prefs.setJson(key, next);
  }, [props.ran]);
  const listId = `recent-${props.className}`;
  return (
    <form
      class="query"
      role="search"
      onSubmit={(event) => {
        event.preventDefault();
        props.onRun(text.value);
      }}
    >
      <label class="search">
        <span class="visually-hidden">{t('query')}</span>
        <input
          data-search
          name="query"
          type="search"
          list={listId}
          spellcheck={false}
          autocomplete="off"
          placeholder={t('queryPlaceholder')}
          value={text.value}
          aria-invalid={props.error ? true : undefined}
          aria-describedby={props.error ? 'query-error' : undefined}
          onInput={(e) => (text.value = e.currentTarget.value)}
        />
      </label>
      <datalist id={listId}>
        {recent.value.map((entry) => (
          <option key={entry} value={entry} />
        ))}
      </datalist>
      <button type="submit" class="primary">
        {t('runQuery')}
      </button>
      <button
        type="button"
        disabled={!text.value && !props.applied}
        onClick={() => {
          text.value = '';
          props.onRun('');
        }}
      >
        {t('clearQuery')}
      </button>
      {recent.value.length > 0 && (
        <details class="recent">
          <summary>{t('recentQueries')}</summary>
          <ul>
            {recent.value.map((entry) => (
              <li key={entry}>
                <button
                  type="button"
                  class="link"
                  onClick={() => {
                    text.value = entry;
                    props.onRun(entry);
                  }}
                >
                  {entry}
                </button>
              </li>
            ))}
          </ul>
        </details>
      )}
      {props.error && <QueryError failure={props.error} id="query-error" />}
    </form>
  );
}
