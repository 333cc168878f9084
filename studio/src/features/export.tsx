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

function toCsv(objects: SerializedObject[], fields: string[]): string {
  const named = new Set([...META, ...fields]);
  const extra = [...new Set(objects.flatMap((object) => Object.keys(object).filter((key) => !named.has(key) && !key.startsWith('~'))))];
  const columns = [...META, ...fields, ...extra];
  return [columns.map(cell).join(','), ...objects.map((object) => columns.map((column) => cell(object[column])).join(','))].join('\r\n') + '\r\n';
}

/**
 * Export of the current query's objects (all pages, in the table's order) as JSON Lines (one object
 * per line, as the service serializes it) or CSV; the pages are read one after the other, the count so
 * far shown while it runs.
 */
export function Export({ client, className, queryText, orderBy, fields }: ExportProps) {
  const status = useSignal('');
  const running = useSignal(false);
  const run = async (format: 'jsonl' | 'csv') => {
    running.value = true;
    status.value = t('exporting', { count: 0 });
    try {
      const objects: SerializedObject[] = [];
      const lines: string[] = [];
      for (let page = 0; ; page++) {
        const set = await client.listObjects(className, { page, perPage: PAGE, orderBy, ...(queryText.trim() ? { queryText } : {}) });
        const elements = set['~Elements'];
        if (format === 'jsonl') for (const object of elements) lines.push(`${JSON.stringify(object)}\n`);
        else objects.push(...elements);
        const done = page * PAGE + elements.length;
        status.value = t('exporting', { count: done.toLocaleString() });
        if (elements.length < PAGE || done >= set['~UnfilteredCount']) break;
      }
      if (format === 'jsonl') saveBlob(new Blob(lines, { type: 'application/x-ndjson' }), `${className}.jsonl`);
      else saveBlob(new Blob([toCsv(objects, fields)], { type: 'text/csv;charset=utf-8' }), `${className}.csv`);
      status.value = t('exported', { count: (format === 'jsonl' ? lines.length : objects.length).toLocaleString(), file: `${className}.${format}` });
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
