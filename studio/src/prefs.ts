/**
 * Preferences kept in localStorage (language, theme, columns per class, recent queries): never a
 * credential. A browser that refuses storage still works, without memory.
 */
const PREFIX = 'odbrest-studio:';

export const prefs = {
  get(key: string): string | undefined {
    try {
      return localStorage.getItem(PREFIX + key) ?? undefined;
    } catch {
      return undefined;
    }
  },
  set(key: string, value: string): void {
    try {
      localStorage.setItem(PREFIX + key, value);
    } catch {
      // storage full or refused: the preference lasts for this page only
    }
  },
  getJson<T>(key: string, fallback: T): T {
    const text = this.get(key);
    if (text === undefined) return fallback;
    try {
      return JSON.parse(text) as T;
    } catch {
      return fallback;
    }
  },
  setJson(key: string, value: unknown): void {
    this.set(key, JSON.stringify(value));
  },
};
