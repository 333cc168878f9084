import { t } from '../i18n/index.js';

export interface Column {
  name: string;
  shown: boolean;
}

/** Which columns the table shows, and in what order (kept per class by the caller). */
export function ColumnChooser({ columns, onChange }: { columns: Column[]; onChange(next: Column[]): void }) {
  const move = (index: number, by: number) => {
    const next = [...columns];
    const [column] = next.splice(index, 1);
    next.splice(index + by, 0, column!);
    onChange(next);
  };
  return (
    <details class="columns">
      <summary>{t('columns')}</summary>
      <ul>
        {columns.map((column, index) => (
          <li key={column.name}>
            <label class="check">
              <input type="checkbox" checked={column.shown} onChange={(e) => onChange(columns.map((c) => (c === column ? { ...c, shown: e.currentTarget.checked } : c)))} />
              <span>{column.name}</span>
            </label>
            <button type="button" class="icon" disabled={index === 0} onClick={() => move(index, -1)} aria-label={t('moveLeft', { column: column.name })}>
              ↑
            </button>
            <button type="button" class="icon" disabled={index === columns.length - 1} onClick={() => move(index, 1)} aria-label={t('moveRight', { column: column.name })}>
              ↓
            </button>
          </li>
        ))}
      </ul>
    </details>
  );
}
