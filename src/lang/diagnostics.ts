// Diagnostics: positioned, coded, all collected (never stop at the first).
import type { Origin } from './source.js';

export type Severity = 'error' | 'warning';

export interface Diagnostic {
  severity: Severity;
  /** stable code, e.g. LUNA-E010 */
  code: string;
  message: string;
  /** where; absent only for whole-program diagnostics (e.g. no main) */
  origin?: Origin;
}

/** Thrown by stages that cannot continue; carries every diagnostic collected so far. */
export class CompileError extends Error {
  constructor(readonly diagnostics: Diagnostic[]) {
    super(diagnostics.map((d) => d.message).join('\n'));
  }
}

export function hasErrors(ds: readonly Diagnostic[]): boolean {
  return ds.some((d) => d.severity === 'error');
}

/**
 * Render like a compiler: `file:line:col: error[CODE]: message`, the source line and a caret.
 * `readLine(file, line)` supplies the source text (null when unavailable).
 */
export function formatDiagnostic(d: Diagnostic, readLine: (file: string, line: number) => string | null): string {
  const head = `${d.severity}[${d.code}]: ${d.message}`;
  if (!d.origin) return head;
  const { file, line, col } = d.origin;
  if (line <= 0) return `${file}: ${head}`;
  const src = readLine(file, line);
  let out = `${file}:${line}:${col}: ${head}`;
  if (src !== null) {
    const gutter = String(line).length;
    const lead = src.slice(0, col - 1).replace(/[^\t]/g, ' ');
    out += `\n ${' '.repeat(gutter)} |\n ${line} | ${src}\n ${' '.repeat(gutter)} | ${lead}^`;
  }
  return out;
}
