// The LuNA front end in one call: preprocess → parse → let substitution → static checks.
import * as fs from 'node:fs';
import type { Program } from './ast.js';
import { check } from './check.js';
import { lowerDynamic } from './dynamic.js';
import { formatDiagnostic, hasErrors, limitDiagnostics, type Diagnostic } from './diagnostics.js';
import { substituteLet } from './let.js';
import { originOf } from './origin.js';
import { parseFile } from './parser.js';
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
export { storedFrontEnd, restoredFrontEnd, type StoredFrontEnd } from './stored.js';

export interface FrontEndOptions {
  /** `-D key=value` macros */
  defines?: Record<string, string>;
  /** #include search path (default: the current working directory) */
  includePath?: string[];
  /** names exported by the ucode module; enables the missing-implementation checks */
  ucodeExports?: ReadonlySet<string>;
  /** the program has no ucode module: where it was looked for (one diagnostic, see check.ts) */
  ucodeModuleMissing?: string;
  /** text of `file` when it is held in memory (tests, editors) */
  source?: string;
  /**
   * reader of the source files (default: regular files as UTF-8); throws when a file cannot be
   * read (the program cache records what each include probe found)
   */
  readFile?: (path: string) => string;
}

export interface FrontEndResult {
  pre: Preprocessed;
  /** the let-free, checked program; null when there are errors */
  program: Program | null;
  /** every diagnostic of every stage, sorted by file/line/column */
  diagnostics: Diagnostic[];
}

export function compileFrontEnd(file: string, opts: FrontEndOptions = {}): FrontEndResult {
  const ppOpts = { defines: opts.defines, includePath: opts.includePath, readFile: opts.readFile };
  const parsed = opts.source !== undefined ? parseFile(file, { ...ppOpts, readFile: inMemory(file, opts.source, opts.readFile) }) : parseFile(file, ppOpts);
  const pre = parsed.pre;
  const diagnostics = [...parsed.diagnostics];
  const at = (pos: number): Origin => originOf(pre, pos);
  let program: Program | null = parsed.program;
  // Semantic checks on a program recovered from syntax errors would mostly report noise.
  if (!hasErrors(diagnostics)) {
    const lets = substituteLet(program, at);
    for (const d of lets.diagnostics) diagnostics.push(d);
    program = lets.program;
    for (const d of check(program, { originOf: at, ucodeExports: opts.ucodeExports, ucodeModuleMissing: opts.ucodeModuleMissing })) diagnostics.push(d);
    if (!hasErrors(diagnostics)) program = lowerDynamic(program);
  }
  const all = limitDiagnostics(diagnostics, pre.files);
  return { pre, program: hasErrors(all) ? null : program, diagnostics: all };
}

function inMemory(file: string, text: string, read: (p: string) => string = (p) => fs.readFileSync(p, 'utf8')): (p: string) => string {
  return (p) => (p === file ? text : read(p));
}

/**
 * Compiler-style text of all diagnostics. Source lines come from the texts the preprocessor
 * read (`pre`), else from the files.
 */
export function renderDiagnostics(diags: readonly Diagnostic[], pre?: Preprocessed): string {
  const files = new Map<string, string[] | null>();
  const readLine = (file: string, line: number): string | null => {
    const fromPre = pre?.sources.lineText(file, line);
    if (fromPre !== undefined && fromPre !== null) return fromPre;
    if (!files.has(file)) {
      try { files.set(file, fs.readFileSync(file, 'utf8').split(/\r?\n/)); } catch { files.set(file, null); }
    }
    return files.get(file)?.[line - 1] ?? null;
  };
  return diags.map((d) => formatDiagnostic(d, readLine)).join('\n');
}
