import type { ModelMember } from 'odbrest/client';
import { writable } from './batch.js';

/**
 * The rows of an import file and their check against a class's declaration (PROTOCOL.md 6.3, 6.8),
 * made in the page before anything is written: what the service's write path would refuse for the
 * declaration, with its words.
 */

/** A row of the file: its number (the line of JSON Lines, the record of CSV after the header) and its fields. */
export interface Row {
  line: number;
  fields: Record<string, unknown>;
}

/** A row (line 0: the file as a whole) that would be refused, and why. */
export interface RowRefusal {
  line: number;
  why: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A row's members as a create takes them: metadata (`~...`) left out, references and sets by id. */
function createFields(object: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).filter(([name]) => !name.startsWith('~')).map(([name, value]) => [name, writable(value)]));
}

/** JSON Lines (one object a line, as the export writes them; a `.json` file may hold an array of them). */
export function jsonRows(text: string): { rows: Row[]; refused: RowRefusal[] } {
  const rows: Row[] = [];
  const refused: RowRefusal[] = [];
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    try {
      const list = JSON.parse(trimmed) as unknown[];
      list.forEach((item, index) => (isObject(item) ? rows.push({ line: index + 1, fields: createFields(item) }) : refused.push({ line: index + 1, why: 'not a JSON object' })));
      return { rows, refused };
    } catch {
      return { rows, refused: [{ line: 0, why: 'not JSON: a JSON array of objects, or JSON Lines (one object a line)' }] };
    }
  }
  text.split(/\r?\n/).forEach((source, index) => {
    if (!source.trim()) return;
    let item: unknown;
    try {
      item = JSON.parse(source);
    } catch {
      item = undefined;
    }
    if (isObject(item)) rows.push({ line: index + 1, fields: createFields(item) });
    else refused.push({ line: index + 1, why: 'not a JSON object' });
  });
  return { rows, refused };
}

/** CSV records (RFC 4180: quoted cells with `""`, line breaks inside quotes, CRLF or LF). */
export function csvRecords(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"' && cell === '') quoted = true;
    else if (c === ',') record.push(cell), (cell = '');
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      record.push(cell), records.push(record), (record = []), (cell = '');
    } else cell += c;
  }
  if (cell !== '' || record.length > 0) record.push(cell), records.push(record);
  return records.filter((one) => one.length > 1 || one[0] !== '');
}

/** A CSV cell as the value of its field: by the declared type, else numbers, true/false and JSON read as such. */
function cellValue(cell: string, member: ModelMember | undefined): unknown {
  // the export guards text that begins like a formula with a `'` (CSV injection): it is taken off again
  const text = /^'[=+\-@\t\r]/.test(cell) ? cell.slice(1) : cell;
  const type = member?.Type;
  if (type === 'string' || type === 'date') return text;
  if (type === 'number' || type === 'integer') return /^\s*-?[\d.]/.test(cell) && Number.isFinite(Number(cell)) ? Number(cell) : text;
  if (type === 'boolean') return cell === 'true' ? true : cell === 'false' ? false : text;
  if (type === 'ref' || type === 'file') return { '~ObjectID': cell.trim() };
  if (type === 'set' && !cell.trim().startsWith('{')) return { '~Elements': cell.split(/[\s,]+/).filter(Boolean).map((id) => ({ '~ObjectID': id })) };
  if (type === undefined && /^-?\d+(\.\d+)?$/.test(cell)) return Number(cell);
  if (type === undefined && (cell === 'true' || cell === 'false')) return cell === 'true';
  if (type === undefined && !/^[[{"]/.test(cell)) return text;
  try {
    return JSON.parse(cell);
  } catch {
    return text;
  }
}

/** CSV with a header row, as the export writes it (metadata columns are left out); an empty cell is no value. */
export function csvRows(text: string, members: ModelMember[]): { rows: Row[]; refused: RowRefusal[] } {
  const [header, ...records] = csvRecords(text);
  if (!header) return { rows: [], refused: [{ line: 0, why: 'the CSV has no header row' }] };
  const byName = new Map(members.map((member) => [member.Name, member]));
  const rows: Row[] = [];
  const refused: RowRefusal[] = [];
  records.forEach((record, index) => {
    const line = index + 2;
    if (record.length > header.length) return void refused.push({ line, why: `${record.length} cells under a header of ${header.length}` });
    const fields: Record<string, unknown> = {};
    header.forEach((name, column) => {
      const cell = record[column] ?? '';
      if (!name.startsWith('~') && cell !== '') fields[name] = writable(cellValue(cell, byName.get(name)));
    });
    rows.push({ line, fields });
  });
  return { rows, refused };
}

/** `~StoreTime`'s form, or ISO 8601 (as the service's declaration check takes it). */
const DATE = /^(\d{8}T\d{6}[+-]\d{2}:\d{2}|\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?)$/;

/** What a field's value must be, in the service's words. */
function expects(member: ModelMember): string {
  if (member.Values) return `one of ${member.Values.map((value) => JSON.stringify(value)).join(', ')}`;
  const { Min: min, Max: max } = member;
  const range = min !== undefined && max !== undefined ? ` from ${min} to ${max}` : min !== undefined ? ` of at least ${min}` : max !== undefined ? ` of at most ${max}` : '';
  switch (member.Type) {
    case 'string':
      return member.MaxLength === undefined ? 'a string' : `a string of at most ${member.MaxLength} characters`;
    case 'number':
      return `a number${range}`;
    case 'integer':
      return `an integer${range}`;
    case 'boolean':
      return 'true or false';
    case 'date':
      return 'a date (ISO 8601, e.g. 2026-01-15 or 2026-01-15T09:00:00Z)';
    case 'json':
      return 'any JSON value';
    case 'set':
      return `a set of ${member.Class} objects`;
    default:
      return `a reference to a ${member.Class ?? 'file'}`;
  }
}

const isRef = (value: unknown) => isObject(value) && typeof value['~ObjectID'] === 'string' && value['~ObjectID'] !== '';

/** Whether `value` fits the declared member (its type, range, length, values). */
function fits(member: ModelMember, value: unknown): boolean {
  switch (member.Type) {
    case 'string':
      return typeof value === 'string' && (member.MaxLength === undefined || value.length <= member.MaxLength) && (!member.Values || member.Values.includes(value));
    case 'number':
    case 'integer':
      return (
        typeof value === 'number' &&
        Number.isFinite(value) &&
        (member.Type === 'number' || Number.isInteger(value)) &&
        (member.Min === undefined || value >= member.Min) &&
        (member.Max === undefined || value <= member.Max) &&
        (!member.Values || member.Values.includes(value))
      );
    case 'boolean':
      return typeof value === 'boolean';
    case 'date':
      return typeof value === 'string' && DATE.test(value);
    case 'json':
      return true;
    case 'set':
      return isObject(value) && Array.isArray(value['~Elements']) && value['~Elements'].every(isRef);
    default:
      return isRef(value);
  }
}

/**
 * Why the service would refuse this row for the class's declaration (PROTOCOL.md 6.3, 6.8), or
 * undefined: a field name it never takes, a required field missing, a value of another type or out
 * of range. Undeclared classes take any field.
 */
export function declarationRefusal(className: string, members: ModelMember[], fields: Record<string, unknown>): string | undefined {
  const bad = Object.keys(fields).find((name) => name === '' || name.length > 128 || /^[_$]/.test(name));
  if (bad !== undefined) return `field name ${JSON.stringify(bad)} is not allowed (empty, over 128 characters, or starting with _ or $)`;
  for (const member of members) {
    const value = fields[member.Name];
    if (value === undefined || value === null) {
      if (member.Required) return `field ${member.Name} of ${className} is required: ${expects(member)}`;
    } else if (!fits(member, value)) return `field ${member.Name} of ${className} must be ${expects(member)}`;
  }
  return undefined;
}

/** The ids each reference and set field of `rows` names, by the class they must be of. */
export function referencedIds(members: ModelMember[], rows: Row[]): Map<string, Set<string>> {
  const wanted = new Map<string, Set<string>>();
  for (const member of members) {
    if (!member.Class || (member.Type !== 'ref' && member.Type !== 'set' && member.Type !== 'file')) continue;
    const ids = wanted.get(member.Class) ?? new Set<string>();
    for (const { fields } of rows) {
      const value = fields[member.Name];
      const refs = isObject(value) ? (Array.isArray(value['~Elements']) ? value['~Elements'] : [value]) : [];
      for (const ref of refs) if (isRef(ref)) ids.add((ref as { '~ObjectID': string })['~ObjectID']);
    }
    wanted.set(member.Class, ids);
  }
  return wanted;
}

/** The first reference of `fields` to an id in `missing` (of its field's class), as a refusal's words. */
export function missingReference(className: string, members: ModelMember[], fields: Record<string, unknown>, missing: Map<string, Set<string>>): string | undefined {
  for (const member of members) {
    const gone = member.Class ? missing.get(member.Class) : undefined;
    const value = fields[member.Name];
    if (!gone || gone.size === 0 || !isObject(value)) continue;
    const refs = Array.isArray(value['~Elements']) ? value['~Elements'] : [value];
    const id = refs.map((ref) => (isObject(ref) ? ref['~ObjectID'] : undefined)).find((one) => typeof one === 'string' && gone.has(one));
    if (id !== undefined) return `field ${member.Name} of ${className} refers to ${String(id)}, which is no ${member.Class} this session may read`;
  }
  return undefined;
}
