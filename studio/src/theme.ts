import { effect, signal } from '@preact/signals';
import { prefs } from './prefs.js';

/** `system` follows the browser's colour scheme; `light` and `dark` override it (kept in localStorage). */
export type Theme = 'system' | 'light' | 'dark';

const saved = prefs.get('theme');
export const theme = signal<Theme>(saved === 'light' || saved === 'dark' ? saved : 'system');

/** Keeps the page's `data-theme` on the chosen theme, following the system's while `system` is chosen (called once, at start). */
export function followTheme(): void {
  const dark = matchMedia('(prefers-color-scheme: dark)');
  const apply = () => {
    const chosen = theme.value === 'system' ? (dark.matches ? 'dark' : 'light') : theme.value;
    document.documentElement.dataset.theme = chosen;
  };
  dark.addEventListener('change', apply);
  effect(apply);
}

export function setTheme(next: Theme): void {
  theme.value = next;
  prefs.set('theme', next);
}
