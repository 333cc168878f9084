/**
 * The product's query text (PROTOCOL.md 6.2): a hand-written lexer and recursive-descent parser into a
 * typed tree with positions, and its compilation to the store-neutral `Where`. Every refusal is `400`
 * `query text: <what was expected> at <0-based character offset>`, counted before the work it protects.
 */
import { ApiError } from '../http/errors.js';
import type { Condition, FieldOperators, Scalar, Where } from '../storage/types.js';

export const MAX_QUERY_TEXT = 2000;
export const MAX_COMPARISONS = 64;
export const MAX_NESTING = 32;
export const MAX_PATH_REFERENCES = 3;
export const MAX_IN_VALUES = 100;

type TokenKind = 'word' | 'string' | 'number' | 'op' | 'punct' | 'end';
interface Token {
  kind: TokenKind;
  text: string;
  value?: string | number;
  at: number;
}

const KEYWORDS = new Set(['query', 'or', 'and', 'not', 'in', 'is', 'null', 'like', 'true', 'false']);
const WORD = /[\p{L}\p{N}_~-]+/uy;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\p{L}\p{N}_~-])/uy;
const OPERATORS = ['==', '<>', '!=', '<=', '>=', '||', '&&', '=', '<', '>'];

function fail(expected: string, at: number): never {
  throw new ApiError('400', `query text: expected ${expected} at ${at}`);
}

function lex(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    // no store holds U+0000 in text (PostgreSQL refuses it), so no value compares with it
    if (c === '\u0000') fail('a character other than U+0000', i);
    if (/\s/u.test(c)) {
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      let value = '';
      const start = i++;
      for (;;) {
        if (i >= text.length) fail(`a closing ${c} for the string`, start);
        const d = text[i]!;
        if (d === c) break;
        if (d === '\u0000') fail('a character other than U+0000', i);
        if (d === '\\') {
          const e = text[i + 1];
          if (e !== '"' && e !== '\\' && e !== "'") fail('\\" or \\\\ after a backslash', i);
          value += e;
          i += 2;
        } else {
          value += d;
          i++;
        }
      }
      tokens.push({ kind: 'string', text: text.slice(start, i + 1), value, at: start });
      i++;
      continue;
    }
    NUMBER.lastIndex = i;
    const number = NUMBER.exec(text);
    if (number) {
      const value = Number(number[0]);
      if (!Number.isFinite(value)) fail('a finite number', i);
      tokens.push({ kind: 'number', text: number[0], value, at: i });
      i += number[0].length;
      continue;
    }
    WORD.lastIndex = i;
    const word = WORD.exec(text);
    if (word) {
      tokens.push({ kind: 'word', text: word[0], at: i });
      i += word[0].length;
      continue;
    }
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (op) {
      tokens.push({ kind: 'op', text: op, at: i });
      i += op.length;
      continue;
    }
    if ('(),.;'.includes(c)) {
      tokens.push({ kind: 'punct', text: c, at: i });
      i++;
      continue;
    }
    fail(`a name, value or operator, not ${JSON.stringify(c)}`, i);
  }
  tokens.push({ kind: 'end', text: 'the end', at: text.length });
  return tokens;
}

/** The parsed tree. */
export type QueryNode =
  | { kind: 'or' | 'and'; items: QueryNode[]; at: number }
  | { kind: 'not'; item: QueryNode; at: number }
  | { kind: 'compare'; path: string[]; op: string; value: Scalar; at: number }
  | { kind: 'in'; path: string[]; values: Scalar[]; at: number }
  | { kind: 'null'; path: string[]; negated: boolean; at: number };

const keyword = (token: Token, word: string) => token.kind === 'word' && token.text.toLowerCase() === word;

class Parser {
  #i = 0;
  #comparisons = 0;
  #depth = 0;
  constructor(readonly tokens: Token[]) {}

  get #token(): Token {
    return this.tokens[this.#i]!;
  }
  #punct(text: string): boolean {
    const token = this.#token;
    return token.kind === 'punct' && token.text === text;
  }
  #next(): Token {
    return this.tokens[this.#i++]!;
  }

  text(): QueryNode {
    if (keyword(this.#token, 'query')) this.#i++;
    const expr = this.#expr();
    if (this.#punct(';')) this.#i++;
    if (this.#token.kind !== 'end') fail(`"and", "or" or the end, not ${this.#token.text}`, this.#token.at);
    return expr;
  }

  #expr(): QueryNode {
    return this.#joined('or', '||', () => this.#term());
  }

  #term(): QueryNode {
    return this.#joined('and', '&&', () => this.#factor());
  }

  /** `item {(word | symbol) item}`: one item alone, else the node joining them. */
  #joined(kind: 'or' | 'and', symbol: string, item: () => QueryNode): QueryNode {
    const at = this.#token.at;
    const items = [item()];
    while (keyword(this.#token, kind) || (this.#token.kind === 'op' && this.#token.text === symbol)) {
      this.#i++;
      items.push(item());
    }
    return items.length === 1 ? items[0]! : { kind, items, at };
  }

  #factor(): QueryNode {
    const token = this.#token;
    if (++this.#depth > MAX_NESTING) fail(`at most ${MAX_NESTING} nested "not" and parentheses`, token.at);
    try {
      if (keyword(token, 'not')) {
        this.#i++;
        return { kind: 'not', item: this.#factor(), at: token.at };
      }
      if (token.kind === 'punct' && token.text === '(') {
        this.#i++;
        const expr = this.#expr();
        if (!(this.#punct(')'))) fail(`")" to close the "(" of ${token.at}`, this.#token.at);
        this.#i++;
        return expr;
      }
      return this.#comparison();
    } finally {
      this.#depth--;
    }
  }

  #comparison(): QueryNode {
    const at = this.#token.at;
    if (++this.#comparisons > MAX_COMPARISONS) fail(`at most ${MAX_COMPARISONS} comparisons`, at);
    const path = this.#path();
    const token = this.#next();
    if (keyword(token, 'in')) {
      if (!(this.#punct('('))) fail('"(" after "in"', this.#token.at);
      this.#i++;
      const values = [this.#value('a value in the list')];
      while (this.#punct(',')) {
        this.#i++;
        if (values.length >= MAX_IN_VALUES) fail(`at most ${MAX_IN_VALUES} values in a list`, this.#token.at);
        values.push(this.#value("a value after ','"));
      }
      if (!(this.#punct(')'))) fail('"," or ")" in the list', this.#token.at);
      this.#i++;
      return { kind: 'in', path, values, at };
    }
    if (keyword(token, 'is')) {
      const negated = keyword(this.#token, 'not');
      if (negated) this.#i++;
      if (!keyword(this.#token, 'null')) fail(`"null" after "is${negated ? ' not' : ''}"`, this.#token.at);
      this.#i++;
      return { kind: 'null', path, negated, at };
    }
    const op = token.kind === 'op' && !['||', '&&'].includes(token.text) ? token.text : keyword(token, 'like') ? 'like' : undefined;
    if (!op) fail(`an operator (=, ==, <>, !=, <, <=, >, >=, like, in, is) after ${path.join('.')}`, token.at);
    return { kind: 'compare', path, op, value: this.#value(`a value after '${token.text}'`), at };
  }

  #path(): string[] {
    const path = [this.#name()];
    while (this.#punct('.')) {
      this.#i++;
      if (path.length > MAX_PATH_REFERENCES) fail(`at most ${MAX_PATH_REFERENCES} references followed in a path`, this.#token.at);
      path.push(this.#name());
    }
    return path;
  }

  #name(): string {
    const token = this.#token;
    if (token.kind !== 'word' || KEYWORDS.has(token.text.toLowerCase())) fail('a field name', token.at);
    if (token.text.startsWith('~') && token.text !== '~ObjectID' && token.text !== '~StoreTime') fail('a field name (of the ~ names only ~ObjectID and ~StoreTime)', token.at);
    if (token.text.startsWith('_')) fail('a field name not starting with _', token.at);
    if (token.text.length > 128) fail('a field name of at most 128 characters', token.at);
    this.#i++;
    return token.text;
  }

  #value(expected: string): Scalar {
    const token = this.#token;
    if (token.kind === 'string' || token.kind === 'number') {
      this.#i++;
      return token.value!;
    }
    if (token.kind === 'word') {
      const lower = token.text.toLowerCase();
      if (lower === 'true' || lower === 'false' || lower === 'null') {
        this.#i++;
        return lower === 'null' ? null : lower === 'true';
      }
      if (!KEYWORDS.has(lower) && !token.text.startsWith('~')) {
        this.#i++;
        return token.text;
      }
    }
    fail(expected, token.at);
  }
}

/** Parses query text into its tree (`400` with the position for anything else). */
export function parseQueryText(text: string): QueryNode {
  if (text.length > MAX_QUERY_TEXT) fail(`at most ${MAX_QUERY_TEXT} characters`, MAX_QUERY_TEXT);
  return new Parser(lex(text)).text();
}

/** `~StoreTime` values: the `YYYYMMDDThhmmss+hh:mm` form or ISO 8601, as epoch ms at whole seconds. */
function storeTimeOf(value: Scalar, at: number): number {
  const form = typeof value === 'string' ? /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})([+-]\d{2}:\d{2}|Z)$/.exec(value) : null;
  const iso = form ? `${form[1]}-${form[2]}-${form[3]}T${form[4]}:${form[5]}:${form[6]}${form[7]}` : value;
  const ms = typeof iso === 'string' && /^\d{4}-\d{2}-\d{2}/.test(iso) ? Date.parse(iso) : typeof value === 'number' ? value : NaN;
  if (!Number.isFinite(ms)) fail('a ~StoreTime (YYYYMMDDThhmmss+hh:mm or ISO 8601)', at);
  return Math.floor(ms / 1000) * 1000;
}

const RANGE: Record<string, keyof FieldOperators> = { '<': '$lt', '<=': '$lte', '>': '$gt', '>=': '$gte' };

/** One comparison on the last name of a path, as a `Where` on the object that holds that name. */
function leaf(node: Exclude<QueryNode, { kind: 'or' | 'and' | 'not' }>, name: string): Where {
  if (name === '~ObjectID') {
    if (node.kind === 'in') return { $oids: node.values.map(String) };
    if (node.kind === 'null') return node.negated ? {} : { $oids: [] };
    if (node.op === '=' || node.op === '==') return { $oids: [String(node.value)] };
    if (node.op === '<>' || node.op === '!=') return { $not: { $oids: [String(node.value)] } };
    fail('=, <>, in or is null with ~ObjectID', node.at);
  }
  if (name === '~StoreTime') {
    if (node.kind === 'null') return node.negated ? {} : { $oids: [] };
    if (node.kind === 'in') return { $or: node.values.map((value) => ({ $storeTime: { $gte: storeTimeOf(value, node.at), $lt: storeTimeOf(value, node.at) + 1000 } })) };
    const ms = storeTimeOf(node.value, node.at);
    if (node.op === '=' || node.op === '==') return { $storeTime: { $gte: ms, $lt: ms + 1000 } };
    if (node.op === '<>' || node.op === '!=') return { $not: { $storeTime: { $gte: ms, $lt: ms + 1000 } } };
    if (node.op === 'like') fail('a comparison other than like with ~StoreTime', node.at);
    // whole seconds: "> t" is from the next second on, "<= t" up to the end of that second
    if (node.op === '>') return { $storeTime: { $gte: ms + 1000 } };
    if (node.op === '<=') return { $storeTime: { $lt: ms + 1000 } };
    return { $storeTime: { [RANGE[node.op]!]: ms } };
  }
  let condition: Condition;
  if (node.kind === 'in') condition = { $in: node.values };
  else if (node.kind === 'null') condition = { $null: !node.negated };
  else {
    const { op, value } = node;
    if (op === '=' || op === '==') condition = { $eq: value };
    else if (op === '<>' || op === '!=') return { $not: { [name]: { $eq: value } } };
    else if (op === 'like') {
      if (typeof value !== 'string') fail("a text pattern after 'like'", node.at);
      condition = { $like: value };
    } else {
      if (typeof value !== 'number' && typeof value !== 'string') fail(`a number or a text after '${op}'`, node.at);
      condition = { [RANGE[op]!]: value };
    }
  }
  return { [name]: condition };
}

/** The tree as the store-neutral filter every store answers alike. */
export function compileQuery(node: QueryNode): Where {
  switch (node.kind) {
    case 'and':
      return { $and: node.items.map(compileQuery) };
    case 'or':
      return { $or: node.items.map(compileQuery) };
    case 'not':
      return { $not: compileQuery(node.item) };
    default: {
      const { path } = node;
      for (const name of path.slice(0, -1)) if (name.startsWith('~')) fail(`a reference field before ${path.at(-1)}, not ${name}`, node.at);
      let where = leaf(node, path.at(-1)!);
      for (const name of path.slice(0, -1).reverse()) where = { [name]: { $match: where } };
      return where;
    }
  }
}

/** Query text as a `Where` (`400` naming the position for anything not understood). */
export function queryTextWhere(text: string): Where {
  return compileQuery(parseQueryText(text));
}
