// Load a LuNA program for running or checking: bundle its TypeScript ucodes, run the front end
// with the ucode exports known, compile it, build its C++ ucodes. Diagnostics are returned,
// never thrown.
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { FileError, makeDirectory, notRegular, reason } from '../core/files.js';
import { basename, dirname, join, resolve } from 'node:path';
import { renderDiagnostics } from '../lang/index.js';
import { cachedFrontEnd, type FrontCacheState } from './front-cache.js';
import { hasErrors, type Diagnostic } from '../lang/diagnostics.js';
import { originOf } from '../lang/origin.js';
import type { Preprocessed } from '../lang/source.js';
import { bundleUcodes, UcodeBundleError, type UcodeBundle } from '../ucode/bundle.js';
import { defaultUcodeFiles, splitUcodeFiles } from '../ucode/sources.js';
import type { GlueImport } from '../ucode/cpp/glue.js';
import { inlineCppSource } from '../ucode/cpp/inline.js';
import type { Program } from '../lang/ast.js';
import { fits, HeapExhausted, heapLeft, megabytes } from '../lang/heap.js';
import { tooLarge } from '../lang/parser.js';
import { BYTES_PER_SITE, compileProgram, countStatements, marksHeavy, ProgramError, type CompiledProgram } from './compile.js';
import type { ImportDef } from '../core/imports.js';

export interface LoadOptions {
  defines?: Record<string, string>;
  includePath?: string[];
  /** ucode files: TypeScript modules and C++ sources (.cpp/.cc/.cxx); default `ucodes.ts` and `ucodes.cpp` beside the program */
  ucodes?: string[];
  cacheDir?: string;
  /** flags of the C++ compiler (default: LUNA_CXXFLAGS, else -O3) */
  cxxflags?: string;
  /**
   * called once it is known that the program marks a CF `heavy` — from the program cache's entry
   * before its tree is read back, else once the front end has accepted it — and before it is
   * compiled, with its TypeScript ucode module (undefined: none): a run boots its workers, which
   * import that module, while the program compiles and its C++ ucodes load
   */
  onHeavy?: (ucodes: string | undefined) => void;
  /**
   * also type-check the TypeScript ucode modules, and each ucode against its import (`luna
   * check`; loads the TypeScript compiler, which takes a second or two)
   */
  typecheck?: boolean;
  /** the compiled-program cache's directory (front-cache.ts); undefined: none */
  programCache?: string;
}

export interface Loaded {
  file: string;
  pre?: Preprocessed;
  diagnostics: Diagnostic[];
  /** compiler-style text of the diagnostics */
  text: string;
  program?: CompiledProgram;
  bundle?: UcodeBundle;
  /** what the front end took (ms, from the cache or compiled) and what the program cache did */
  frontEnd?: { ms: number; cache: FrontCacheState };
  /** what compiling the sites took (ms) */
  compileMs?: number;
}

export async function loadProgram(file: string, opts: LoadOptions = {}): Promise<Loaded> {
  const abs = resolve(file);
  const fail = (code: string, message: string, before: Diagnostic[] = []): Loaded => {
    const ds: Diagnostic[] = [...before, { severity: 'error', code, message }];
    return { file, diagnostics: ds, text: renderDiagnostics(ds) };
  };
  if (!existsSync(abs) || !statSync(abs).isFile()) {
    const special = existsSync(abs) && !statSync(abs).isDirectory() ? notRegular(abs) : undefined;
    return fail('LUNA-P015', special ? `${file}${special.slice(abs.length)}: a program is a regular file`
      : existsSync(abs) ? `${file} is a directory, not a program file` : `program file not found: ${file}`);
  }
  const files = opts.ucodes ?? defaultUcodeFiles(abs);
  // a FIFO or a device would block the build or never end (--ucodes /dev/zero)
  const special = files.map((f) => notRegular(f)).find((x) => x !== undefined);
  if (special) return fail('LUNA-U001', `ucode file ${special}`);
  const { modules, cpp } = splitUcodeFiles(files);
  const cache = cacheDirectory(opts.cacheDir ?? resolve(process.env.LUNA_CACHE_DIR || '.luna-cache'));
  if (cache.error) return fail('LUNA-U010', cache.error);
  const cacheDir = cache.dir;
  const cacheNote: Diagnostic[] = cache.warning ? [{ severity: 'warning', code: 'LUNA-U010', message: cache.warning }] : [];
  let bundle: UcodeBundle;
  try {
    bundle = await bundleUcodes(modules, cacheDir);
  } catch (e) {
    if (e instanceof UcodeBundleError) return fail('LUNA-U001', e.message, cacheNote);
    throw e;
  }
  const missingCpp = cpp.find((f) => !existsSync(f));
  if (missingCpp) return fail('LUNA-U001', `ucode source not found: ${missingCpp}`, cacheNote);
  // The C++ sources are compiled once the imports are known; until then the names they mention
  // count as implemented (the compiler then checks each one).
  // (the C++ tool chain's modules load only for a program that has C++ sources)
  let cppBuild = cpp.length > 0 ? await import('../ucode/cpp/build.js') : undefined;
  const scans = cppBuild ? cppBuild.scanSources(cpp) : [];
  let exports = bundle.exports;
  if (cpp.length > 0) {
    exports = new Set(exports);
    for (const s of scans) for (const n of s) exports.add(n);
  }
  const sources = files;
  // No module at all: one diagnostic for the program, not one per import.
  const ucodeModuleMissing = sources.length === 0 ? join(dirname(file), 'ucodes.ts') : undefined;
  const feStart = performance.now();
  // once: from the program cache's entry before its tree is read back, or once the tree is known
  let heavySaid = false;
  const onHeavy = opts.onHeavy && ((): void => { if (!heavySaid) { heavySaid = true; opts.onHeavy!(bundle.file); } });
  const { fe, cache: feCache } = cachedFrontEnd(file, { defines: opts.defines, includePath: opts.includePath, ucodeExports: exports, ucodeModuleMissing }, opts.programCache, onHeavy);
  const frontEnd = { ms: performance.now() - feStart, cache: feCache };
  if (cacheNote.length > 0) fe.diagnostics = [...cacheNote, ...fe.diagnostics];
  if (cpp.length > 0) fe.diagnostics = fe.diagnostics.map((d) => mentionCpp(d, cpp));
  let text = renderDiagnostics(fe.diagnostics, fe.pre);
  if (!fe.program || hasErrors(fe.diagnostics)) return { file, pre: fe.pre, diagnostics: fe.diagnostics, text, bundle, frontEnd };
  if (onHeavy && marksHeavy(fe.program)) onHeavy();
  const refuse = (d: Diagnostic): Loaded => {
    const ds = [...fe.diagnostics, d];
    return { file, pre: fe.pre, diagnostics: ds, text: renderDiagnostics(ds, fe.pre), bundle };
  };
  // the compiler's sites take more heap than the tree they come from: refused before, not by V8
  const statements = countStatements(fe.program);
  const room = fits(statements * BYTES_PER_SITE);
  const main = fe.pre.files[0] ?? file;
  if (!room.ok) return refuse(tooLarge(main, `compiling its ${statements} statements needs about ${megabytes(statements * BYTES_PER_SITE)} MB`, room.left));
  // inline `C++ sub`s without a TypeScript twin are compiled from their own bodies
  const inlineNames = new Set(fe.program.items.flatMap((it) => (it.kind === 'foreign' && !bundle.exports.has(it.name) ? [it.name] : [])));
  const inline = inlineCppSource(fe.program, fe.pre, inlineNames);
  if (inline !== undefined) {
    const src = join(cacheDir, 'inline', `${createHash('sha256').update(abs).update(inline).digest('hex').slice(0, 16)}.cpp`);
    if (!existsSync(src)) { makeDirectory(dirname(src), 'ucode cache directory'); writeFileSync(src, inline); }
    cppBuild ??= await import('../ucode/cpp/build.js');
    cpp.push(src);
    scans.push(...cppBuild.scanSources([src]));
  }
  try {
    const compileStart = performance.now();
    const program = compileProgram(fe.program, (pos) => originOf(fe.pre, pos));
    const compileMs = performance.now() - compileStart;
    if (opts.typecheck && modules.length > 0) {
      const typeDs = await typecheckModules(modules, program, fe.program, (pos) => originOf(fe.pre, pos), bundle.exports);
      if (typeDs.length > 0) {
        fe.diagnostics = [...fe.diagnostics, ...typeDs];
        text = renderDiagnostics(fe.diagnostics, fe.pre);
        if (hasErrors(typeDs)) return { file, pre: fe.pre, diagnostics: fe.diagnostics, text, bundle };
      }
    }
    if (cpp.length > 0) {
      const glue = glueImports(fe.program, (pos) => originOf(fe.pre, pos));
      const implemented = (im: ImportDef): boolean => bundle.exports.has(im.symbol);
      // (cpp holds the inline subs' generated source too)
      const built = await cppBuild!.buildCppUcodes({
        sources: cpp, scans, cacheDir, cxxflags: opts.cxxflags,
        imports: program.imports.filter((im) => !implemented(im) && scans.some((s) => s.has(im.symbol))).map(glue),
        tsImports: program.imports.filter(implemented).map(glue),
      });
      if (built.diagnostics.length > 0) {
        const ds = [...fe.diagnostics, ...built.diagnostics];
        const out = { file, pre: fe.pre, diagnostics: ds, text: renderDiagnostics(ds, fe.pre) };
        if (hasErrors(ds)) return { ...out, bundle };
        return { ...out, program, bundle: { ...bundle, native: built.native }, frontEnd, compileMs };
      }
      bundle = { ...bundle, native: built.native };
    }
    return { file, pre: fe.pre, diagnostics: fe.diagnostics, text, program, bundle, frontEnd, compileMs };
  } catch (e) {
    if (e instanceof HeapExhausted) return refuse(tooLarge(main, `its ${statements} statements filled the heap while ${e.stage}`, heapLeft()));
    if (e instanceof ProgramError) return refuse({ severity: 'error', code: 'LUNA-C001', message: e.message, origin: e.origin });
    throw e;
  }
}

/** The TypeScript ucode modules type-checked against the imports they implement. */
async function typecheckModules(modules: string[], program: CompiledProgram, ast: Program, at: (pos: number) => ReturnType<typeof originOf>, exported: ReadonlySet<string>): Promise<Diagnostic[]> {
  const glue = glueImports(ast, at);
  const { typecheckUcodes } = await import('../ucode/typecheck.js');
  return typecheckUcodes(modules, program.imports.filter((im) => exported.has(im.symbol)).map((im) => {
    const g = glue(im);
    const isImport = ast.items.some((it) => it.kind === 'import' && it.alias === im.alias);
    const declared = isImport ? `import ${im.symbol}(${im.params.join(', ')}) as ${im.alias}` : `C++ sub ${im.symbol}(${im.params.join(', ')})`;
    return { symbol: im.symbol, params: im.params, origin: g.origin, declared };
  }));
}

/** The compiled imports with the position of their name in the program (for C++ diagnostics). */
function glueImports(ast: Program, at: (pos: number) => ReturnType<typeof originOf>): (im: ImportDef) => GlueImport {
  const pos = new Map<string, number>();
  for (const it of ast.items) {
    if (it.kind === 'import') pos.set(it.alias, it.codePos);
    else if (it.kind === 'foreign') pos.set(it.name, it.pos);
  }
  return (im) => {
    const p = pos.get(im.alias);
    return { alias: im.alias, symbol: im.symbol, params: im.params, origin: p === undefined ? undefined : at(p) };
  };
}

/** With C++ sources, a missing implementation may be written in either language: say so. */
function mentionCpp(d: Diagnostic, cpp: readonly string[]): Diagnostic {
  if (d.code !== 'LUNA-E015' && d.code !== 'LUNA-W004') return d;
  const where = cpp.map((f) => basename(f)).join(', ');
  return { ...d, message: d.message.replace(/export function (\w+) from the ucode module/, `export function $1 from a TypeScript ucode module or define extern "C" void $1(…) in ${where}`) };
}

/**
 * The ucode cache directory, created when missing. When it cannot be used (a read-only working
 * directory, a `.luna-cache` that is a file) the program still builds, in a directory of this
 * user's under the temporary directory, with a warning (LUNA-U010) saying why.
 */
function cacheDirectory(requested: string): { dir: string; warning?: string; error?: string } {
  const problem = unusableDirectory(requested);
  if (problem === undefined) return { dir: requested };
  const uid = process.getuid?.() ?? 0;
  const fallback = join(tmpdir(), `luna-cache-${uid}`);
  const again = unusableDirectory(fallback, uid);
  const how = 'set LUNA_CACHE_DIR to a writable directory';
  if (again !== undefined) return { dir: requested, error: `cannot use the ucode cache: ${problem}; nor ${fallback}: ${again} (${how})` };
  return { dir: fallback, warning: `cannot use the ucode cache: ${problem}; building in ${fallback} instead (${how} to choose)` };
}

/**
 * Why `dir` cannot hold cache entries, else undefined. A shared fallback must be this user's
 * own and writable by no one else: the cache holds code that runs (bundles, C++ libraries).
 */
function unusableDirectory(dir: string, owner?: number): string | undefined {
  try {
    makeDirectory(dir, 'ucode cache', owner === undefined ? 0o777 : 0o700);
    if (owner !== undefined) {
      const st = statSync(dir);
      if (st.uid !== owner || (st.mode & 0o022) !== 0) return `${dir} belongs to another user or others may write to it`;
    }
    accessSync(dir, constants.W_OK | constants.X_OK);
    return undefined;
  } catch (e) {
    return e instanceof FileError ? e.problem : `${dir}: ${reason(e)}`;
  }
}
