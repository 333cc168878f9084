import { useSignal } from '@preact/signals';
import { OPERATIONS, type OdbRestClient, type OperationId } from 'odbrest/client';
import { config } from '../config.js';
import { t } from '../i18n/index.js';

/** What to copy: the table's current page (its query text and order) or one object. */
export type Target = { className: string; queryText: string; orderBy?: string; page: number; perPage: number } | { objectId: string };

/** A word for a POSIX shell: in single quotes, a quote inside as `'\''`. */
const shell = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
const js = (value: unknown) => JSON.stringify(value);

/** The operation of the route table that `target` calls (`getObject`, `listObjects`). */
const operationIdOf = (target: Target): OperationId => ('objectId' in target ? 'getV1ObjectId' : 'getV1ObjectsClassName');

/** An operation's path with its parameters filled in (`/v1/object/{id}` -> `/v1/object/A1`). */
const filled = (id: OperationId, params: Record<string, string>) => OPERATIONS[id].path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));

/** The route and query of `target`, as the client sends them. */
function pathOf(target: Target): string {
  if ('objectId' in target) return filled(operationIdOf(target), { id: target.objectId });
  const query = new URLSearchParams({ page: String(target.page), perPage: String(target.perPage) });
  if (target.queryText.trim()) query.set('query', JSON.stringify({ queryString: target.queryText }));
  if (target.orderBy) query.set('orderBy', target.orderBy);
  return `${filled(operationIdOf(target), { className: target.className })}?${query}`;
}

/** The operation `target` calls, as Swagger UI deep-links it on the host's reference page: `#/{tag}/{operationId}`. */
function operationOf(target: Target): { route: string; link: string } {
  const id = operationIdOf(target);
  const { method, path, tag } = OPERATIONS[id];
  return { route: `${method} ${path}`, link: `#/${tag.replace(/\s/g, '_')}/${id}` };
}

/**
 * The session as a copy can use it: a plain session's id; a secure session's key never leaves the
 * page, so the copy reads a plain session's id from `ODBREST_SESSION` instead.
 */
function sessionOf(client: OdbRestClient): string | undefined {
  const saved = client.credential as { sessionId?: string } | undefined;
  return client.sessionKind === 'secure' ? undefined : saved?.sessionId;
}

export function curlOf(client: OdbRestClient, target: Target): string {
  const sessionId = sessionOf(client);
  const session = sessionId === undefined ? `"sessionId: $ODBREST_SESSION"` : shell(`sessionId: ${sessionId}`);
  return `curl -s ${shell(config.apiBase + pathOf(target))} -H ${shell(`appkey: ${config.appKey}`)} -H ${session}`;
}

export function clientCodeOf(client: OdbRestClient, target: Target): string {
  const sessionId = sessionOf(client);
  const call =
    'objectId' in target
      ? `client.getObject(${js(target.objectId)})`
      : `client.listObjects(${js(target.className)}, ${js({ ...(target.queryText.trim() ? { queryText: target.queryText } : {}), ...(target.orderBy ? { orderBy: target.orderBy } : {}), page: target.page, perPage: target.perPage })})`;
  return [
    `import { createClient } from 'odbrest/client';`,
    ``,
    `const client = createClient({ baseUrl: ${js(config.apiBase)}, appKey: ${js(config.appKey)} });`,
    `await client.resume({ sessionId: ${sessionId === undefined ? 'process.env.ODBREST_SESSION!' : js(sessionId)} });`,
    `console.log(await ${call});`,
  ].join('\n');
}

/**
 * "Copy as curl" and "Copy as client code" (odbrest/client) for the current query or an open object,
 * shown to read and copied on a click; and, where the host named its API reference page, a link to
 * the operation there (in a new tab: this one holds the session).
 */
export function CopyAs({ client, target }: { client: OdbRestClient; target: Target }) {
  const copied = useSignal('');
  const secure = client.sessionKind === 'secure';
  const copy = (text: string, what: string) =>
    navigator.clipboard.writeText(text).then(
      () => (copied.value = t('copied', { what })),
      () => (copied.value = t('copyRefused')),
    );
  const curl = curlOf(client, target);
  const code = clientCodeOf(client, target);
  const operation = operationOf(target);
  return (
    <details class="copy-as">
      <summary>{t('forDevelopers')}</summary>
      {secure && <p class="hint">{t('copySecureNote')}</p>}
      <label>
        <span>curl</span>
        <textarea readOnly rows={3} data-copy="curl" value={curl} />
      </label>
      <button type="button" onClick={() => void copy(curl, 'curl')}>
        {t('copyAsCurl')}
      </button>
      <label>
        <span>odbrest/client</span>
        <textarea readOnly rows={5} data-copy="client" value={code} />
      </label>
      <button type="button" onClick={() => void copy(code, 'odbrest/client')}>
        {t('copyAsClient')}
      </button>
      <span aria-live="polite">{copied.value}</span>
      {config.docs && (
        <p>
          <a class="docs-link" href={config.docs + operation.link} target="_blank" rel="noopener noreferrer">
            {t('operationInDocs', { route: operation.route })}
          </a>
        </p>
      )}
    </details>
  );
}
