// LuNA lexer (docs/language.md §3): longest match over the preprocessed text, like the original flex
// scanner. Token positions are offsets into `pre.text`.
//
// Tokens are kept in a compact table (a type code and two offsets each: 9 bytes instead of an
// object of ~100), because the token list of a program of tens of megabytes is the largest
// thing the front end holds; `tokenAt` makes a Token object when one is wanted.
//
// Diagnostic codes:
//   LUNA-L001  invalid symbol (a character no token starts with, e.g. `!`, `|`, `^`, `~`)
//   LUNA-L002  invalid escape sequence in a string (strings use JSON escapes)
//   LUNA-L003  unterminated string literal
//   LUNA-L004  warning: integer literal beyond 2147483647 (the original's C++ `int` overflows)
//   LUNA-L005  a number with an exponent (`1.0e9`): LuNA's reals have none
import { DiagnosticSink, type Diagnostic } from './diagnostics.js';
import type { Preprocessed } from './source.js';
import { error, originOf } from './origin.js';

/** Keywords; `else`, `in`, `SIZE` are reserved but appear nowhere in the grammar. */
export const KEYWORDS = new Set([
  'as', 'cf', 'df', 'import', 'for', 'if', 'else', 'let', 'in', 'out', 'SIZE', 'sub', 'while',
  'int', 'real', 'string', 'name', 'value', 'rush', 'static', 'static_for', 'unrolling', 'CUDA', 'NOCPU',
]);
export const RESERVED = new Set(['else', 'in', 'SIZE']);

const PUNCT3 = ['-->', '<--'];
const PUNCT2 = ['..', '==', '<=', '=>', '>=', '!=', '&&', '||', '<<', '>>'];
const PUNCT1 = [...'$&=<>;:?,.{}()[]+-*/%#@'];

export type TokenType =
  /** identifiers, literals, end of input (upper case: `int`, `name`… are keywords) */
  | 'NAME' | 'INT' | 'REAL' | 'STRING' | 'EOF'
  /** keywords, `C++`, `__block` and punctuation: the type is the token text itself */
  | (string & {});

export interface Token {
  type: TokenType;
  /** source text of the token (strings: with the quotes) */
  text: string;
  /** numeric value of int/real, decoded value of string */
  value?: number | string;
  /** offset of the first character in the preprocessed text */
  pos: number;
  /** offset one past the last character */
  end: number;
}

/** Every token type, by code. */
export const TOKEN_TYPES: readonly string[] = [
  'EOF', 'NAME', 'INT', 'REAL', 'STRING', 'C++', '__block', ...KEYWORDS, ...PUNCT3, ...PUNCT2, ...PUNCT1,
];
const CODE = new Map(TOKEN_TYPES.map((t, i) => [t, i]));
const T_EOF = 0, T_NAME = 1, T_INT = 2, T_REAL = 3, T_STRING = 4;

/** The tokens of a text: token k is text[starts[k], ends[k]) of type TOKEN_TYPES[types[k]]. */
export interface TokenTable {
  readonly src: string;
  /** number of tokens, the final EOF included */
  readonly count: number;
  readonly types: Uint8Array;
  readonly starts: Int32Array;
  readonly ends: Int32Array;
}

const JSON_ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isAlpha = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
const isAlnum = (c: number): boolean => isAlpha(c) || isDigit(c);

/** Growable columns of a token table. */
class TableBuilder {
  types: Uint8Array;
  starts: Int32Array;
  ends: Int32Array;
  n = 0;

  constructor(cap: number) {
    this.types = new Uint8Array(cap);
    this.starts = new Int32Array(cap);
    this.ends = new Int32Array(cap);
  }

  push(type: number, start: number, end: number): void {
    if (this.n === this.types.length) this.grow();
    const n = this.n++;
    this.types[n] = type;
    this.starts[n] = start;
    this.ends[n] = end;
  }

  private grow(): void {
    const cap = Math.ceil(this.types.length * 1.5) + 16;
    const t = new Uint8Array(cap), s = new Int32Array(cap), e = new Int32Array(cap);
    t.set(this.types);
    s.set(this.starts);
    e.set(this.ends);
    this.types = t;
    this.starts = s;
    this.ends = e;
  }
}

const C_PLUS = CODE.get('C++')!;
/** Words that are not names: the keywords and `__block`. */
const WORD_CODES = new Map([...KEYWORDS, '__block'].map((w) => [w, CODE.get(w)!]));

/** Lex the preprocessed text into a token table (diagnostics capped per file). */
export function lex(pre: Preprocessed): { table: TokenTable; diagnostics: Diagnostic[] } {
  const src = pre.text;
  const sink = new DiagnosticSink();
  const err = (c: string, msg: string, pos: number): void => sink.push(error(c, msg, originOf(pre, pos)));
  const out = new TableBuilder(Math.max(64, src.length >> 2));
  let i = 0;
  const len = src.length;
  while (i < len) {
    const c = src.charCodeAt(i);
    const start = i;
    if (c === 32 || c === 10 || c === 9 || c === 13 || c === 12 || c === 11) {
      i++;
    } else if (c === 47 && src.charCodeAt(i + 1) === 47) { // //
      const nl = src.indexOf('\n', i);
      i = nl < 0 ? len : nl;
    } else if (isAlpha(c)) {
      i++;
      while (i < len && isAlnum(src.charCodeAt(i))) i++;
      if (i - start === 1 && c === 67 && src.charCodeAt(i) === 43 && src.charCodeAt(i + 1) === 43) { // C++
        i += 2;
        out.push(C_PLUS, start, i);
      } else if (i - start > 10) {
        out.push(T_NAME, start, i); // longer than every keyword (static_for, the longest, has 10)
      } else {
        out.push(WORD_CODES.get(src.slice(start, i)) ?? T_NAME, start, i);
      }
    } else if (isDigit(c)) {
      while (i < len && isDigit(src.charCodeAt(i))) i++;
      let real = false;
      if (src.charCodeAt(i) === 46 && isDigit(src.charCodeAt(i + 1))) {
        i++;
        while (i < len && isDigit(src.charCodeAt(i))) i++;
        real = true;
      }
      // `1.0e9`: LuNA's reals have no exponent; say so once, at the number, and take it whole
      const e = src.charCodeAt(i), sign = src.charCodeAt(i + 1);
      if ((e === 101 || e === 69) && (isDigit(sign) || ((sign === 43 || sign === 45) && isDigit(src.charCodeAt(i + 2))))) {
        i += isDigit(sign) ? 1 : 2;
        while (i < len && isDigit(src.charCodeAt(i))) i++;
        const value = Number(src.slice(start, i));
        err('LUNA-L005', `a number with an exponent (${src.slice(start, i)}): LuNA's reals have none; write ${Number.isFinite(value) && Math.abs(value) < 1e21 ? (Number.isInteger(value) ? value.toFixed(1) : String(value)) : 'it out in full'}`, start);
        out.push(T_REAL, start, i);
      } else if (real) {
        out.push(T_REAL, start, i);
      } else {
        if (i - start >= 10 && Number(src.slice(start, i)) > 2147483647) {
          sink.push({ ...error('LUNA-L004', `integer literal out of int range: ${src.slice(start, i)}`, originOf(pre, start)), severity: 'warning' });
        }
        out.push(T_INT, start, i);
      }
    } else if (c === 34) { // "
      // `"[^"]*"`: a backslash does not protect a quote (the original's rule)
      const close = src.indexOf('"', i + 1);
      if (close < 0) {
        err('LUNA-L003', 'unterminated string literal', start);
        i = len;
      } else i = close + 1;
      const rawEnd = close < 0 ? len : close;
      if (backslashIn(src, start + 1, rawEnd) >= 0) decode(src, start + 1, rawEnd, err);
      out.push(T_STRING, start, i);
    } else {
      const p = punct(src, i, c);
      if (p >= 0) {
        i += TOKEN_TYPES[p]!.length;
        out.push(p, start, i);
      } else {
        const cp = String.fromCodePoint(src.codePointAt(i)!);
        err('LUNA-L001', `invalid symbol: ${cp}`, start);
        i += cp.length;
      }
    }
  }
  out.push(T_EOF, len, len);
  return { table: { src, count: out.n, types: out.types, starts: out.starts, ends: out.ends }, diagnostics: sink.result() };
}

const PUNCT_CODES = new Map([...PUNCT3, ...PUNCT2, ...PUNCT1].map((p) => [p, CODE.get(p)!]));
const SECOND = new Set(PUNCT2.map((p) => p[0]!).concat(PUNCT3.map((p) => p[0]!)));

/** Code of the longest punctuation token at src[i] (its first code unit is c), else -1. */
function punct(src: string, i: number, c: number): number {
  const ch = String.fromCharCode(c);
  if (SECOND.has(ch)) {
    const c3 = src.slice(i, i + 3);
    const k3 = c3.length === 3 ? PUNCT_CODES.get(c3) : undefined;
    if (k3 !== undefined) return k3;
    const k2 = PUNCT_CODES.get(c3.slice(0, 2));
    if (k2 !== undefined) return k2;
  }
  return PUNCT_CODES.get(ch) ?? -1;
}

/** Token k of a table as an object (text and literal value included). */
export function tokenAt(t: TokenTable, k: number): Token {
  const type = TOKEN_TYPES[t.types[k]!]!;
  const pos = t.starts[k]!, end = t.ends[k]!;
  const text = t.src.slice(pos, end);
  const tok: Token = { type, text, pos, end };
  const ty = t.types[k];
  if (ty === T_INT || ty === T_REAL) tok.value = Number(text);
  else if (ty === T_STRING) {
    const closed = end - pos >= 2 && t.src[end - 1] === '"';
    tok.value = decode(t.src, pos + 1, closed ? end - 1 : end, () => {});
  }
  return tok;
}

/** Tokens as objects (tests, tools); the parser works on the table. */
export function tokenize(pre: Preprocessed): { tokens: Token[]; diagnostics: Diagnostic[] } {
  const { table, diagnostics } = lex(pre);
  const tokens: Token[] = [];
  for (let k = 0; k < table.count; k++) tokens.push(tokenAt(table, k));
  return { tokens, diagnostics };
}

/** First `\\` in src[from, to), or -1 (indexOf would search to the end of the whole text). */
function backslashIn(src: string, from: number, to: number): number {
  for (let k = from; k < to; k++) if (src.charCodeAt(k) === 92) return k;
  return -1;
}

/** Interpret the JSON escapes of src[from, to) (the original pastes the raw token into JSON). */
function decode(src: string, from: number, to: number, err: (code: string, msg: string, pos: number) => void): string {
  const first = backslashIn(src, from, to);
  if (first < 0) return src.slice(from, to);
  let out = src.slice(from, first);
  for (let k = first; k < to; k++) {
    const c = src[k]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = k + 1 < to ? src[k + 1] : undefined;
    if (e !== undefined && e in JSON_ESCAPES) {
      out += JSON_ESCAPES[e];
      k++;
    } else if (e === 'u' && k + 6 <= to && /^[0-9A-Fa-f]{4}$/.test(src.slice(k + 2, k + 6))) {
      out += String.fromCharCode(parseInt(src.slice(k + 2, k + 6), 16));
      k += 5;
    } else {
      const shown = e === undefined ? '\\' : e === 'u' ? src.slice(k, Math.min(k + 6, to)) : `\\${e}`;
      err('LUNA-L002', `invalid escape sequence in string: ${shown}`, k);
      out += e ?? '';
      k++;
    }
  }
  return out;
}
