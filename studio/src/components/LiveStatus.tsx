import { liveState } from '../features/live.js';
import { t } from '../i18n/index.js';

/**
 * Says when live updates are off (the event stream refused with `429`/`503`, cut, or ended with an
 * error), and nothing while they flow: the screens then show what they read last.
 */
export function LiveStatus({ compact = false }: { compact?: boolean }) {
  const state = liveState.value;
  if (state.kind === 'live' || state.kind === 'idle') return null;
  const why =
    state.kind === 'failed'
      ? t('liveFailed', { message: state.message })
      : t(state.code === '429' ? 'liveRefused429' : state.code === '503' ? 'liveRefused503' : 'liveCut', { seconds: Math.max(1, Math.round(state.retryInMs / 1000)) });
  return (
    <span class={`live-off${compact ? ' compact' : ''}`} role="status" data-live={state.kind} data-code={state.kind === 'waiting' ? state.code : undefined} title={why}>
      {compact ? t('liveOff') : `${t('liveOff')}: ${why}`}
    </span>
  );
}
