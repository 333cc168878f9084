import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { t } from '../i18n/index.js';

/** How long a notice stays: information 8 s, one with an action (Undo) 30 s; an error until it is closed. */
const SHOWN_MS = 8_000;
const SHOWN_WITH_ACTION_MS = 30_000;

/**
 * What the screens share about writes: `changed` counts the writes this tab made (a table or list
 * that shows objects reads again when it moves), and `notice` is the one message at the foot of the
 * page, with an action such as Undo.
 */
export const changed = signal(0);
export const touch = () => void (changed.value += 1);

export interface Notice {
  text: string;
  action?: { label: string; run(): unknown };
  error?: boolean;
}
export const notice = signal<Notice | undefined>(undefined);

/**
 * The message at the foot of the page (a live region, so screen readers say it). It closes by itself
 * unless it is an error; it sits in the page's flow at its foot (sticky), so it never hides what is
 * above it for good: the page scrolls past it.
 */
export function NoticeBar() {
  const current = notice.value;
  useEffect(() => {
    if (!current || current.error) return;
    const timer = setTimeout(() => notice.value === current && (notice.value = undefined), current.action ? SHOWN_WITH_ACTION_MS : SHOWN_MS);
    return () => clearTimeout(timer);
  }, [current]);
  return (
    <div class="notice-area" role="status" aria-live="polite">
      {current && (
        <div class={`notice${current.error ? ' error' : ''}`}>
          <span>{current.text}</span>
          {current.action && (
            <button
              type="button"
              class="primary"
              onClick={() => {
                const action = current.action!;
                notice.value = undefined;
                action.run();
              }}
            >
              {current.action.label}
            </button>
          )}
          <button type="button" class="icon" aria-label={t('close')} onClick={() => (notice.value = undefined)}>
            ✕
          </button>
        </div>
      )}
    </div>
  );
}
