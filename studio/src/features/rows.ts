import type { ModelMember } from 'odbrest/client';
import Papa from 'papaparse';
import { writable } from './batch.js';

/**
 * The rows of an import file, each as the fields a create would send (PROTOCOL.md 6.3): JSON Lines as
 * they are, CSV cells typed by the class's declaration. Whether the service takes them is its own
 * check's to say (`POST /v1/model/classes/{className}/check`, PROTOCOL.md 6.12), never the page's.
 */

/** A row of the file: its number (the line of JSON Lines, the record of CSV after the header) and its fields. */
export interface Row {
  line: number;
  fields: Record<string, unknown>;
}

/** A row (line 0: the file as a whole) that would be refused, and why: the service's code and message, or the page's when the row is no object. */
export interface RowRefusal {
  line: number;
  code?: string;
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

/**
 * A file's bytes as text: UTF-8 (a BOM taken off) when they are valid UTF-8, else Windows-1252, the
 * code page German Excel saves "CSV" in.
 */
export function fileText(bytes: ArrayBuffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return new TextDecoder('windows-1252').decode(bytes);
  }
}

const SEPARATORS = [',', ';', '\t'] as const;

/** The separator of a CSV: the one of `,` `;` tab its header line holds most of (outside quotes); `,` when it holds none. */
export function csvSeparator(text: string): string {
  const header = /^(?:[^"\r\n]|"(?:[^"]|"")*")*/.exec(text)![0].replace(/"(?:[^"]|"")*"/g, '');
  const counts = SEPARATORS.map((separator) => header.split(separator).length - 1);
  const most = Math.max(...counts);
  return most === 0 ? ',' : SEPARATORS[counts.indexOf(most)]!;
}

/** CSV records (RFC 4180: quoted cells with `""`, separators and line breaks inside quotes, CRLF or LF), its separator detected from the header. */
export function csvRecords(text: string): string[][] {
  const parsed = Papa.parse<string[]>(text, { delimiter: csvSeparator(text), skipEmptyLines: true });
  return parsed.data;
}

/** A number cell: `12.5`, or `12,5` as German spreadsheets write it (a decimal comma and no point); undefined when it is none. */
function number(cell: string): number | undefined {
  const plain = /^\s*-?\d+,\d+\s*$/.test(cell) ? cell.replace(',', '.') : cell;
  return /^\s*-?[\d.]/.test(plain) && Number.isFinite(Number(plain)) ? Number(plain) : undefined;
}

/** A CSV cell as the value of its field: by the declared type, else numbers, true/false and JSON read as such. */
function cellValue(cell: string, member: ModelMember | undefined): unknown {
  // the export guards text that begins like a formula with a `'` (CSV injection): it is taken off again
  const text = /^'[=+\-@\t\r]/.test(cell) ? cell.slice(1) : cell;
  const type = member?.Type;
  if (type === 'string' || type === 'date') return text;
  if (type === 'number' || type === 'integer') return number(cell) ?? text;
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
