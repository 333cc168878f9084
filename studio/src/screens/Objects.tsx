import { useSignal } from '@preact/signals';
import { useEffect, useState } from 'preact/hooks';
import type { OdbRestClient, SerializedObject } from 'odbrest/client';
import { ColumnChooser, type Column } from '../components/ColumnChooser.js';
import { QueryBox } from '../components/QueryBox.js';
import { Value } from '../components/Value.js';
import { declaredFields, failureText, queryFailure, type DeclaredField, type QueryFailure } from '../data.js';
import { Bulk, CopyAs, Export, Import, NewObject, SaveView, Upload } from '../features/index.js';
import { config } from '../config.js';
import { useLive } from '../features/live.js';
import { changed, touch } from '../features/notice.js';
import { t } from '../i18n/index.js';
import { useRowKeys } from '../keys.js';
import { openObject, takeView } from '../router.js';
import { prefs, userKey } from '../prefs.js';
import { session } from '../session.js';
import { Alert } from '../components/Alert.js';
import { filterClause, withClause } from '../querytext.js';

const PER_PAGE = 50;
/** `~SecurityRights` bit 3 (PROTOCOL.md 6.1): create in its class. */
const CREATE = 4;

/** The saved column order and choice of a class, brought up to date with the fields there are now (shown unless `othersHidden`: a saved view's columns are all it shows). */
function mergeColumns(saved: Column[], names: string[], othersHidden = false): Column[] {
  const known = new Set(names);
  const kept = saved.filter((column) => known.has(column.name));
  const seen = new Set(kept.map((column) => column.name));
  return [...kept, ...names.filter((name) => !seen.has(name)).map((name) => ({ name, shown: !othersHidden }))];
}

/** One page of a class: columns, paging, sorting, the query text, and rows that open object panels; opened from a saved view, its query, order and columns. */
export function Objects({ client, className }: { client: OdbRestClient; className: string }) {
  const [view] = useState(() => takeView(className));
  /** The person's own column layout of this class (kept per user). */
  const columnsKey = userKey(session.value?.user ?? '', `columns:${className}`);
  const page = useSignal(0);
  const orderBy = useSignal<string | undefined>(view?.OrderBy || undefined);
  const queryText = useSignal(view?.Query ?? '');
  const queryError = useSignal<QueryFailure | undefined>(undefined);
  const error = useSignal('');
  const rows = useSignal<SerializedObject[] | undefined>(undefined);
  const total = useSignal(0);
  const declared = useSignal<DeclaredField[] | undefined>(undefined);
  const columns = useSignal<Column[]>(view?.Columns ? view.Columns.map((name) => ({ name, shown: true })) : prefs.getJson<Column[]>(columnsKey, []));
  /** Opened from a saved view with its columns, until the person changes them: fields it does not name stay hidden. */
  const viewColumns = useSignal(view?.Columns !== undefined);
  const selected = useSignal(0);
  const loading = useSignal(false);
  /** The query text of the last page that loaded: it joins the recent queries. */
  const ran = useSignal('');
  const creating = useSignal(false);
  const importing = useSignal(false);
  /** The rows picked for bulk work (ids, kept across pages), or every object the query matches. */
  const picked = useSignal<Set<string>>(new Set());
  const allMatching = useSignal(false);
  /** The row a shift-click extends the selection from. */
  const anchor = useSignal<number | undefined>(undefined);
  /** Bulk work began here: its chunk stays on screen (what it refused, its Undo's outcome) after the choice is cleared. */
  const bulkUsed = useSignal(false);
  /** Each column's filter box, and the comparison it last wrote into the query text. */
  const filters = useSignal<Record<string, string>>({});
  const clauses = useSignal<Record<string, string>>({});
  // live: a change to the class by anyone reads the page again
  useLive(client, { className }, touch, className);

  /** Whether the session may create objects of the class: undefined until read, null when no object says (an empty class: the service decides at the write). */
  const mayCreate = useSignal<boolean | null | undefined>(undefined);

  useEffect(() => {
    void declaredFields(client, className).then((fields) => (declared.value = fields));
    // `~SecurityRights` bit 3 (PROTOCOL.md 6.1): create in its class; New object and Import are offered only with it
    void client
      .listObjects(className, { perPage: 1, serialization: { type: 'empty', securityRights: true } })
      .then((set) => set['~Elements'][0]?.['~SecurityRights'], () => undefined)
      .then((rights) => (mayCreate.value = typeof rights === 'number' ? (rights & CREATE) !== 0 : null));
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
          queryError.value = queryFailure(cause, queryText.value);
          if (!queryError.value) error.value = failureText(cause);
        },
      )
      .finally(() => current && (loading.value = false));
    return () => {
      current = false;
    };
  }, [client, className, page.value, orderBy.value, queryText.value, changed.value]);

  // the columns: the declared fields, else the fields of the page (the model and the page are asked for at once)
  const names = declared.value?.length ? declared.value.map((field) => field.name) : [...new Set((rows.value ?? []).flatMap((object) => Object.keys(object).filter((key) => !key.startsWith('~'))))];
  const merged = mergeColumns(columns.value, names, viewColumns.value);
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
    viewColumns.value = false;
    prefs.setJson(columnsKey, next);
  };
  const sort = (name: string) => {
    orderBy.value = orderBy.value === name ? `-${name}` : orderBy.value === `-${name}` ? undefined : name;
    page.value = 0;
  };
  const run = (text: string) => {
    queryText.value = text;
    page.value = 0;
    selected.value = 0;
    picked.value = new Set();
    allMatching.value = false;
  };
  /** A column's filter written into the query text (its previous comparison replaced), and run. */
  const filter = (name: string, input: string) => {
    const type = declared.value?.find((field) => field.name === name)?.type;
    const clause = filterClause(name, type, input);
    filters.value = { ...filters.value, [name]: input };
    run(withClause(queryText.value, clauses.value[name], clause));
    clauses.value = { ...clauses.value, [name]: clause };
  };
  const pageIds = list.map((object) => object['~ObjectID']);
  const pageChecked = pageIds.length > 0 && pageIds.every((id) => allMatching.value || picked.value.has(id));
  /** A row's box: a click toggles it, a shift-click sets every row from the last one clicked to it alike. */
  const check = (index: number, on: boolean, range: boolean) => {
    const next = new Set(allMatching.value ? pageIds : picked.value);
    allMatching.value = false;
    const from = range && anchor.value !== undefined ? Math.min(anchor.value, index) : index;
    const to = range && anchor.value !== undefined ? Math.max(anchor.value, index) : index;
    for (const id of pageIds.slice(from, to + 1)) on ? next.add(id) : next.delete(id);
    picked.value = next;
    anchor.value = index;
    bulkUsed.value = true;
  };
  const checkPage = (on: boolean) => {
    const next = new Set(picked.value);
    for (const id of pageIds) on ? next.add(id) : next.delete(id);
    allMatching.value = false;
    picked.value = next;
    bulkUsed.value = true;
  };
  const count = allMatching.value ? total.value : picked.value.size;
  const sortState = (name: string) => (orderBy.value === name ? 'ascending' : orderBy.value === `-${name}` ? 'descending' : undefined);

  return (
    <section class="screen" aria-labelledby="objects-title">
      <h1 id="objects-title">
        {className} <span class="count">{t('total', { count: total.value })}</span>
      </h1>
      <QueryBox
        className={className}
        applied={queryText.value}
        ran={ran.value}
        error={queryError.value}
        onRun={run}
      />
      <div class="toolbar">
        <ColumnChooser columns={merged} onChange={setColumns} />
        {(mayCreate.value === true || mayCreate.value === null) && (
          <>
            <button type="button" onClick={() => (creating.value = true)} disabled={creating.value}>
              {t('newObject')}
            </button>
            <button type="button" onClick={() => (importing.value = true)} disabled={importing.value}>
              {t('import')}
            </button>
          </>
        )}
        <Export client={client} className={className} queryText={queryText.value} orderBy={orderBy.value} fields={names} />
        <SaveView client={client} view={{ Class: className, Query: queryText.value, ...(orderBy.value ? { OrderBy: orderBy.value } : {}), Columns: shown.map((column) => column.name) }} />
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
      {importing.value && <Import client={client} className={className} onDone={() => (importing.value = false)} />}
      {pageChecked && !allMatching.value && total.value > list.length && (
        <p class="select-all">
          {t('pickedPage', { count: list.length })}{' '}
          <button type="button" class="link" onClick={() => (allMatching.value = true)}>
            {t('pickAllMatching', { count: total.value })}
          </button>
        </p>
      )}
      {(count > 0 || bulkUsed.value) && (
        <Bulk
          client={client}
          className={className}
          selection={allMatching.value ? { queryText: queryText.value } : { ids: [...picked.value] }}
          count={count}
          fields={names}
          onClear={() => ((picked.value = new Set()), (allMatching.value = false))}
        />
      )}
      {creating.value && <NewObject client={client} className={className} onDone={() => (creating.value = false)} />}
      {className === config.fileClass && <Upload client={client} onDone={(object) => openObject(object['~ObjectID'])} />}
      <Alert text={error.value} />
      {rows.value === undefined && !error.value && <p aria-busy="true">{t('loading')}</p>}
      {rows.value !== undefined && declared.value !== undefined && names.length > 0 && (
        <div class="table-wrap" aria-busy={loading.value}>
          <table class="grid objects">
            <thead>
              <tr>
                <th scope="col" class="pick">
                  <input type="checkbox" aria-label={t('pickPage')} checked={pageChecked} onChange={(event) => checkPage(event.currentTarget.checked)} />
                </th>
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
              <tr class="filters">
                <td />
                <td />
                {shown.map((column) => (
                  <td key={column.name}>
                    <input
                      type="search"
                      data-filter={column.name}
                      aria-label={t('filterColumn', { column: column.name })}
                      placeholder={t('filterPlaceholder')}
                      spellcheck={false}
                      value={filters.value[column.name] ?? ''}
                      // kept as typed (a page arriving meanwhile redraws the box), written into the query on Enter or leaving it
                      onInput={(event) => (filters.value = { ...filters.value, [column.name]: event.currentTarget.value })}
                      onChange={(event) => filter(column.name, event.currentTarget.value)}
                    />
                  </td>
                ))}
              </tr>
            </thead>
            <tbody>
              {list.map((object, index) => (
                <tr key={object['~ObjectID']} data-row={index} class={index === at ? 'selected' : undefined} onClick={() => ((selected.value = index), openObject(object['~ObjectID']))}>
                  <td class="pick" onClick={(event) => event.stopPropagation()}>
                    <input
                      type="checkbox"
                      aria-label={t('pickRow', { object: object['~ObjectID'] })}
                      checked={allMatching.value || picked.value.has(object['~ObjectID'])}
                      onClick={(event) => check(index, event.currentTarget.checked, event.shiftKey)}
                    />
                  </td>
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
      {rows.value !== undefined && list.length === 0 && <p>{t('noObjects')}</p>}
      <p class="hint">{t('keyboardHelp')}</p>
    </section>
  );
}
