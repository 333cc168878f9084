import { useSignal } from '@preact/signals';
import { t } from '../i18n/index.js';
import { openObject } from '../router.js';

/** Characters of a value shown before it is clipped: a 1 MB field never reaches the page whole. */
export const CLIP_TABLE = 120;
export const CLIP_PANEL = 4000;

interface Reference {
  '~ObjectID': string;
  '~ClassName'?: string;
  [field: string]: unknown;
}

const isReference = (value: unknown): value is Reference =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as Reference)['~ObjectID'] === 'string';
const isSet = (value: unknown): value is { '~Elements': unknown[]; '~UnfilteredCount'?: number } =>
  typeof value === 'object' && value !== null && Array.isArray((value as { '~Elements'?: unknown })['~Elements']);

/** A short label of a referenced object: its class and id, and a name when it has one. */
export function referenceLabel(value: Reference): string {
  const name = ['Name', 'Name1', 'Title', 'Nummer'].map((field) => value[field]).find((field) => typeof field === 'string' && field !== '');
  const head = `${value['~ClassName'] ?? ''} ${value['~ObjectID']}`.trim();
  return name === undefined ? head : `${clipText(String(name), 60).text} (${head})`;
}

function clipText(text: string, limit: number): { text: string; rest: number } {
  return text.length <= limit ? { text, rest: 0 } : { text: text.slice(0, limit), rest: text.length - limit };
}

/** Text clipped at `limit`, with how much was left out and (in a panel) a button to show it all. */
function Clipped({ text, limit, expandable }: { text: string; limit: number; expandable: boolean }) {
  const all = useSignal(false);
  const shown = clipText(text, all.value ? Number.POSITIVE_INFINITY : limit);
  return (
    <span class="text">
      {shown.text}
      {shown.rest > 0 && <span class="clipped">{t('clipped', { size: shown.rest.toLocaleString() })}</span>}
      {shown.rest > 0 && expandable && (
        <button type="button" class="link" onClick={() => (all.value = true)}>
          {t('showAll')}
        </button>
      )}
    </span>
  );
}

/** A link that opens the referenced object as a panel on the stack. */
export function RefLink({ value }: { value: Reference }) {
  return (
    <a
      class="ref"
      href={`#open:${value['~ObjectID']}`}
      data-ref={value['~ObjectID']}
      onClick={(event) => {
        event.preventDefault();
        event.stopPropagation();
        openObject(value['~ObjectID']);
      }}
    >
      {referenceLabel(value)}
    </a>
  );
}

/** Any field value, read only: null, text (clipped), numbers, references as links, sets, other JSON. */
export function Value({ value, compact = false }: { value: unknown; compact?: boolean }) {
  const limit = compact ? CLIP_TABLE : CLIP_PANEL;
  if (value === null || value === undefined) return <span class="null">{t('nullValue')}</span>;
  if (typeof value === 'string') return <Clipped text={value} limit={limit} expandable={!compact} />;
  if (typeof value === 'number' || typeof value === 'boolean') return <span class={typeof value}>{String(value)}</span>;
  if (isReference(value)) return <RefLink value={value} />;
  if (isSet(value)) {
    const elements = value['~Elements'];
    const total = value['~UnfilteredCount'] ?? elements.length;
    if (elements.length === 0) return <span class="null">{t('emptySet')}</span>;
    if (compact) return <span class="set">{t('setCount', { count: elements.length, total })}</span>;
    return (
      <div class="set">
        <ul>
          {elements.map((element, index) => (
            <li key={index}>
              <Value value={element} compact />
            </li>
          ))}
        </ul>
        {total > elements.length && <span class="hint">{t('setCount', { count: elements.length, total })}</span>}
      </div>
    );
  }
  return <Clipped text={JSON.stringify(value)} limit={limit} expandable={!compact} />;
}
