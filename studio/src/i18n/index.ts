import { signal } from '@preact/signals';
import { prefs } from '../prefs.js';
import { en, type Texts } from './en.js';

export type Language = 'en' | 'de';
/** The texts by language: English is part of the first page; German is a chunk of its own, loaded when it is the language (the first screen stays small). */
const TABLES: Partial<Record<Language, Texts>> = { en };

/** Loads the texts of `lang` when they are not here yet. */
export async function loadLanguage(lang: Language): Promise<void> {
  if (!TABLES[lang]) TABLES[lang] = (await import('./de.js')).de;
}

const initial = (): Language => {
  const saved = prefs.get('language');
  if (saved === 'en' || saved === 'de') return saved;
  return navigator.language.toLowerCase().startsWith('de') ? 'de' : 'en';
};

/** The language in use; changing it re-renders every text. */
export const language = signal<Language>(initial());

/** Switches to `next` once its texts are loaded (a chunk that cannot load leaves the language as it is). */
export async function setLanguage(next: Language): Promise<void> {
  await loadLanguage(next);
  language.value = next;
  prefs.set('language', next);
  document.documentElement.lang = next;
}

/** `text` with its `{name}` placeholders filled from `values`. */
export const fill = (text: string, values: Record<string, string | number>): string => text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));

/** A text with a count: its forms by the language's plural rules (`Intl.PluralRules`: English and German have `one` and `other`). */
export interface Plural {
  one: string;
  other: string;
}

/** `count` in the console's language (`1,030` in English, `1.030` in German). */
export const formatCount = (count: number): string => new Intl.NumberFormat(language.value).format(count);

/**
 * `text` for `values`: a text with plural forms takes the one the language's rules choose for a
 * numeric `count`, and that count is written in the language's way.
 */
export function plural(text: string | Plural, values: Record<string, string | number>): string {
  const { count } = values;
  if (typeof count !== 'number') return fill(typeof text === 'string' ? text : text.other, values);
  const form = typeof text === 'string' ? text : new Intl.PluralRules(language.value).select(count) === 'one' ? text.one : text.other;
  return fill(form, { ...values, count: formatCount(count) });
}

/** The text of `key` in the current language, `{name}` placeholders filled from `values` (a numeric `count` chooses the plural form). */
export function t(key: keyof Texts, values: Record<string, string | number> = {}): string {
  return plural((TABLES[language.value] ?? en)[key], values);
}
