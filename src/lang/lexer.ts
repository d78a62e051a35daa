// LuNA lexer (LANGUAGE.md §3): longest match over the preprocessed text, like the original flex
// scanner. Token positions are offsets into `pre.text`.
//
// Diagnostic codes:
//   LUNA-L001  invalid symbol (a character no token starts with, e.g. `!`, `|`, `^`, `~`)
//   LUNA-L002  invalid escape sequence in a string (strings use JSON escapes)
//   LUNA-L003  unterminated string literal
//   LUNA-L004  warning: integer literal beyond 2147483647 (the original's C++ `int` overflows)
import type { Diagnostic } from './diagnostics.js';
import type { Preprocessed } from './source.js';
import { error, originOf } from './origin.js';

/** Keywords; `else`, `in`, `SIZE` are reserved but appear nowhere in the grammar. */
export const KEYWORDS = new Set([
  'as', 'cf', 'df', 'import', 'for', 'if', 'else', 'let', 'in', 'out', 'SIZE', 'sub', 'while',
  'int', 'real', 'string', 'name', 'value', 'rush', 'static', 'static_for', 'unrolling', 'CUDA', 'NOCPU',
]);
export const RESERVED = new Set(['else', 'in', 'SIZE']);

/** Punctuation by length; the lexer tries 3, then 2, then 1 characters (longest match). */
const PUNCT3 = new Set(['-->', '<--']);
const PUNCT2 = new Set(['..', '==', '<=', '=>', '>=', '!=', '&&', '||', '<<', '>>']);
const PUNCT1 = new Set('$&=<>;:?,.{}()[]+-*/%#@');

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isAlpha = (c: string): boolean => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
const isAlnum = (c: string | undefined): boolean => c !== undefined && (isAlpha(c) || isDigit(c));

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

const JSON_ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

export function tokenize(pre: Preprocessed): { tokens: Token[]; diagnostics: Diagnostic[] } {
  const src = pre.text;
  const tokens: Token[] = [];
  const diagnostics: Diagnostic[] = [];
  const err = (code: string, msg: string, pos: number): void => {
    diagnostics.push(error(code, msg, originOf(pre, pos)));
  };
  let i = 0;
  const push = (type: TokenType, start: number, value?: number | string): void => {
    const t: Token = { type, text: src.slice(start, i), pos: start, end: i };
    if (value !== undefined) t.value = value;
    tokens.push(t);
  };

  while (i < src.length) {
    const c = src[i]!;
    const start = i;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v') {
      i++;
    } else if (c === '/' && src[i + 1] === '/') {
      while (i < src.length && src[i] !== '\n') i++;
    } else if (isAlpha(c)) {
      while (isAlnum(src[i])) i++;
      const word = src.slice(start, i);
      if (word === 'C' && src.startsWith('++', i)) {
        i += 2;
        push('C++', start);
      } else push(KEYWORDS.has(word) || word === '__block' ? word : 'NAME', start);
    } else if (isDigit(c)) {
      while (isDigit(src[i])) i++;
      if (src[i] === '.' && isDigit(src[i + 1])) {
        i++;
        while (isDigit(src[i])) i++;
        push('REAL', start, Number(src.slice(start, i)));
      } else {
        const v = Number(src.slice(start, i));
        if (v > 2147483647) {
          diagnostics.push({ ...error('LUNA-L004', `integer literal out of int range: ${src.slice(start, i)}`, originOf(pre, start)), severity: 'warning' });
        }
        push('INT', start, v);
      }
    } else if (c === '"') {
      // `"[^"]*"`: a backslash does not protect a quote (the original's rule)
      const close = src.indexOf('"', i + 1);
      if (close < 0) {
        err('LUNA-L003', 'unterminated string literal', start);
        i = src.length;
        push('STRING', start, decode(src.slice(start + 1), start + 1, err));
      } else {
        i = close + 1;
        push('STRING', start, decode(src.slice(start + 1, close), start + 1, err));
      }
    } else {
      const p = [src.slice(i, i + 3), src.slice(i, i + 2), c].find((q, k) => (k === 0 ? PUNCT3 : k === 1 ? PUNCT2 : PUNCT1).has(q));
      if (p) {
        i += p.length;
        push(p, start);
      } else {
        const cp = String.fromCodePoint(src.codePointAt(i)!);
        err('LUNA-L001', `invalid symbol: ${cp}`, start);
        i += cp.length;
      }
    }
  }
  tokens.push({ type: 'EOF', text: '', pos: src.length, end: src.length });
  return { tokens, diagnostics };
}

/** Interpret JSON escapes (the original pastes the raw token into JSON). */
function decode(raw: string, base: number, err: (code: string, msg: string, pos: number) => void): string {
  let out = '';
  for (let k = 0; k < raw.length; k++) {
    const c = raw[k]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = raw[k + 1];
    if (e !== undefined && e in JSON_ESCAPES) {
      out += JSON_ESCAPES[e];
      k++;
    } else if (e === 'u' && /^[0-9A-Fa-f]{4}$/.test(raw.slice(k + 2, k + 6))) {
      out += String.fromCharCode(parseInt(raw.slice(k + 2, k + 6), 16));
      k += 5;
    } else {
      const shown = e === undefined ? '\\' : e === 'u' ? raw.slice(k, k + 6) : `\\${e}`;
      err('LUNA-L002', `invalid escape sequence in string: ${shown}`, base + k);
      out += e ?? '';
      k++;
    }
  }
  return out;
}
