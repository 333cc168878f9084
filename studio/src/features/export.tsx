import { useSignal } from '@preact/signals';
import type { OdbRestClient, SerializedObject } from 'odbrest/client';
import { failureText } from '../data.js';
import { language, t } from '../i18n/index.js';
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

/** A value in a CSV cell with `separator`: a reference as its id, other structures as JSON, text guarded against spreadsheet formulas. */
function cell(value: unknown, separator: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') {
    const id = (value as { '~ObjectID'?: unknown })['~ObjectID'];
    return typeof id === 'string' ? id : JSON.stringify(value);
  }
  let text = String(value);
  // a text cell starting like a formula would run as one in a spreadsheet (CSV injection)
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /["\r\n]/.test(text) || text.includes(separator) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A page's CSV rows under `columns`, the columns known once this page is read. */
function csvRows(objects: SerializedObject[], columns: string[], separator: string): string {
  return objects.map((object) => `${columns.map((column) => cell(object[column], separator)).join(separator)}\r\n`).join('');
}

/** The separator spreadsheets of the console's language expect: `;` where the decimal mark is a comma (German), else `,`. */
const separatorOf = (lang: string) => (lang === 'de' ? ';' : ',');

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
 * The CSV opens in the person's spreadsheet as written: a UTF-8 BOM, and the separator of the
 * console's language (`;` in German, `,` in English).
 */
export function Export({ client, className, queryText, orderBy, fields }: ExportProps) {
  const status = useSignal('');
  const running = useSignal(false);
  const run = async (format: 'jsonl' | 'csv') => {
    running.value = true;
    const separator = separatorOf(language.value);
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
        parts.push(new Blob([format === 'jsonl' ? elements.map((object) => `${JSON.stringify(object)}\n`).join('') : csvRows(elements, columns, separator)]));
        count += elements.length;
        status.value = t('exporting', { count });
        if (elements.length < PAGE || count >= set['~UnfilteredCount']) break;
      }
      if (format === 'jsonl') saveBlob(new Blob(parts, { type: 'application/x-ndjson' }), `${className}.jsonl`);
      // a BOM: Excel reads the file as UTF-8 only with one (umlauts intact)
      else saveBlob(new Blob(['\uFEFF', `${columns.map((name) => cell(name, separator)).join(separator)}\r\n`, ...parts], { type: 'text/csv;charset=utf-8' }), `${className}.csv`);
      status.value = t('exported', { count, file: `${className}.${format}` });
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
