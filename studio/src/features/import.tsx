import { useSignal } from '@preact/signals';
import { batchItem, type ModelMember, type OdbRestClient } from 'odbrest/client';
import { Alert } from '../components/Alert.js';
import { Refusals } from '../components/Refusals.js';
import { failureText } from '../data.js';
import { t } from '../i18n/index.js';
import { batched, refusedItem } from './batch.js';
import { notice, touch } from './notice.js';
import { csvRows, fileText, jsonRows, type Row, type RowRefusal } from './rows.js';

/** Objects one check takes (PROTOCOL.md 6.12). */
const CHECKED = 1000;

/** What the dry run found: the rows to write and those the service would refuse. */
interface DryRun {
  file: string;
  rows: Row[];
  refused: RowRefusal[];
}

/**
 * The dry run is the service's: the file read into rows (UTF-8, else Windows-1252; a CSV's separator
 * taken from its header), then each row checked by
 * `POST /v1/model/classes/{className}/check` (1,000 a call) exactly as its create would be (the
 * declaration, the class's create rule for this session, the references, the host's own rules), each
 * refusal with its row, code and message. The page only reads the file (CSV cells typed by the
 * declaration, `GET /v1/model/structure`).
 */
async function dryRun(client: OdbRestClient, className: string, file: File): Promise<DryRun> {
  const text = fileText(await file.arrayBuffer());
  const model = await client.modelStructure([className]).catch(() => undefined);
  const entry = model?.['~Elements'].find((candidate) => candidate.Name === className);
  const members: ModelMember[] = entry?.Declared ? entry.Members.filter((member) => !member.Base) : [];
  const csv = /\.csv$/i.test(file.name) || file.type === 'text/csv';
  const { rows, refused } = csv ? csvRows(text, members) : jsonRows(text);
  const turnedDown = new Set<number>();
  for (let at = 0; at < rows.length; at += CHECKED) {
    const part = rows.slice(at, at + CHECKED);
    const answer = await client.checkObjects(className, part.map((row) => row.fields));
    for (const { Index, Code, Message } of answer.Refused) {
      const row = part[Index];
      if (!row) continue;
      turnedDown.add(row.line);
      refused.push({ line: row.line, code: Code, why: Message });
    }
  }
  if (rows.length === 0 && refused.length === 0) refused.push({ line: 0, why: t('importEmpty') });
  refused.sort((a, b) => a.line - b.line);
  return { file: file.name, rows: rows.filter((row) => !turnedDown.has(row.line)), refused };
}

/**
 * Import of a JSON Lines or CSV file into a class, as `odbrest import` does it: all or report. A dry run
 * has the service check every row first and lists those it would refuse; then only a file without any
 * is written, 100 objects a `/v1/multi` request, with a progress bar. A row the service still refuses
 * while writing (the data changed meanwhile, or a host's `beforeWrite` hook) is reported with its
 * line; the rows written stay, as an import's steps do.
 */
export function Import({ client, className, onDone }: { client: OdbRestClient; className: string; onDone(): void }) {
  const file = useSignal<File | undefined>(undefined);
  const checked = useSignal<DryRun | undefined>(undefined);
  const progress = useSignal<{ done: number; total: number } | undefined>(undefined);
  const refusedWhileWriting = useSignal<RowRefusal[]>([]);
  const error = useSignal('');
  const busy = useSignal(false);

  const check = async () => {
    if (!file.value) return;
    busy.value = true;
    error.value = '';
    checked.value = undefined;
    refusedWhileWriting.value = [];
    try {
      checked.value = await dryRun(client, className, file.value);
    } catch (cause) {
      error.value = failureText(cause);
    } finally {
      busy.value = false;
    }
  };

  const write = async (run: DryRun) => {
    busy.value = true;
    progress.value = { done: 0, total: run.rows.length };
    try {
      const results = await batched(
        client,
        run.rows.map((row) => batchItem('POST', '/v1/object/:id', { params: { id: className }, data: row.fields })),
        (done) => (progress.value = { done, total: run.rows.length }),
      );
      touch();
      const refused = run.rows.flatMap((row, index) => {
        const { status } = results[index]!.result;
        return refusedItem(results[index]!) ? [{ line: row.line, code: status.internalStatus, why: status.statusMessage }] : [];
      });
      refusedWhileWriting.value = refused;
      checked.value = undefined;
      notice.value = { text: t('imported', { count: run.rows.length - refused.length, class: className, file: run.file }), error: refused.length > 0 };
    } catch (cause) {
      error.value = failureText(cause);
    } finally {
      busy.value = false;
    }
  };

  const run = checked.value;
  const now = progress.value;
  return (
    <section class="import card" aria-labelledby="import-title">
      <h2 id="import-title">{t('importInto', { class: className })}</h2>
      <p class="hint">{t('importHint')}</p>
      <div class="actions">
        <label>
          <span class="visually-hidden">{t('importFile')}</span>
          <input
            type="file"
            name="import"
            accept=".jsonl,.ndjson,.json,.csv,application/json,text/csv"
            aria-label={t('importFile')}
            disabled={busy.value}
            onChange={(event) => ((file.value = (event.currentTarget as HTMLInputElement).files?.[0]), (checked.value = undefined), (progress.value = undefined))}
          />
        </label>
        <button type="button" class="primary" disabled={!file.value || busy.value} onClick={() => void check()}>
          {t('importCheck')}
        </button>
        <button type="button" onClick={onDone}>
          {t('close')}
        </button>
      </div>
      <Alert text={error.value} />
      {run && (
        <div class="import-report" data-rows={run.rows.length} data-refused={run.refused.length}>
          <p role="status">{t('importChecked', { rows: (run.rows.length + run.refused.filter((one) => one.line > 0).length).toLocaleString(), refused: run.refused.length.toLocaleString() })}</p>
          {run.refused.length > 0 ? (
            <>
              <p class="error">{t('importRefused')}</p>
              <RowTable refusals={run.refused} />
            </>
          ) : (
            <button type="button" class="primary" disabled={busy.value} onClick={() => void write(run)}>
              {t('importWrite', { count: run.rows.length })}
            </button>
          )}
        </div>
      )}
      {now && (
        <p class="import-progress">
          <progress max={now.total || 1} value={now.done} aria-label={t('importProgress')} />
          <span aria-live="polite">{t('importDone', { done: now.done.toLocaleString(), total: now.total.toLocaleString() })}</span>
        </p>
      )}
      {refusedWhileWriting.value.length > 0 && (
        <div role="alert">
          <p class="error">{t('importRefusedWhileWriting', { count: refusedWhileWriting.value.length })}</p>
          <RowTable refusals={refusedWhileWriting.value} />
        </div>
      )}
    </section>
  );
}

/** Refused rows: the line (0: the file as a whole), the service's code and why. */
function RowTable({ refusals }: { refusals: RowRefusal[] }) {
  const rows = refusals.map(({ line, code, why }, index) => ({ key: String(index), data: { 'data-line': line, 'data-code': code ?? '' }, what: line === 0 ? t('wholeFile') : line, code, why }));
  return <Refusals head={t('line')} rows={rows} />;
}
