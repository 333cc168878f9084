import { useSignal } from '@preact/signals';
import { useEffect, useMemo, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import uPlotStyle from 'uplot/dist/uPlot.min.css?url';
import type { InstanceMetrics, OdbRestClient, RecentRequest } from 'odbrest/client';
import { Alert } from '../components/Alert.js';
import { failureText } from '../data.js';
import { tConsole } from '../i18n/console.js';
import { language, t } from '../i18n/index.js';
import { theme } from '../theme.js';

/** How often the screen reads the metrics and requests again while it is open. */
const REFRESH_MS = 10_000;
/** Requests a page of the table shows (of the up to 1,000 the instance keeps). */
const PER_PAGE = 50;

/** uPlot's style sheet, a file of the build linked when this screen first shows (the CSP allows the service's own style sheets, no inline style). */
function linkChartStyle(): void {
  if (document.querySelector('link[data-chart-style]')) return;
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = new URL(uPlotStyle, import.meta.url).href;
  link.dataset.chartStyle = '';
  document.head.append(link);
}

interface Line {
  label: string;
  values: Array<number | null>;
  /** A custom property of the theme (styles.css): the line's colour follows light and dark. */
  color: string;
  /** Mark each point: a series with gaps (latency has none where there were no requests) may have points no line joins. */
  points?: boolean;
}

/** One chart of the series, drawn by uPlot into a canvas; redrawn when the data, the language or the theme change, resized with its box. */
function Chart({ id, title, times, lines, unit }: { id: string; title: string; times: number[]; lines: Line[]; unit: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const target = box.current;
    if (!target) return;
    const style = getComputedStyle(document.documentElement);
    const color = (name: string) => style.getPropertyValue(name).trim();
    const axis = { stroke: color('--fg'), grid: { stroke: color('--line'), width: 1 }, ticks: { stroke: color('--line'), width: 1 } };
    // times and numbers in the console's language (Intl), not uPlot's English defaults
    const clock = new Intl.DateTimeFormat(language.value, { hour: '2-digit', minute: '2-digit' });
    const moment = new Intl.DateTimeFormat(language.value, { dateStyle: 'medium', timeStyle: 'medium' });
    const number = new Intl.NumberFormat(language.value, { maximumFractionDigits: 2 });
    const plot = new uPlot(
      {
        width: Math.max(240, target.clientWidth),
        height: 180,
        scales: { x: { time: true } },
        series: [
          { label: t('eventTime'), value: (_: uPlot, value: number | null) => (value === null ? '–' : moment.format(value * 1000)) },
          ...lines.map((line) => ({ label: line.label, stroke: color(line.color), width: 2, spanGaps: false, points: { show: line.points ?? false, size: 5, fill: color(line.color) }, value: (_: uPlot, value: number | null) => (value === null ? '–' : `${number.format(value)} ${unit}`.trim()) })),
        ],
        axes: [
          { ...axis, values: (_: uPlot, splits: number[]) => splits.map((split) => clock.format(split * 1000)) },
          { ...axis, size: 56, values: (_: uPlot, splits: number[]) => splits.map((split) => number.format(split)) },
        ],
        cursor: { drag: { x: false, y: false } },
      },
      [times, ...lines.map((line) => line.values)],
      target,
    );
    const resized = new ResizeObserver(() => plot.setSize({ width: Math.max(240, target.clientWidth), height: 180 }));
    resized.observe(target);
    return () => {
      resized.disconnect();
      plot.destroy();
    };
  }, [times, lines, theme.value, language.value]);
  const last = lines.map((line) => `${line.label}: ${line.values.at(-1) ?? '–'} ${unit}`.trim()).join(', ');
  return (
    <figure class="chart" aria-labelledby={`${id}-title`} data-chart={id}>
      <figcaption id={`${id}-title`}>{title}</figcaption>
      <p class="visually-hidden">{tConsole('chartNow', { values: last })}</p>
      <div ref={box} class="chart-box" />
    </figure>
  );
}

const ms = (value: number | null) => (value === null ? '–' : new Intl.NumberFormat(language.value, { maximumFractionDigits: 2 }).format(value));

/** The routes' table: requests, 5xx, p50 and p99 per route template over the same minutes, busiest first. */
function Routes({ routes }: { routes: InstanceMetrics['Routes'] }) {
  const sorted = [...routes].sort((a, b) => b.Count - a.Count || a.Route.localeCompare(b.Route));
  return (
    <section aria-labelledby="routes-title">
      <h2 id="routes-title">{tConsole('metricsRoutes')}</h2>
      {sorted.length === 0 ? (
        <p>{tConsole('noRequests')}</p>
      ) : (
        <table class="grid metric-routes">
          <thead>
            <tr>
              <th scope="col">{tConsole('method')}</th>
              <th scope="col">{tConsole('route')}</th>
              <th scope="col" class="num">{tConsole('requestsCount')}</th>
              <th scope="col" class="num">{tConsole('errorsCount')}</th>
              <th scope="col" class="num">p50 ms</th>
              <th scope="col" class="num">p99 ms</th>
            </tr>
          </thead>
          <tbody>
            {sorted.map((entry) => (
              <tr key={`${entry.Method} ${entry.Route}`} data-route={`${entry.Method} ${entry.Route}`}>
                <td>{entry.Method}</td>
                <th scope="row">{entry.Route}</th>
                <td class="num">{entry.Count}</td>
                <td class="num">{entry.Errors}</td>
                <td class="num">{ms(entry.P50Ms)}</td>
                <td class="num">{ms(entry.P99Ms)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** The instance's recent requests, newest first, each with its `X-Request-Id` (as the service's request log writes it), filtered by any of their words. */
function Requests({ requests }: { requests: RecentRequest[] }) {
  const filter = useSignal('');
  const page = useSignal(0);
  const needle = filter.value.trim().toLowerCase();
  const matching = needle
    ? requests.filter((entry) => [entry.RequestId, entry.Route ?? '', entry.Method, String(entry.Status), entry.User ?? ''].some((text) => text.toLowerCase().includes(needle)))
    : requests;
  const pages = Math.max(1, Math.ceil(matching.length / PER_PAGE));
  const at = Math.min(page.value, pages - 1);
  return (
    <section aria-labelledby="requests-title">
      <h2 id="requests-title">{tConsole('recentRequests')}</h2>
      <div class="toolbar">
        <label class="inline">
          <span>{tConsole('findRequest')}</span>
          <input type="search" name="request-filter" spellcheck={false} value={filter.value} onInput={(event) => ((filter.value = event.currentTarget.value), (page.value = 0))} />
        </label>
        <nav class="pager" aria-label={t('page', { page: at + 1, pages })}>
          <button type="button" disabled={at === 0} onClick={() => (page.value = at - 1)} aria-label={t('previousPage')}>
            ‹
          </button>
          <span>{t('page', { page: at + 1, pages })}</span>
          <button type="button" disabled={at + 1 >= pages} onClick={() => (page.value = at + 1)} aria-label={t('nextPage')}>
            ›
          </button>
        </nav>
      </div>
      {matching.length === 0 ? (
        <p>{tConsole('noRequests')}</p>
      ) : (
        // scrolls sideways on a narrow screen: focusable so the keyboard can scroll it
        <div class="table-wrap" tabIndex={0} role="region" aria-labelledby="requests-title">
          <table class="grid recent-requests">
            <thead>
              <tr>
                <th scope="col">{t('eventTime')}</th>
                <th scope="col">{tConsole('method')}</th>
                <th scope="col">{tConsole('route')}</th>
                <th scope="col" class="num">HTTP</th>
                <th scope="col">{tConsole('code')}</th>
                <th scope="col" class="num">ms</th>
                <th scope="col">{t('user')}</th>
                <th scope="col">X-Request-Id</th>
              </tr>
            </thead>
            <tbody>
              {matching.slice(at * PER_PAGE, (at + 1) * PER_PAGE).map((entry) => (
                <tr key={entry.RequestId} data-request-id={entry.RequestId} data-status={entry.Status} class={entry.Status >= 500 ? 'failed' : undefined}>
                  <td>{entry.Time}</td>
                  <td>{entry.Method}</td>
                  <td>{entry.Route ?? '–'}</td>
                  <td class="num">{entry.Status}</td>
                  <td>{entry.Code ?? ''}</td>
                  <td class="num">{ms(entry.DurationMs)}</td>
                  <td>{entry.User ?? ''}</td>
                  <td>
                    <code>{entry.RequestId}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/**
 * The instance's metrics and recent requests (PROTOCOL.md 6.12, `GET /v1/admin/metrics` and
 * `/v1/admin/requests`; members of `users.admins`): charts of requests and errors, p50/p99 latency and
 * sessions over the last 15 or 60 minutes (uPlot, in this screen's chunk only), a table per route and
 * the recent requests with their request ids. Read again every 10 seconds while open.
 */
export function Metrics({ client }: { client: OdbRestClient }) {
  const minutes = useSignal(15);
  const metrics = useSignal<InstanceMetrics | undefined>(undefined);
  const requests = useSignal<RecentRequest[] | undefined>(undefined);
  const error = useSignal('');
  const reads = useSignal(0);
  useEffect(linkChartStyle, []);
  useEffect(() => {
    let current = true;
    Promise.all([client.admin.metrics(minutes.value), client.admin.requests({ perPage: 1000 })]).then(
      ([answer, recent]) => current && ((metrics.value = answer), (requests.value = recent['~Elements']), (error.value = '')),
      (cause) => current && (error.value = failureText(cause)),
    );
    const timer = setTimeout(() => (reads.value += 1), REFRESH_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [client, minutes.value, reads.value]);

  const answer = metrics.value;
  return (
    <section class="screen metrics" aria-labelledby="metrics-title">
      <h1 id="metrics-title">{t('metrics')}</h1>
      <p class="hint">{tConsole('metricsHint')}</p>
      <div class="toolbar">
        <span class="inline">
          <label class="inline">
            <span>{tConsole('metricsMinutes')}</span>
            <select name="minutes" value={String(minutes.value)} onChange={(event) => (minutes.value = Number(event.currentTarget.value))}>
              <option value="15">{tConsole('lastMinutes', { minutes: 15 })}</option>
              <option value="60">{tConsole('lastMinutes', { minutes: 60 })}</option>
            </select>
          </label>
          <button type="button" onClick={() => (reads.value += 1)}>
            {tConsole('refresh')}
          </button>
        </span>
        {answer && (
          <span class="hint" data-instance={answer.Instance}>
            {tConsole('metricsInstance', { instance: answer.Instance, seconds: answer.Interval })}
          </span>
        )}
      </div>
      <Alert text={error.value} />
      {!answer && !error.value && <p aria-busy="true">{t('loading')}</p>}
      {answer && <Charts answer={answer} />}
      {answer && <Routes routes={answer.Routes} />}
      {requests.value && <Requests requests={requests.value} />}
    </section>
  );
}

/** The three charts of one answer (drawn again only when a new answer comes, or the language changes). */
function Charts({ answer }: { answer: InstanceMetrics }) {
  const lang = language.value;
  const { times, traffic, latency, sessions } = useMemo(() => {
    const series = answer.Series;
    // the points' times: the last one is the interval in progress (seconds, as uPlot takes them)
    const now = Math.floor(Date.now() / 1000);
    const last = now - (now % answer.Interval);
    return {
      times: series.Requests.map((_, index, all) => last - (all.length - 1 - index) * answer.Interval),
      traffic: [
        { label: tConsole('requestsCount'), values: series.Requests, color: '--accent' },
        { label: tConsole('errorsCount'), values: series.Errors, color: '--error' },
      ],
      latency: [
        { label: 'p50', values: series.P50Ms, color: '--accent', points: true },
        { label: 'p99', values: series.P99Ms, color: '--chart-2', points: true },
      ],
      sessions: [{ label: tConsole('sessionsCount'), values: series.Sessions, color: '--secure' }],
    };
  }, [answer, lang]);
  return (
    <div class="charts">
      <Chart id="chart-requests" title={tConsole('chartRequests')} times={times} lines={traffic} unit="" />
      <Chart id="chart-latency" title={tConsole('chartLatency')} times={times} lines={latency} unit="ms" />
      <Chart id="chart-sessions" title={tConsole('chartSessions')} times={times} lines={sessions} unit="" />
    </div>
  );
}
