import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import type { ChangeEvent, OdbRestClient } from 'odbrest/client';
import { Alert } from '../components/Alert.js';
import { failureText, loadClasses } from '../data.js';
import { t } from '../i18n/index.js';
import { openObject } from '../router.js';
import { followed, keyOf, liveState, MOST_SUBSCRIPTIONS, useLive } from '../features/live.js';
import { LiveStatus } from '../components/LiveStatus.js';

/** Events the inspector keeps (the newest; older ones drop off). */
const KEPT = 500;
const MOST_CLASSES = MOST_SUBSCRIPTIONS;

interface Seen {
  /** Order of arrival: the row's key. */
  seq: number;
  time: Date;
  kind: ChangeEvent['type'];
  className?: string;
  objectId?: string;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const clock = (time: Date) => `${pad(time.getHours())}:${pad(time.getMinutes())}:${pad(time.getSeconds())}.${pad(time.getMilliseconds(), 3)}`;

/**
 * The live events inspector (PROTOCOL.md 8): every change this session may see, as it arrives (time,
 * kind, class, object, a link to its panel), from one stream over the readable classes (at most 20 a
 * stream) or over the class the filter names. Pause holds the list still; what arrives meanwhile is
 * kept and shown on Resume.
 */
export function Events({ client }: { client: OdbRestClient }) {
  const classes = useSignal<string[] | undefined>(undefined);
  const only = useSignal('');
  const events = useSignal<Seen[]>([]);
  const paused = useSignal(false);
  const held = useSignal<Seen[]>([]);
  const error = useSignal('');

  useEffect(() => {
    loadClasses(client).then(
      (found) => (classes.value = found.map((entry) => entry.Name).sort((a, b) => a.localeCompare(b))),
      (cause) => (error.value = failureText(cause)),
    );
  }, [client]);

  const wanted = only.value ? [only.value] : (classes.value ?? []).slice(0, MOST_CLASSES);
  const seq = useRef(0);
  useLive(
    client,
    wanted.map((className) => ({ className })),
    (event) => {
      if (event.type === 'end') return;
      const seen: Seen = { seq: ++seq.current, time: new Date(), kind: event.type, className: event.className, objectId: event.objectId };
      if (paused.peek()) held.value = [seen, ...held.peek()].slice(0, KEPT);
      else events.value = [seen, ...events.peek()].slice(0, KEPT);
    },
    wanted.join(','),
  );
  // the one stream may hold fewer of these classes than asked for (panels' subscriptions come first)
  const following = wanted.filter((className) => followed.value.has(keyOf({ className }))).length;
  const live = liveState.value.kind === 'live' || liveState.value.kind === 'idle';

  const resume = () => {
    events.value = [...held.value, ...events.value].slice(0, KEPT);
    held.value = [];
    paused.value = false;
  };
  const shown = only.value ? events.value.filter((event) => event.className === only.value) : events.value;
  return (
    <section class="screen events" aria-labelledby="events-title">
      <h1 id="events-title">{t('events')}</h1>
      <p class="hint">{t('eventsHint')}</p>
      <div class="toolbar">
        <label class="inline">
          <span>{t('eventsClass')}</span>
          <select value={only.value} onChange={(event) => (only.value = event.currentTarget.value)}>
            <option value="">{t('allClasses')}</option>
            {(classes.value ?? []).map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <span class="inline">
          {paused.value ? (
            <button type="button" class="primary" onClick={resume}>
              {t('resume', { count: held.value.length })}
            </button>
          ) : (
            <button type="button" onClick={() => (paused.value = true)}>
              {t('pause')}
            </button>
          )}
          <button type="button" onClick={() => ((events.value = []), (held.value = []))}>
            {t('clearEvents')}
          </button>
        </span>
      </div>
      {!only.value && (classes.value?.length ?? 0) > MOST_CLASSES && <p class="hint">{t('eventsFirstClasses', { count: MOST_CLASSES })}</p>}
      <p class="hint" aria-live="polite" data-state={paused.value ? 'paused' : live ? 'live' : 'off'}>
        {paused.value ? t('eventsPaused', { count: held.value.length }) : live ? t('eventsLive', { count: following }) : <LiveStatus />}
      </p>
      <Alert text={error.value} />
      {shown.length === 0 ? (
        <p>{t('noEvents')}</p>
      ) : (
        <table class="grid event-log">
          <thead>
            <tr>
              <th scope="col">{t('eventTime')}</th>
              <th scope="col">{t('eventKind')}</th>
              <th scope="col">{t('className')}</th>
              <th scope="col">{t('object')}</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((event) => (
              <tr key={event.seq} data-kind={event.kind} data-object={event.objectId}>
                <td>
                  <time dateTime={event.time.toISOString()}>{clock(event.time)}</time>
                </td>
                <td>
                  <span class={`kind kind-${event.kind}`}>{t(`kind_${event.kind}` as 'kind_create')}</span>
                </td>
                <td>{event.className ?? ''}</td>
                <td>
                  {event.objectId && event.kind !== 'delete' && event.kind !== 'leave' ? (
                    <a
                      href={`#open:${event.objectId}`}
                      onClick={(click) => {
                        click.preventDefault();
                        openObject(event.objectId!);
                      }}
                    >
                      {event.objectId}
                    </a>
                  ) : (
                    (event.objectId ?? '')
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
