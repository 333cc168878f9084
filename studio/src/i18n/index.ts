import { signal } from '@preact/signals';
import { prefs } from '../prefs.js';
import { de } from './de.js';
import { en, type Texts } from './en.js';

export type Language = 'en' | 'de';
const TABLES: Record<Language, Texts> = { en, de };

const initial = (): Language => {
  const saved = prefs.get('language');
  if (saved === 'en' || saved === 'de') return saved;
  return navigator.language.toLowerCase().startsWith('de') ? 'de' : 'en';
};

/** The language in use; changing it re-renders every text. */
export const language = signal<Language>(initial());

export function setLanguage(next: Language): void {
  language.value = next;
  prefs.set('language', next);
  document.documentElement.lang = next;
}

/** `text` with its `{name}` placeholders filled from `values`. */
export const fill = (text: string, values: Record<string, string | number>): string => text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));

/** The text of `key` in the current language, `{name}` placeholders filled from `values`. */
export function t(key: keyof Texts, values: Record<string, string | number> = {}): string {
  return fill(TABLES[language.value][key], values);
}
