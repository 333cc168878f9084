import type { ModelMember, OdbRestClient, SerializedObject } from 'odbrest/client';
import { t } from '../i18n/index.js';
import { lazy } from './lazy.js';

/** The relation picker: a chunk of its own, loaded when a form first shows a reference or set. */
const Picker = lazy(() => import('./picker.js').then((module) => module.Picker));

/** A field as its editor sees it: the declared type (PROTOCOL.md 6.8), else one read from the value. */
export interface FieldSpec {
  name: string;
  type: ModelMember['Type'];
  refClass?: string;
  required?: boolean;
  values?: readonly (string | number)[];
  min?: number;
  max?: number;
  maxLength?: number;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The type of an undeclared field, from its value. */
function typeOf(value: unknown): FieldSpec['type'] {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'boolean';
  if (isObject(value) && Array.isArray(value['~Elements'])) return 'set';
  if (isObject(value) && typeof value['~ObjectID'] === 'string') return 'ref';
  return value === null || value === undefined ? 'string' : 'json';
}

/** The fields to edit: the declared members of the class (model structure), then any other field the object has. */
export async function fieldSpecs(client: OdbRestClient, className: string, object?: SerializedObject): Promise<FieldSpec[]> {
  const model = await client.modelStructure([className]).catch(() => undefined);
  const found = model?.['~Elements'].find((entry) => entry.Name === className);
  const declared: FieldSpec[] = found?.Declared
    ? found.Members.filter((member) => !member.Base && !member.Name.startsWith('~')).map((member) => ({
        name: member.Name,
        type: member.Type,
        refClass: member.Class,
        required: member.Required,
        values: member.Values,
        min: member.Min,
        max: member.Max,
        maxLength: member.MaxLength,
      }))
    : [];
  const known = new Set(declared.map((spec) => spec.name));
  const others = Object.entries(object ?? {})
    .filter(([name]) => !name.startsWith('~') && !known.has(name))
    .map(([name, value]) => ({ name, type: typeOf(value) }));
  return [...declared, ...others];
}

/** A value as the text its editor shows. */
export function toText(spec: FieldSpec, value: unknown): string {
  if (value === null || value === undefined) return '';
  if (spec.type === 'ref') return isObject(value) ? String(value['~ObjectID'] ?? '') : String(value);
  if (spec.type === 'set' && isObject(value) && Array.isArray(value['~Elements'])) {
    return value['~Elements'].map((element) => (isObject(element) && typeof element['~ObjectID'] === 'string' ? element['~ObjectID'] : JSON.stringify(element))).join(', ');
  }
  if (spec.type === 'json' || (typeof value === 'object' && spec.type !== 'file')) return JSON.stringify(value, null, 2);
  return String(value);
}

/** The value to send for an editor's text (empty is null); throws an Error naming the field when the text is not of its type. */
export function fromText(spec: FieldSpec, text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '' && spec.type !== 'string') return null;
  const wrong = (expected: string) => new Error(t('fieldExpects', { field: spec.name, expected }));
  switch (spec.type) {
    case 'number':
    case 'integer': {
      const number = Number(trimmed);
      if (!Number.isFinite(number) || (spec.type === 'integer' && !Number.isInteger(number))) throw wrong(spec.type);
      return number;
    }
    case 'boolean':
      if (trimmed !== 'true' && trimmed !== 'false') throw wrong('true / false');
      return trimmed === 'true';
    case 'ref':
      return { '~ObjectID': trimmed };
    case 'set':
      return { '~Elements': trimmed.split(/[\s,]+/).filter(Boolean).map((id) => ({ '~ObjectID': id })) };
    case 'json':
      try {
        return JSON.parse(trimmed);
      } catch {
        throw wrong('JSON');
      }
    case 'string':
      return spec.values?.length && text === '' ? null : text;
    default:
      return trimmed;
  }
}

/** A field's declared limits in words (its range, its longest length), shown beside it; '' when it has none. */
export function limitsOf(spec: FieldSpec): string {
  if (spec.min !== undefined && spec.max !== undefined) return t('limitRange', { min: spec.min, max: spec.max });
  if (spec.min !== undefined) return t('limitMin', { min: spec.min });
  if (spec.max !== undefined) return t('limitMax', { max: spec.max });
  if (spec.maxLength !== undefined) return t('limitLength', { max: spec.maxLength });
  return '';
}

/**
 * Every field of `form` whose value its editor refuses (required and empty, out of the declared range,
 * not a number or whole number), each with why and its limits: all at once, before anything is sent.
 * The editors carry the declaration as the browser's own constraints (`required`, `min`, `max`,
 * `step`, `maxlength`); the service still checks everything when the form is sent.
 */
export function fieldErrors(form: HTMLFormElement, specs: FieldSpec[]): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const spec of specs) {
    const editor = form.elements.namedItem(spec.name);
    if (!(editor instanceof HTMLInputElement || editor instanceof HTMLSelectElement || editor instanceof HTMLTextAreaElement) || editor.validity.valid) continue;
    const limits = limitsOf(spec);
    const { valueMissing, rangeUnderflow, rangeOverflow, tooLong } = editor.validity;
    errors[spec.name] = valueMissing ? t('fieldMissing') : (rangeUnderflow || rangeOverflow || tooLong) && limits ? t('fieldOutside', { limits }) : t('fieldInvalid', { type: spec.type });
  }
  return errors;
}

/** The editor of one field for its type: text, number, a choice, true/false, a reference or set picked from its class, JSON. */
export function FieldEditor({ client, spec, id, text, onInput }: { client: OdbRestClient; spec: FieldSpec; id: string; text: string; onInput(text: string): void }) {
  const common = { id, name: spec.name, 'data-editor': spec.type, required: spec.required || undefined, 'aria-describedby': `${id}-about` };
  const input = (e: { currentTarget: { value: string } }) => onInput(e.currentTarget.value);
  if (spec.type === 'boolean' || spec.values?.length) {
    const options = spec.type === 'boolean' ? ['true', 'false'] : spec.values!.map(String);
    return (
      <select {...common} value={text} onChange={input}>
        <option value="">{t('nullValue')}</option>
        {options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    );
  }
  if (spec.type === 'json' || (spec.type === 'string' && (text.length > 80 || text.includes('\n')))) {
    return <textarea {...common} rows={Math.min(12, Math.max(3, text.split('\n').length))} spellcheck={spec.type === 'string'} value={text} onInput={input} />;
  }
  if (spec.type === 'file') return <input {...common} readOnly value={text} />;
  if ((spec.type === 'ref' || spec.type === 'set') && spec.refClass) {
    return <Picker client={client} type={spec.type} targetClass={spec.refClass} id={id} text={text} onInput={onInput} />;
  }
  const numeric = spec.type === 'number' || spec.type === 'integer';
  const placeholder =
    spec.type === 'ref' ? t('refPlaceholder', { class: spec.refClass ?? '' }) : spec.type === 'set' ? t('setPlaceholder') : spec.type === 'date' ? '2026-01-15T09:30:00Z' : undefined;
  return (
    <input
      {...common}
      type={(numeric ? 'number' : 'text') as 'text'}
      step={spec.type === 'integer' ? 1 : numeric ? 'any' : undefined}
      min={spec.min}
      max={spec.max}
      maxLength={spec.maxLength}
      placeholder={placeholder}
      spellcheck={false}
      value={text}
      onInput={input}
    />
  );
}

/** The form of every field: a label (with its type), its editor, its limits and what is wrong with its value (`errors`, all at once). */
export function FieldForm({ client, specs, texts, errors = {}, onInput, prefix }: { client: OdbRestClient; specs: FieldSpec[]; texts: Record<string, string>; errors?: Record<string, string>; onInput(name: string, text: string): void; prefix: string }) {
  return (
    <div class="edit-fields">
      {specs.map((spec) => {
        const id = `${prefix}-${spec.name}`;
        return (
          <div class="edit-field" key={spec.name} data-field={spec.name}>
            <label for={id}>
              {spec.name}
              {spec.required && <span aria-hidden="true"> *</span>} <span class="hint">{spec.type === 'ref' || spec.type === 'set' ? `${spec.type} ${spec.refClass ?? ''}` : spec.type}</span>
            </label>
            <FieldEditor client={client} spec={spec} id={id} text={texts[spec.name] ?? ''} onInput={(text) => onInput(spec.name, text)} />
            <p id={`${id}-about`} class={errors[spec.name] ? 'field-error error' : 'hint field-limits'}>
              {errors[spec.name] ?? limitsOf(spec)}
            </p>
          </div>
        );
      })}
    </div>
  );
}

/** The members of `texts` whose text differs from `initial`, as the values to send. */
export function changedFields(specs: FieldSpec[], texts: Record<string, string>, initial: Record<string, string>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const spec of specs) {
    const text = texts[spec.name] ?? '';
    if (text !== (initial[spec.name] ?? '')) fields[spec.name] = fromText(spec, text);
  }
  return fields;
}

export const textsOf = (specs: FieldSpec[], object: Record<string, unknown> | undefined): Record<string, string> =>
  Object.fromEntries(specs.map((spec) => [spec.name, toText(spec, object?.[spec.name])]));
