/**
 * Preferences kept in localStorage (language, theme; per user: columns per class, recent queries):
 * never a credential. A browser that refuses storage still works, without memory.
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
  /**
   * Drops what is private to `user` (the recent queries, which hold the values searched for) at
   * logout; the column layouts stay. Recent queries kept before they were per user go too.
   */
  forgetPrivate(user: string): void {
    try {
      const gone = [userKey(user, RECENT), RECENT].map((key) => PREFIX + key);
      for (const key of Object.keys(localStorage)) if (gone.some((start) => key.startsWith(start))) localStorage.removeItem(key);
    } catch {
      // storage refused: nothing kept
    }
  },
};

/** The key prefix of recent queries (`recent:<class>`). */
export const RECENT = 'recent:';

/** A preference of one person, by user name: two people on one browser never see each other's. */
export const userKey = (user: string, key: string): string => `user:${encodeURIComponent(user)}:${key}`;
