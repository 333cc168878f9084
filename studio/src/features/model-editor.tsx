import { useSignal } from '@preact/signals';
import { useRef } from 'preact/hooks';
import { OdbRestError, type ClassDeclarationInput, type ClassStructure, type DeclaredField, type OdbRestClient } from 'odbrest/client';
import { Alert } from '../components/Alert.js';
import { useFormFocus } from '../focus.js';
import { failureText } from '../data.js';
import { tConsole } from '../i18n/console.js';
import { t } from '../i18n/index.js';
import { openObject } from '../router.js';

const TYPES: ReadonlyArray<DeclaredField['Type']> = ['string', 'number', 'integer', 'boolean', 'date', 'json', 'ref', 'set', 'file'];
const ACTIONS = ['read', 'create', 'update', 'delete', 'security'] as const;
type Action = (typeof ACTIONS)[number];

/** A field as the form edits it: the limits as typed (text), an index as a box. */
interface FieldRow {
  key: number;
  name: string;
  type: DeclaredField['Type'];
  required: boolean;
  refClass: string;
  maxLength: string;
  min: string;
  max: string;
  enumText: string;
  indexed: boolean;
}

let keys = 0;
const blankField = (): FieldRow => ({ key: ++keys, name: '', type: 'string', required: false, refClass: '', maxLength: '', min: '', max: '', enumText: '', indexed: false });

/** The form's rows of a class as `GET /v1/model/structure` describes it. */
function rowsOf(entry: ClassStructure): FieldRow[] {
  const indexed = new Set(entry.Indices.filter((index) => index.Members.length === 1).map((index) => index.Members[0]));
  return entry.Members.filter((member) => !member.Base).map((member) => ({
    key: ++keys,
    name: member.Name,
    type: member.Type,
    required: member.Required,
    refClass: member.Class ?? '',
    maxLength: member.MaxLength?.toString() ?? '',
    min: member.Min?.toString() ?? '',
    max: member.Max?.toString() ?? '',
    enumText: member.Values?.join(', ') ?? '',
    indexed: indexed.has(member.Name),
  }));
}

const numberOf = (text: string) => (text.trim() === '' ? undefined : Number(text));
const listOf = (text: string) =>
  text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);

/** The body of `PUT /v1/model/classes/{className}` (PROTOCOL.md 6.12) the form says; the service checks it (a `400` names the field). */
function declarationOf(fields: FieldRow[], strict: boolean, description: string, access: Record<Action, string>): ClassDeclarationInput {
  const declared: Record<string, DeclaredField> = {};
  for (const row of fields) {
    if (!row.name.trim()) continue;
    const field: DeclaredField = { Type: row.type };
    if (row.required) field.Required = true;
    if ((row.type === 'ref' || row.type === 'set') && row.refClass.trim()) field.Class = row.refClass.trim();
    const limits = { MaxLength: numberOf(row.maxLength), Min: numberOf(row.min), Max: numberOf(row.max) };
    for (const [name, value] of Object.entries(limits)) if (value !== undefined) field[name as 'Min'] = value;
    const values = listOf(row.enumText);
    if (values.length > 0) field.Enum = row.type === 'number' || row.type === 'integer' ? values.map((value) => (Number.isNaN(Number(value)) ? value : Number(value))) : values;
    declared[row.name.trim()] = field;
  }
  const body: ClassDeclarationInput = { Fields: declared, Indexes: fields.filter((row) => row.indexed && row.name.trim()).map((row) => row.name.trim()), Strict: strict };
  if (description.trim()) body.Description = description.trim();
  const rules = ACTIONS.filter((action) => access[action].trim() !== '');
  if (rules.length > 0) body.Access = Object.fromEntries(rules.map((action) => [action, listOf(access[action])]));
  return body;
}

/** What a `409` of the declaration said: how many stored objects it would break, and some of them. */
interface Violations {
  count: number;
  examples: string[];
}

function violationsOf(cause: unknown): Violations | undefined {
  if (!(cause instanceof OdbRestError) || cause.internalStatus !== '409' || typeof cause.data?.Violations !== 'number') return undefined;
  return { count: cause.data.Violations, examples: Array.isArray(cause.data.Examples) ? cause.data.Examples.map(String) : [] };
}

/** A field's editors: one row of the fields table. */
function FieldEditor({ row, classNames, onChange, onRemove }: { row: FieldRow; classNames: string[]; onChange(next: FieldRow): void; onRemove(): void }) {
  const label = row.name || tConsole('newField');
  const set = (part: Partial<FieldRow>) => onChange({ ...row, ...part });
  const numeric = row.type === 'number' || row.type === 'integer';
  return (
    <tr data-field-row={row.name}>
      <td>
        <input aria-label={tConsole('fieldName')} name="field-name" value={row.name} required spellcheck={false} onInput={(event) => set({ name: event.currentTarget.value })} />
      </td>
      <td>
        <select aria-label={tConsole('fieldTypeOf', { field: label })} name="field-type" value={row.type} onChange={(event) => set({ type: event.currentTarget.value as FieldRow['type'] })}>
          {TYPES.map((type) => (
            <option key={type} value={type}>
              {type}
            </option>
          ))}
        </select>
      </td>
      <td>
        <input type="checkbox" aria-label={tConsole('fieldRequiredOf', { field: label })} name="field-required" checked={row.required} onChange={(event) => set({ required: event.currentTarget.checked })} />
      </td>
      <td>
        {(row.type === 'ref' || row.type === 'set') && (
          <input aria-label={tConsole('fieldClassOf', { field: label })} name="field-class" list="model-class-names" value={row.refClass} spellcheck={false} onInput={(event) => set({ refClass: event.currentTarget.value })} />
        )}
      </td>
      <td>
        {row.type === 'string' && (
          <input aria-label={tConsole('fieldMaxLengthOf', { field: label })} name="field-maxlength" type="number" min={0} class="short" value={row.maxLength} onInput={(event) => set({ maxLength: event.currentTarget.value })} />
        )}
        {numeric && (
          <span class="range">
            <input aria-label={tConsole('fieldMinOf', { field: label })} name="field-min" type="number" step="any" class="short" value={row.min} onInput={(event) => set({ min: event.currentTarget.value })} />
            <span aria-hidden="true">…</span>
            <input aria-label={tConsole('fieldMaxOf', { field: label })} name="field-max" type="number" step="any" class="short" value={row.max} onInput={(event) => set({ max: event.currentTarget.value })} />
          </span>
        )}
      </td>
      <td>
        {(row.type === 'string' || numeric) && (
          <input aria-label={tConsole('fieldEnumOf', { field: label })} name="field-enum" placeholder={tConsole('enumPlaceholder')} value={row.enumText} spellcheck={false} onInput={(event) => set({ enumText: event.currentTarget.value })} />
        )}
      </td>
      <td>
        <input type="checkbox" aria-label={tConsole('fieldIndexOf', { field: label })} name="field-index" checked={row.indexed} onChange={(event) => set({ indexed: event.currentTarget.checked })} />
      </td>
      <td>
        <button type="button" class="icon" aria-label={tConsole('removeField', { field: label })} onClick={onRemove}>
          ✕
        </button>
      </td>
    </tr>
  );
}

/**
 * Declares a class at run time or changes its declaration (PROTOCOL.md 6.12 `PUT /v1/model/classes/{className}`):
 * its fields (type, required, range, length, values, the class a reference points to), its indexes,
 * `Strict`, a description and its access rule. A declaration stored objects would not satisfy is the
 * service's `409`: nothing changed, and the form shows how many objects and which, to open.
 */
export function ClassEditor({ client, entry, classNames, onDone }: { client: OdbRestClient; entry?: ClassStructure; classNames: string[]; onDone(saved: boolean): void }) {
  const name = useSignal(entry?.Name ?? '');
  const fields = useSignal<FieldRow[]>(entry ? rowsOf(entry) : [blankField()]);
  const strict = useSignal(entry?.Strict ?? false);
  const description = useSignal(entry?.Description ?? '');
  const access = useSignal<Record<Action, string>>(Object.fromEntries(ACTIONS.map((action) => [action, entry?.Access?.[action]?.join(', ') ?? ''])) as Record<Action, string>);
  const error = useSignal('');
  const violations = useSignal<Violations | undefined>(undefined);
  const saving = useSignal(false);
  const form = useRef<HTMLFormElement>(null);
  useFormFocus(form, true);

  const save = async (event: Event) => {
    event.preventDefault();
    error.value = '';
    violations.value = undefined;
    saving.value = true;
    try {
      await client.admin.declareClass(name.value.trim(), declarationOf(fields.value, strict.value, description.value, access.value));
      onDone(true);
    } catch (cause) {
      violations.value = violationsOf(cause);
      if (!violations.value) error.value = failureText(cause);
    } finally {
      saving.value = false;
    }
  };
  const change = (key: number, next: FieldRow) => (fields.value = fields.value.map((row) => (row.key === key ? next : row)));
  const title = entry ? tConsole('editClass', { class: entry.Name }) : tConsole('newClass');
  return (
    <form ref={form} class="card class-editor" aria-labelledby="class-editor-title" onSubmit={(event) => void save(event)} data-class={entry?.Name}>
      <h2 id="class-editor-title">{title}</h2>
      {!entry && (
        <label>
          {t('className')}
          <input name="class-name" required pattern="[A-Za-z][A-Za-z0-9_]{0,63}" list="model-class-names" spellcheck={false} value={name.value} onInput={(event) => (name.value = event.currentTarget.value)} />
        </label>
      )}
      <label>
        {tConsole('classDescription')}
        <input name="class-description" value={description.value} onInput={(event) => (description.value = event.currentTarget.value)} />
      </label>
      <datalist id="model-class-names">
        {classNames.map((className) => (
          <option key={className} value={className} />
        ))}
      </datalist>
      <table class="grid fields-editor">
        <caption>{t('fields')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('field')}</th>
            <th scope="col">{t('fieldType')}</th>
            <th scope="col">{t('fieldRequired')}</th>
            <th scope="col">{t('fieldClass')}</th>
            <th scope="col">{tConsole('fieldRange')}</th>
            <th scope="col">{tConsole('fieldEnum')}</th>
            <th scope="col">{tConsole('fieldIndex')}</th>
            <th scope="col">
              <span class="visually-hidden">{tConsole('removeFieldColumn')}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {fields.value.map((row) => (
            <FieldEditor key={row.key} row={row} classNames={classNames} onChange={(next) => change(row.key, next)} onRemove={() => (fields.value = fields.value.filter((other) => other.key !== row.key))} />
          ))}
        </tbody>
      </table>
      <div class="actions">
        <button type="button" onClick={() => (fields.value = [...fields.value, blankField()])}>
          {tConsole('addField')}
        </button>
        <label class="check">
          <input type="checkbox" name="class-strict" checked={strict.value} onChange={(event) => (strict.value = event.currentTarget.checked)} />
          <span>{tConsole('classStrict')}</span>
        </label>
      </div>
      <fieldset class="access">
        <legend>{tConsole('accessRule')}</legend>
        <p class="hint">{tConsole('accessRuleHint')}</p>
        {ACTIONS.map((action) => (
          <label key={action}>
            {tConsole(`access_${action}`)}
            <input name={`access-${action}`} spellcheck={false} value={access.value[action]} onInput={(event) => (access.value = { ...access.value, [action]: event.currentTarget.value })} />
          </label>
        ))}
      </fieldset>
      {violations.value && (
        <div class="error model-violations" role="alert" data-violations={violations.value.count}>
          <p>{tConsole('declarationViolations', { count: violations.value.count })}</p>
          <ul>
            {violations.value.examples.map((id) => (
              <li key={id}>
                <a href={`#open:${id}`} onClick={(event) => (event.preventDefault(), openObject(id))}>
                  {id}
                </a>
              </li>
            ))}
          </ul>
        </div>
      )}
      <Alert text={error.value} />
      <div class="actions">
        <button type="submit" class="primary" disabled={saving.value}>
          {entry ? tConsole('saveDeclaration') : tConsole('declareClass')}
        </button>
        <button type="button" onClick={() => onDone(false)}>
          {t('cancel')}
        </button>
      </div>
    </form>
  );
}
