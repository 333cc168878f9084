import { useEffect } from 'preact/hooks';
import { closeTop, route } from './router.js';

/**
 * The keyboard: `/` focuses the query (or filter) box, `j`/`k` move the row selection of the table on
 * screen, Enter opens the selected row, Esc closes the top panel (or leaves a box). One listener for
 * the page; the screen on show registers its table.
 */
export interface RowKeys {
  move(by: number): void;
  open(): void;
}

let rows: RowKeys | undefined;

const typing = (target: EventTarget | null) =>
  target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));

addEventListener('keydown', (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === 'Escape') {
    if (typing(event.target) && event.target instanceof HTMLElement && event.target.closest('.panel') === null) {
      event.target.blur();
      return;
    }
    if (route.value.stack.length > 0) {
      event.preventDefault();
      closeTop();
    }
    return;
  }
  if (typing(event.target)) return;
  if (event.key === '/') {
    const box = document.querySelector<HTMLInputElement>('[data-search]');
    if (box) {
      event.preventDefault();
      box.focus();
      box.select();
    }
    return;
  }
  // rows belong to the screen under the panels: with a panel open, j/k/Enter stay in the panel
  if (!rows || route.value.stack.length > 0) return;
  if (event.key === 'j' || event.key === 'ArrowDown') rows.move(1);
  else if (event.key === 'k' || event.key === 'ArrowUp') rows.move(-1);
  else if (event.key === 'Enter' && !(event.target instanceof HTMLButtonElement || event.target instanceof HTMLAnchorElement)) rows.open();
  else return;
  event.preventDefault();
});

/** Registers the table on screen for `j`/`k`/Enter while the component lives. */
export function useRowKeys(keys: RowKeys): void {
  useEffect(() => {
    rows = keys;
    return () => {
      if (rows === keys) rows = undefined;
    };
  });
}
