// Small helpers shared by the preprocessor, lexer and parser: mapping offsets of the
// preprocessed text back to source origins, building and ordering diagnostics.
import type { Diagnostic } from './diagnostics.js';
import type { Origin, Preprocessed } from './source.js';

/** Origin of a character that has no source (e.g. an empty program). */
export function noOrigin(file: string): Origin {
  return { file, line: 0, col: 0 };
}

/**
 * Origin of the character at `pos` of the preprocessed text. Past the end (the lexer's EOF
 * token) it points just after the last non-blank character, which is where a reader looks for
 * "expected '}', found end of file".
 */
export function originOf(pre: Preprocessed, pos: number): Origin {
  const { origins, text } = pre;
  if (pos >= 0 && pos < origins.length) return origins[pos]!;
  let k = Math.min(text.length, origins.length) - 1;
  while (k >= 0 && /\s/.test(text[k]!)) k--;
  if (k < 0) return origins[0] ?? { file: pre.files[0] ?? '<input>', line: 1, col: 1 };
  const o = origins[k]!;
  return o.line > 0 ? { file: o.file, line: o.line, col: o.col + 1 } : o;
}

export function error(code: string, message: string, origin?: Origin): Diagnostic {
  return origin ? { severity: 'error', code, message, origin } : { severity: 'error', code, message };
}

/**
 * Stable sort by source position: file (in `files` order, main file first), line, column.
 * Diagnostics without an origin go last.
 */
export function sortDiagnostics(ds: Diagnostic[], files: readonly string[]): Diagnostic[] {
  const rank = (f: string): number => {
    const i = files.indexOf(f);
    return i < 0 ? files.length : i;
  };
  return ds
    .map((d, i) => ({ d, i }))
    .sort((a, b) => {
      const x = a.d.origin, y = b.d.origin;
      if (!x || !y) return (x ? 0 : 1) - (y ? 0 : 1) || a.i - b.i;
      return rank(x.file) - rank(y.file) || x.line - y.line || x.col - y.col || a.i - b.i;
    })
    .map((e) => e.d);
}
