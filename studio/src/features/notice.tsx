import { signal } from '@preact/signals';
import { t } from '../i18n/index.js';

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

/** The message at the foot of the page (a live region, so screen readers say it). */
export function NoticeBar() {
  const current = notice.value;
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
