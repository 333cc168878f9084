import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { OdbRestClient, SerializedObject } from 'odbrest/client';
import { Alert } from '../components/Alert.js';
import { QueryError } from '../components/QueryBox.js';
import { referenceLabel } from '../components/Value.js';
import { declaredFields, failureText, queryFailure, type QueryFailure } from '../data.js';
import { t } from '../i18n/index.js';
import { isQueryText, searchText } from '../querytext.js';

/** Objects a search shows at once. */
const SHOWN = 20;

export interface PickerProps {
  client: OdbRestClient;
  /** A `ref` or `set` field and the class it references. */
  type: 'ref' | 'set';
  targetClass: string;
  /** The search box's id (the field's label points at it). */
  id: string;
  /** The chosen ids: one for a reference, the set's in order, joined by `, ` (the editors' text form). */
  text: string;
  onInput(text: string): void;
}

const idsOf = (text: string) => text.split(/[\s,]+/).filter(Boolean);

/**
 * A reference or set field picked, not typed: the target class searched by words over its declared text
 * fields (or by query text, PROTOCOL.md 6.2, whose refusal is shown with its position marked), and an
 * object chosen by its name. A set's elements are added, removed and moved up or down.
 */
export function Picker({ client, type, targetClass, id, text, onInput }: PickerProps) {
  const ids = idsOf(text);
  const labels = useSignal<Record<string, string>>({});
  const search = useSignal('');
  const results = useSignal<SerializedObject[] | undefined>(undefined);
  const failure = useSignal<QueryFailure | undefined>(undefined);
  const error = useSignal('');
  const textFields = useSignal<string[]>(['Name']);

  useEffect(() => {
    void declaredFields(client, targetClass).then((fields) => {
      const texts = fields.filter((field) => field.type === 'string').map((field) => field.name);
      if (texts.length > 0) textFields.value = texts;
    });
  }, [client, targetClass]);
  // the chosen objects' names, read once for the ids not named yet
  useEffect(() => {
    const missing = ids.filter((one) => !(one in labels.peek()));
    if (missing.length === 0) return;
    client.listObjects(targetClass, { oids: missing, perPage: missing.length }).then(
      (set) => (labels.value = { ...labels.peek(), ...Object.fromEntries(missing.map((one) => [one, one])), ...named(set['~Elements']) }),
      () => (labels.value = { ...labels.peek(), ...Object.fromEntries(missing.map((one) => [one, one])) }),
    );
  }, [client, targetClass, text]);

  const find = async () => {
    const input = search.value.trim();
    const query = !input ? '' : isQueryText(input) ? input : searchText(textFields.value, input);
    error.value = '';
    try {
      const set = await client.listObjects(targetClass, { perPage: SHOWN, ...(query ? { queryText: query } : {}) });
      results.value = set['~Elements'];
      labels.value = { ...labels.value, ...named(set['~Elements']) };
      failure.value = undefined;
    } catch (cause) {
      results.value = undefined;
      failure.value = queryFailure(cause, query);
      if (!failure.value) error.value = failureText(cause);
    }
  };
  const choose = (object: SerializedObject) => {
    const chosen = object['~ObjectID'];
    if (type === 'ref') {
      onInput(chosen);
      results.value = undefined;
    } else if (!ids.includes(chosen)) onInput([...ids, chosen].join(', '));
  };
  const move = (index: number, by: number) => {
    const next = [...ids];
    const [one] = next.splice(index, 1);
    next.splice(index + by, 0, one!);
    onInput(next.join(', '));
  };
  const label = (one: string) => labels.value[one] ?? one;

  return (
    <div class="picker" data-picker={type}>
      {type === 'ref' ? (
        <p class="chosen">
          {ids[0] ? <span data-chosen={ids[0]}>{label(ids[0])}</span> : <span class="null">{t('nothingChosen')}</span>}
          {ids[0] && (
            <button type="button" class="link" onClick={() => onInput('')}>
              {t('clearChoice')}
            </button>
          )}
        </p>
      ) : ids.length === 0 ? (
        <p class="null">{t('emptySet')}</p>
      ) : (
        <ol class="chosen-set">
          {ids.map((one, index) => (
            <li key={one} data-chosen={one}>
              <span>{label(one)}</span>
              <button type="button" class="icon" disabled={index === 0} onClick={() => move(index, -1)} aria-label={t('moveUp', { object: label(one) })}>
                ↑
              </button>
              <button type="button" class="icon" disabled={index === ids.length - 1} onClick={() => move(index, 1)} aria-label={t('moveDown', { object: label(one) })}>
                ↓
              </button>
              <button type="button" class="icon" onClick={() => onInput(ids.filter((other) => other !== one).join(', '))} aria-label={t('removeElement', { object: label(one) })}>
                ✕
              </button>
            </li>
          ))}
        </ol>
      )}
      <div class="picker-search">
        <input
          id={id}
          type="search"
          data-picker-search
          spellcheck={false}
          autocomplete="off"
          placeholder={t('searchClass', { class: targetClass })}
          value={search.value}
          onInput={(event) => (search.value = event.currentTarget.value)}
          onKeyDown={(event) => {
            // Enter searches here; it must not send the form the picker sits in
            if (event.key !== 'Enter') return;
            event.preventDefault();
            void find();
          }}
        />
        <button type="button" onClick={() => void find()}>
          {t('search')}
        </button>
      </div>
      {failure.value && <QueryError failure={failure.value} />}
      <Alert text={error.value} />
      {results.value && results.value.length === 0 && <p class="hint">{t('noObjects')}</p>}
      {results.value && results.value.length > 0 && (
        <ul class="picker-results" aria-label={t('searchResults', { class: targetClass })}>
          {results.value.map((object) => (
            <li key={object['~ObjectID']}>
              <button type="button" class="link" data-pick={object['~ObjectID']} disabled={type === 'set' && ids.includes(object['~ObjectID'])} onClick={() => choose(object)}>
                {type === 'set' ? `+ ${referenceLabel(object)}` : referenceLabel(object)}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Names of objects by id, as the references of the studio show them. */
const named = (objects: SerializedObject[]) => Object.fromEntries(objects.map((object) => [object['~ObjectID'], referenceLabel(object)]));
