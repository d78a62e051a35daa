// Small helpers shared by the preprocessor, lexer and parser: mapping offsets of the
// preprocessed text back to source origins, building and ordering diagnostics.
import type { Diagnostic } from './diagnostics.js';
import type { ForeignBlock, Origin, Preprocessed } from './source.js';

export { sortDiagnostics, limitDiagnostics } from './diagnostics.js';

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
  const { text, map, sources } = pre;
  const main = pre.files[0] ?? '<input>';
  if (pos >= 0 && pos < text.length) return sources.origin(map.posAt(pos), main);
  let k = text.length - 1;
  while (k >= 0 && /\s/.test(text[k]!)) k--;
  if (k < 0) return text.length > 0 ? sources.origin(map.posAt(0), main) : { file: main, line: 1, col: 1 };
  const o = sources.origin(map.posAt(k), main);
  return o.line > 0 ? { file: o.file, line: o.line, col: o.col + 1 } : o;
}

/** Origin of character `k` of a foreign block's text. */
export function blockOriginOf(pre: Preprocessed, block: ForeignBlock, k: number): Origin {
  return block.text.length === 0 ? block.origin : pre.sources.origin(block.map.posAt(Math.min(k, block.text.length - 1)));
}

export function error(code: string, message: string, origin?: Origin): Diagnostic {
  return origin ? { severity: 'error', code, message, origin } : { severity: 'error', code, message };
}
