// The LuNA front end in one call: preprocess → parse → let substitution → static checks.
import * as fs from 'node:fs';
import type { Program } from './ast.js';
import { check } from './check.js';
import { formatDiagnostic, hasErrors, type Diagnostic } from './diagnostics.js';
import { substituteLet } from './let.js';
import { originOf, sortDiagnostics } from './origin.js';
import { parse } from './parser.js';
import { preprocessText, preprocess } from './preprocess.js';
import type { Origin, Preprocessed } from './source.js';

export * from './ast.js';
export * from './source.js';
export * from './diagnostics.js';
export * from './origin.js';
export * from './preprocess.js';
export * from './lexer.js';
export * from './parser.js';
export { substituteLet, printExpr } from './let.js';
export { check, type CheckOptions } from './check.js';

export interface FrontEndOptions {
  /** `-D key=value` macros */
  defines?: Record<string, string>;
  /** #include search path (default: the current working directory) */
  includePath?: string[];
  /** names exported by the ucode module; enables the missing-implementation checks */
  ucodeExports?: ReadonlySet<string>;
  /** text of `file` when it is held in memory (tests, editors) */
  source?: string;
}

export interface FrontEndResult {
  pre: Preprocessed;
  /** the let-free, checked program; null when there are errors */
  program: Program | null;
  /** every diagnostic of every stage, sorted by file/line/column */
  diagnostics: Diagnostic[];
}

export function compileFrontEnd(file: string, opts: FrontEndOptions = {}): FrontEndResult {
  const ppOpts = { defines: opts.defines, includePath: opts.includePath };
  const pp = opts.source !== undefined ? preprocessText(file, opts.source, ppOpts) : preprocess(file, ppOpts);
  const pre = pp.pre;
  const parsed = parse(pre);
  const diagnostics = [...pp.diagnostics, ...parsed.diagnostics];
  const at = (pos: number): Origin => originOf(pre, pos);
  let program: Program | null = parsed.program ?? null;
  // Semantic checks on a program recovered from syntax errors would mostly report noise.
  if (program && !hasErrors(diagnostics)) {
    const lets = substituteLet(program, at);
    diagnostics.push(...lets.diagnostics);
    program = lets.program;
    diagnostics.push(...check(program, { originOf: at, ucodeExports: opts.ucodeExports }));
  }
  return { pre, program: hasErrors(diagnostics) ? null : program, diagnostics: sortDiagnostics(diagnostics, pre.files) };
}

/**
 * Compiler-style text of all diagnostics. Source lines come from the files; when a file cannot
 * be read (in-memory source) the line is rebuilt from the preprocessed text's origins.
 */
export function renderDiagnostics(diags: readonly Diagnostic[], pre?: Preprocessed): string {
  const files = new Map<string, string[] | null>();
  const readLine = (file: string, line: number): string | null => {
    if (!files.has(file)) {
      try { files.set(file, fs.readFileSync(file, 'utf8').split(/\r?\n/)); } catch { files.set(file, null); }
    }
    const lines = files.get(file);
    if (lines) return lines[line - 1] ?? null;
    return pre ? lineFromPre(pre, file, line) : null;
  };
  return diags.map((d) => formatDiagnostic(d, readLine)).join('\n');
}

/** Best effort: the characters of `file:line` that survived preprocessing, placed at their columns. */
function lineFromPre(pre: Preprocessed, file: string, line: number): string | null {
  const chars: string[] = [];
  pre.origins.forEach((o, i) => {
    if (o.file === file && o.line === line && pre.text[i] !== '\n') chars[o.col - 1] = pre.text[i]!;
  });
  if (chars.length === 0) return null;
  return Array.from(chars, (c) => c ?? ' ').join('');
}
