import { useSignal } from '@preact/signals';
import type { OdbRestClient, SerializedObject } from 'odbrest/client';
import { failureText } from '../data.js';
import { t } from '../i18n/index.js';
import { saveBlob } from './save.js';

/** The largest page the service gives (PROTOCOL.md 6.1): the fewest requests for an export. */
const PAGE = 1000;
const META = ['~ObjectID', '~ClassName', '~StoreTime'];

export interface ExportProps {
  client: OdbRestClient;
  className: string;
  /** The table's query text and order, as applied. */
  queryText: string;
  orderBy?: string;
  /** The table's field columns: the CSV's columns after the metadata (fields of the objects not named here follow). */
  fields: string[];
}

/** A value in a CSV cell: a reference as its id, other structures as JSON, text guarded against spreadsheet formulas. */
function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') {
    const id = (value as { '~ObjectID'?: unknown })['~ObjectID'];
    return typeof id === 'string' ? id : JSON.stringify(value);
  }
  let text = String(value);
  // a text cell starting like a formula would run as one in a spreadsheet (CSV injection)
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A page's CSV rows under `columns`, the columns known once this page is read. */
function csvRows(objects: SerializedObject[], columns: string[]): string {
  return objects.map((object) => `${columns.map((column) => cell(object[column])).join(',')}\r\n`).join('');
}

/** Adds to `columns` (and `known`) every field of `objects` not there yet, in the order met; metadata other than META stays out. */
function meetFields(objects: SerializedObject[], columns: string[], known: Set<string>): void {
  for (const object of objects) {
    for (const key of Object.keys(object)) {
      if (known.has(key) || key.startsWith('~')) continue;
      known.add(key);
      columns.push(key);
    }
  }
}

/**
 * Export of the current query's objects (all pages, in the table's order) as JSON Lines (one object
 * per line, as the service serializes it) or CSV; the pages are read one after the other, the count so
 * far shown while it runs. Each page becomes a part of the file (a Blob) as it arrives, so the page
 * holds about one page of objects at a time, whatever the count. A CSV's columns grow as pages bring
 * new fields: each page's rows have the columns known after it, and the header (all of them) is
 * written last, as the file's first part; rows of earlier pages end before the columns added later.
 */
export function Export({ client, className, queryText, orderBy, fields }: ExportProps) {
  const status = useSignal('');
  const running = useSignal(false);
  const run = async (format: 'jsonl' | 'csv') => {
    running.value = true;
    status.value = t('exporting', { count: 0 });
    try {
      const parts: Blob[] = [];
      const columns = [...META, ...fields];
      const known = new Set(columns);
      let count = 0;
      for (let page = 0; ; page++) {
        const set = await client.listObjects(className, { page, perPage: PAGE, orderBy, ...(queryText.trim() ? { queryText } : {}) });
        const elements = set['~Elements'];
        if (format === 'csv') meetFields(elements, columns, known);
        parts.push(new Blob([format === 'jsonl' ? elements.map((object) => `${JSON.stringify(object)}\n`).join('') : csvRows(elements, columns)]));
        count += elements.length;
        status.value = t('exporting', { count: count.toLocaleString() });
        if (elements.length < PAGE || count >= set['~UnfilteredCount']) break;
      }
      if (format === 'jsonl') saveBlob(new Blob(parts, { type: 'application/x-ndjson' }), `${className}.jsonl`);
      else saveBlob(new Blob([`${columns.map(cell).join(',')}\r\n`, ...parts], { type: 'text/csv;charset=utf-8' }), `${className}.csv`);
      status.value = t('exported', { count: count.toLocaleString(), file: `${className}.${format}` });
    } catch (cause) {
      status.value = failureText(cause);
    } finally {
      running.value = false;
    }
  };
  return (
    <span class="export" role="group" aria-label={t('export')}>
      <button type="button" disabled={running.value} onClick={() => void run('jsonl')}>
        {t('exportJsonl')}
      </button>
      <button type="button" disabled={running.value} onClick={() => void run('csv')}>
        {t('exportCsv')}
      </button>
      <span class="export-status" aria-live="polite">
        {status.value}
      </span>
    </span>
  );
}
