// Diagnostics: positioned, coded, all collected (never stop at the first) — up to a bound per
// file, so that a hostile or badly broken source yields a readable report in bounded memory.
//
// Diagnostic codes:
//   LUNA-D001  N more diagnostics of a file not shown (at most MAX_DIAGNOSTICS_PER_FILE each)
import type { Origin } from './source.js';

export type Severity = 'error' | 'warning';

export interface Diagnostic {
  severity: Severity;
  /** stable code, e.g. LUNA-E010 */
  code: string;
  message: string;
  /** where; absent only for whole-program diagnostics (e.g. no main) */
  origin?: Origin;
  /** LUNA-D001 only: how many diagnostics of the file were left out */
  omitted?: number;
}

/** Diagnostics kept per file; the rest are counted in one LUNA-D001 line. */
export const MAX_DIAGNOSTICS_PER_FILE = 200;
export const OMITTED = 'LUNA-D001';
/** Longest source-line excerpt a rendered diagnostic repeats. */
export const MAX_EXCERPT = 160;

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
 * Collects diagnostics, keeping at most `limit` per file and counting the rest, so that a stage
 * fed 10⁷ errors keeps 200 objects; one that repeats a kept one (the same code, position and
 * message) is kept once, with how often it came. `total` counts everything pushed (kept or not).
 */
export class DiagnosticSink {
  readonly kept: Diagnostic[] = [];
  total = 0;
  private readonly perFile = new Map<string, { kept: number; omitted: number; errors: boolean }>();
  /**
   * the kept diagnostics by code, position and message, with how often each came again: a macro
   * whose body is wrong is checked at every expansion, and 200 copies of one line said nothing more
   */
  private readonly repeats = new Map<string, { d: Diagnostic; n: number }>();

  constructor(private readonly limit = MAX_DIAGNOSTICS_PER_FILE) {}

  push(d: Diagnostic): void {
    this.total++;
    const o = d.origin;
    const key = d.code === OMITTED || !o ? '' : `${d.code}\0${o.file}\0${o.line}\0${o.col}\0${d.message}`;
    const again = key === '' ? undefined : this.repeats.get(key);
    if (again) { again.n++; return; }
    const f = fileKey(d);
    let s = this.perFile.get(f);
    if (!s) this.perFile.set(f, (s = { kept: 0, omitted: 0, errors: false }));
    if (d.code === OMITTED) {
      s.omitted += d.omitted ?? 0;
      s.errors ||= d.severity === 'error';
    } else if (s.kept < this.limit) {
      s.kept++;
      this.kept.push(d);
      if (key !== '') this.repeats.set(key, { d, n: 0 });
    } else {
      s.omitted++;
      s.errors ||= d.severity === 'error';
    }
  }

  /** The kept diagnostics plus one LUNA-D001 per file that overflowed (unsorted). */
  result(): Diagnostic[] {
    const out = this.kept.slice();
    for (const { d, n } of this.repeats.values()) {
      if (n > 0) out[out.indexOf(d)] = { ...d, message: `${d.message} (and ${n} more ${n === 1 ? 'time' : 'times'} at this position)` };
    }
    for (const [file, s] of this.perFile) {
      if (s.omitted === 0) continue;
      out.push({
        severity: s.errors ? 'error' : 'warning',
        code: OMITTED,
        message: `${s.omitted} more diagnostic(s) not shown (at most ${this.limit} per file)`,
        origin: { file, line: 0, col: 0 },
        omitted: s.omitted,
      });
    }
    return out;
  }
}

function fileKey(d: Diagnostic): string {
  return d.origin?.file ?? '';
}

/**
 * Stable sort by source position: file (in `files` order, main file first), line, column;
 * a file's LUNA-D001 line after its other diagnostics; diagnostics without an origin last.
 */
export function sortDiagnostics(ds: readonly Diagnostic[], files: readonly string[]): Diagnostic[] {
  const ranks = new Map<string, number>();
  files.forEach((f, i) => { if (!ranks.has(f)) ranks.set(f, i); });
  const rank = (f: string): number => ranks.get(f) ?? files.length;
  const line = (d: Diagnostic): number => (d.code === OMITTED ? Infinity : d.origin!.line);
  return ds
    .map((d, i) => ({ d, i }))
    .sort((a, b) => {
      const x = a.d.origin, y = b.d.origin;
      if (!x || !y) return (x ? 0 : 1) - (y ? 0 : 1) || a.i - b.i;
      return rank(x.file) - rank(y.file) || (x.file < y.file ? -1 : x.file > y.file ? 1 : 0)
        || line(a.d) - line(b.d) || x.col - y.col || a.i - b.i;
    })
    .map((e) => e.d);
}

/** Sort, then keep at most `limit` per file (earliest first) with one LUNA-D001 line for the rest. */
export function limitDiagnostics(ds: readonly Diagnostic[], files: readonly string[], limit = MAX_DIAGNOSTICS_PER_FILE): Diagnostic[] {
  const sink = new DiagnosticSink(limit);
  for (const d of sortDiagnostics(ds, files)) sink.push(d);
  return sortDiagnostics(sink.result(), files);
}

/**
 * Render like a compiler: `file:line:col: error[CODE]: message`, the source line and a caret.
 * `readLine(file, line)` supplies the source text (null when unavailable). A long line is cut to
 * an excerpt of MAX_EXCERPT characters around the column.
 */
export function formatDiagnostic(d: Diagnostic, readLine: (file: string, line: number) => string | null): string {
  const head = `${d.severity}[${d.code}]: ${visible(d.message)}`;
  if (!d.origin) return head;
  const { line, col } = d.origin;
  const file = visible(d.origin.file);
  if (line <= 0) return `${file}: ${head}`;
  const full = readLine(d.origin.file, line);
  let out = `${file}:${line}:${col}: ${head}`;
  if (full !== null) {
    const { text, caret } = excerpt(full, col - 1);
    const gutter = String(line).length;
    const lead = visible(text.slice(0, caret)).replace(/[^\t]/g, ' ');
    out += `\n ${' '.repeat(gutter)} |\n ${line} | ${visible(text)}\n ${' '.repeat(gutter)} | ${lead}^`;
  }
  return out;
}

/**
 * Text for a terminal: control characters (C0 but tab and newline, DEL, C1) and the bidirectional
 * overrides, which a source may hold and which would move the cursor, recolour the terminal or
 * reorder what the reader sees, are shown escaped (`\x1b`, `\u202e`).
 */
export function visible(s: string): string {
  return s.replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g, (c) => {
    const n = c.charCodeAt(0);
    return n <= 0xff ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16)}`;
  });
}

/** At most MAX_EXCERPT characters of `line` around index `at`, marked with `...` where cut. */
function excerpt(line: string, at: number): { text: string; caret: number } {
  if (line.length <= MAX_EXCERPT) return { text: line, caret: at };
  const half = MAX_EXCERPT >> 1;
  const start = Math.max(0, Math.min(at - half, line.length - MAX_EXCERPT));
  const end = Math.min(line.length, start + MAX_EXCERPT);
  const pre = start > 0 ? '...' : '';
  return { text: pre + line.slice(start, end) + (end < line.length ? '...' : ''), caret: at - start + pre.length };
}
