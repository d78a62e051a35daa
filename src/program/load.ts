// Load a LuNA program for running or checking: bundle its ucodes, run the front end with the
// ucode exports known, compile it. Diagnostics are returned, never thrown.
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { compileFrontEnd, renderDiagnostics } from '../lang/index.js';
import { hasErrors, type Diagnostic } from '../lang/diagnostics.js';
import { originOf } from '../lang/origin.js';
import type { Preprocessed } from '../lang/source.js';
import { bundleUcodes, defaultUcodeSources, UcodeBundleError, type UcodeBundle } from '../ucode/bundle.js';
import { compileProgram, ProgramError, type CompiledProgram } from './compile.js';

export interface LoadOptions {
  defines?: Record<string, string>;
  includePath?: string[];
  /** ucode modules; default `ucodes.ts` beside the program */
  ucodes?: string[];
  cacheDir?: string;
}

export interface Loaded {
  file: string;
  pre?: Preprocessed;
  diagnostics: Diagnostic[];
  /** compiler-style text of the diagnostics */
  text: string;
  program?: CompiledProgram;
  bundle?: UcodeBundle;
}

export async function loadProgram(file: string, opts: LoadOptions = {}): Promise<Loaded> {
  const abs = resolve(file);
  if (!existsSync(abs) || !statSync(abs).isFile()) {
    const message = `program file not found: ${file}`;
    return { file, diagnostics: [{ severity: 'error', code: 'LUNA-P015', message }], text: `error[LUNA-P015]: ${message}` };
  }
  const sources = opts.ucodes ?? defaultUcodeSources(abs);
  let bundle: UcodeBundle;
  try {
    bundle = await bundleUcodes(sources.map((s) => resolve(s)), opts.cacheDir ?? resolve('.luna-cache'));
  } catch (e) {
    if (e instanceof UcodeBundleError) {
      const d: Diagnostic = { severity: 'error', code: 'LUNA-U001', message: e.message };
      return { file, diagnostics: [d], text: `error[LUNA-U001]: ${e.message}` };
    }
    throw e;
  }
  // No module at all: one diagnostic for the program, not one per import.
  const ucodeModuleMissing = sources.length === 0 ? join(dirname(file), 'ucodes.ts') : undefined;
  const fe = compileFrontEnd(file, { defines: opts.defines, includePath: opts.includePath, ucodeExports: bundle.exports, ucodeModuleMissing });
  const text = renderDiagnostics(fe.diagnostics, fe.pre);
  if (!fe.program || hasErrors(fe.diagnostics)) return { file, pre: fe.pre, diagnostics: fe.diagnostics, text, bundle };
  try {
    const program = compileProgram(fe.program, (pos) => originOf(fe.pre, pos));
    return { file, pre: fe.pre, diagnostics: fe.diagnostics, text, program, bundle };
  } catch (e) {
    if (e instanceof ProgramError) {
      const d: Diagnostic = { severity: 'error', code: 'LUNA-C001', message: e.message, origin: e.origin };
      const ds = [...fe.diagnostics, d];
      return { file, pre: fe.pre, diagnostics: ds, text: renderDiagnostics(ds, fe.pre), bundle };
    }
    throw e;
  }
}
