import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { OdbRestError, type OdbRestClient, type SerializedObject } from 'odbrest/client';
import { ColumnChooser, type Column } from '../components/ColumnChooser.js';
import { QueryBox } from '../components/QueryBox.js';
import { Value } from '../components/Value.js';
import { declaredFields, failureText, messageOf } from '../data.js';
import { CopyAs, Export, NewObject, Upload } from '../features/index.js';
import { config } from '../config.js';
import { useLive } from '../features/live.js';
import { changed, touch } from '../features/notice.js';
import { t } from '../i18n/index.js';
import { useRowKeys } from '../keys.js';
import { openObject } from '../router.js';
import { prefs } from '../prefs.js';
import { Alert } from '../components/Alert.js';

const PER_PAGE = 50;

/** The saved column order and choice of a class, brought up to date with the fields there are now. */
function mergeColumns(saved: Column[], names: string[]): Column[] {
  const known = new Set(names);
  const kept = saved.filter((column) => known.has(column.name));
  const seen = new Set(kept.map((column) => column.name));
  return [...kept, ...names.filter((name) => !seen.has(name)).map((name) => ({ name, shown: true }))];
}

/** One page of a class: columns, paging, sorting, the query text, and rows that open object panels. */
export function Objects({ client, className }: { client: OdbRestClient; className: string }) {
  const page = useSignal(0);
  const orderBy = useSignal<string | undefined>(undefined);
  const queryText = useSignal('');
  const queryError = useSignal<{ message: string; at?: number } | undefined>(undefined);
  const error = useSignal('');
  const rows = useSignal<SerializedObject[] | undefined>(undefined);
  const total = useSignal(0);
  const declared = useSignal<string[] | undefined>(undefined);
  const columns = useSignal<Column[]>(prefs.getJson<Column[]>(`columns:${className}`, []));
  const selected = useSignal(0);
  const loading = useSignal(false);
  /** The query text of the last page that loaded: it joins the recent queries. */
  const ran = useSignal('');
  const creating = useSignal(false);
  // live: a change to the class by anyone reads the page again
  useLive(client, { className }, touch, className);

  useEffect(() => {
    void declaredFields(client, className).then((fields) => (declared.value = fields.map((field) => field.name)));
  }, [client, className]);

  useEffect(() => {
    let current = true;
    loading.value = true;
    client
      .listObjects(className, { page: page.value, perPage: PER_PAGE, orderBy: orderBy.value, ...(queryText.value.trim() ? { queryText: queryText.value } : {}) })
      .then(
        (set) => {
          if (!current) return;
          rows.value = set['~Elements'];
          total.value = set['~UnfilteredCount'];
          error.value = '';
          queryError.value = undefined;
          ran.value = queryText.value;
        },
        (cause) => {
          if (!current) return;
          const position = /query text: .* at (\d+)$/.exec(messageOf(cause));
          if (cause instanceof OdbRestError && cause.internalStatus === '400' && queryText.value.trim()) {
            queryError.value = { message: cause.message, at: position ? Number(position[1]) : undefined };
          } else error.value = failureText(cause);
        },
      )
      .finally(() => current && (loading.value = false));
    return () => {
      current = false;
    };
  }, [client, className, page.value, orderBy.value, queryText.value, changed.value]);

  // the columns: the declared fields, else the fields of the page (the model and the page are asked for at once)
  const names = declared.value?.length ? declared.value : [...new Set((rows.value ?? []).flatMap((object) => Object.keys(object).filter((key) => !key.startsWith('~'))))];
  const merged = mergeColumns(columns.value, names);
  const shown = merged.filter((column) => column.shown);
  const list = rows.value ?? [];
  const at = Math.min(selected.value, Math.max(0, list.length - 1));
  const pages = Math.max(1, Math.ceil(total.value / PER_PAGE));
  // the keys read the signals, not this render's values: keys pressed faster than renders still count
  const current = () => Math.min(selected.peek(), Math.max(0, (rows.peek() ?? []).length - 1));
  useRowKeys({
    move: (by) => {
      selected.value = Math.max(0, Math.min((rows.peek() ?? []).length - 1, current() + by));
      document.querySelector(`[data-row="${selected.value}"]`)?.scrollIntoView({ block: 'nearest' });
    },
    open: () => {
      const object = rows.peek()?.[current()];
      if (object) openObject(object['~ObjectID']);
    },
  });

  const setColumns = (next: Column[]) => {
    columns.value = next;
    prefs.setJson(`columns:${className}`, next);
  };
  const sort = (name: string) => {
    orderBy.value = orderBy.value === name ? `-${name}` : orderBy.value === `-${name}` ? undefined : name;
    page.value = 0;
  };
  const sortState = (name: string) => (orderBy.value === name ? 'ascending' : orderBy.value === `-${name}` ? 'descending' : undefined);

  return (
    <section class="screen" aria-labelledby="objects-title">
      <h1 id="objects-title">
        {className} <span class="count">{t('total', { count: total.value.toLocaleString() })}</span>
      </h1>
      <QueryBox
        className={className}
        applied={queryText.value}
        ran={ran.value}
        error={queryError.value}
        onRun={(text) => {
          queryText.value = text;
          page.value = 0;
          selected.value = 0;
        }}
      />
      <div class="toolbar">
        <ColumnChooser columns={merged} onChange={setColumns} />
        <button type="button" onClick={() => (creating.value = true)} disabled={creating.value}>
          {t('newObject')}
        </button>
        <Export client={client} className={className} queryText={queryText.value} orderBy={orderBy.value} fields={names} />
        <nav class="pager" aria-label={t('page', { page: page.value + 1, pages })}>
          <button type="button" disabled={page.value === 0} onClick={() => (page.value -= 1)} aria-label={t('previousPage')}>
            ‹
          </button>
          <span aria-live="polite">{t('page', { page: page.value + 1, pages })}</span>
          <button type="button" disabled={page.value + 1 >= pages} onClick={() => (page.value += 1)} aria-label={t('nextPage')}>
            ›
          </button>
        </nav>
      </div>
      <CopyAs client={client} target={{ className, queryText: queryText.value, orderBy: orderBy.value, page: page.value, perPage: PER_PAGE }} />
      {creating.value && <NewObject client={client} className={className} onDone={() => (creating.value = false)} />}
      {className === config.fileClass && <Upload client={client} onDone={(object) => openObject(object['~ObjectID'])} />}
      <Alert text={error.value} />
      {rows.value === undefined && !error.value && <p aria-busy="true">{t('loading')}</p>}
      {rows.value !== undefined && list.length === 0 && <p>{t('noObjects')}</p>}
      {list.length > 0 && declared.value !== undefined && (
        <div class="table-wrap" aria-busy={loading.value}>
          <table class="grid objects">
            <thead>
              <tr>
                <th scope="col">~ObjectID</th>
                {shown.map((column) => (
                  <th scope="col" key={column.name} aria-sort={sortState(column.name) ?? 'none'}>
                    <button type="button" class="sort" onClick={() => sort(column.name)} title={t('sortBy', { column: column.name })}>
                      {column.name}
                      <span aria-hidden="true">{sortState(column.name) === 'ascending' ? ' ▲' : sortState(column.name) === 'descending' ? ' ▼' : ''}</span>
                    </button>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {list.map((object, index) => (
                <tr key={object['~ObjectID']} data-row={index} class={index === at ? 'selected' : undefined} onClick={() => ((selected.value = index), openObject(object['~ObjectID']))}>
                  <th scope="row">
                    <a
                      href={`#open:${object['~ObjectID']}`}
                      onClick={(event) => {
                        event.preventDefault();
                        event.stopPropagation();
                        selected.value = index;
                        openObject(object['~ObjectID']);
                      }}
                    >
                      {object['~ObjectID']}
                    </a>
                  </th>
                  {shown.map((column) => (
                    <td key={column.name}>
                      <Value value={object[column.name]} compact />
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p class="hint">{t('keyboardHelp')}</p>
    </section>
  );
}
