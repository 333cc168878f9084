/**
 * Query text (PROTOCOL.md 6.2) written for the person, who sees it and may edit it: a column's filter
 * as one comparison, joined to the text there is; the words of a search over a class's text fields.
 */

/** A string literal of the grammar: double quotes, `\"` and `\\` escaped. */
export const quote = (text: string): string => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

const OPERATOR = /^(<=|>=|<>|!=|==|=|<|>)\s*([\s\S]*)$/;
const NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * The comparison a column's filter box stands for: `Berlin` on a text column is `City like "*Berlin*"`,
 * `>= 1000` on a number `Revenue >= 1000`, `null` is `is null`; an operator in front is kept. `type` is
 * the declared type (`undefined` for an undeclared field: a number is then compared as a number).
 */
export function filterClause(field: string, type: string | undefined, input: string): string {
  const text = input.trim();
  if (!text) return '';
  if (/^null$/i.test(text)) return `${field} is null`;
  if (/^not null$/i.test(text)) return `${field} is not null`;
  if (type === 'boolean') return `${field} = ${/^(true|false)$/i.test(text) ? text.toLowerCase() : quote(text)}`;
  const given = OPERATOR.exec(text);
  const raw = given ? given[2]!.trim() : text;
  const numeric = (type === 'number' || type === 'integer' || type === undefined) && NUMBER.test(raw);
  const op = given ? given[1]! : numeric || type === 'ref' || type === 'set' || type === 'number' || type === 'integer' ? '=' : 'like';
  const value = numeric ? raw : quote(op === 'like' && !/[*?]/.test(raw) ? `*${raw}*` : raw);
  return `${field} ${op} ${value}`;
}

/**
 * `text` with the comparison `old` (written before by a filter) replaced by `next` (empty: removed),
 * joined with `and`. Text the person wrote stays; where it has an `or`, it is put in parentheses so the
 * new comparison holds for all of it. An `old` the person edited is no longer found and stays too.
 */
export function withClause(text: string, old: string | undefined, next: string): string {
  let rest = text.trim().replace(/;$/, '');
  if (old) {
    const form = [` and ${old}`, `${old} and `, old].find((candidate) => rest.includes(candidate));
    if (form) rest = rest.replace(form, '').trim();
  }
  if (!next) return rest;
  if (!rest) return next;
  const grouped = /\bor\b|\|\|/i.test(rest) && !/^\(.*\)$/.test(rest) ? `(${rest})` : rest;
  return `${grouped} and ${next}`;
}

/** Whether a search box holds query text (an operator, a quote or `like`) rather than words to look for. */
export const isQueryText = (input: string): boolean => /[=<>!()"']|\blike\b/i.test(input);

/** The grammar's limit of comparisons in one query text. */
const MAX_COMPARISONS = 64;

/**
 * A search for `input`'s words in `fields` (the class's declared text fields): each word in any of
 * them (`like "*word*"`, case-insensitively), every word found. Words past the grammar's 64
 * comparisons are left out.
 */
export function searchText(fields: readonly string[], input: string): string {
  if (fields.length === 0) return '';
  const words = input.trim().split(/\s+/).filter(Boolean).slice(0, Math.max(1, Math.floor(MAX_COMPARISONS / fields.length)));
  const one = (word: string) => fields.map((field) => `${field} like ${quote(`*${word}*`)}`).join(' or ');
  return words.map((word) => (words.length > 1 && fields.length > 1 ? `(${one(word)})` : one(word))).join(' and ');
}
