import type { ComponentChildren } from 'preact';
import { t } from '../i18n/index.js';

/** One refused item: what it is (an object's link, a file's line) and why it was (or would be) refused. */
export interface RefusalRow {
  key: string;
  /** `data-object` or `data-line` of the row, for the tests and the styles. */
  data: Record<string, string | number>;
  what: ComponentChildren;
  /** The service's `internalStatus` for it, where it gave one. */
  code?: string;
  why: string;
}

/** What bulk work and imports were refused, and why (with the service's code when any row has one). */
export function Refusals({ head, rows }: { head: string; rows: RefusalRow[] }) {
  const coded = rows.some((row) => row.code !== undefined);
  return (
    <table class="grid refused">
      <thead>
        <tr>
          <th scope="col">{head}</th>
          {coded && <th scope="col">{t('code')}</th>}
          <th scope="col">{t('why')}</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.key} {...row.data}>
            <td>{row.what}</td>
            {coded && <td class="code">{row.code}</td>}
            <td>{row.why}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
