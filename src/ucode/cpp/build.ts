// Build the C++ ucodes of a program into one shared library in the cache directory: the user's
// sources, each compiled together with its generated glue (glue.ts), linked with the system
// compiler. Like the TypeScript bundle, a library is rebuilt only when something it was built
// from changed: the sources and every header the compiler read (its -MMD dependency lists,
// ucenv.h included), the imports' kinds, the flags and the compiler. Compiler messages become
// diagnostics: at their own file:line in the user's code, or at the `import` line when the
// glue shows that a function is missing or takes other parameters than the import says.
// A unit that starts with ucenv.h is compiled against the user's precompiled ucenv.h (pch.ts)
// when there is one; the second build that finds none makes it, beside its own units.
import { intact } from '../bundle.js';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Diagnostic } from '../../lang/diagnostics.js';
import type { Origin } from '../../lang/source.js';
import { compilerVersion, cxxFlags, findCompiler, NoCompilerError, parseDepFile, runProgram, type Compiler, type RunResult } from './compiler.js';
import { expectedCppType, makeGlue, type GlueCheck, type GlueImport, type GlueUnit } from './glue.js';
import { kindsOf, type NativeUcodes } from './native.js';
import { pchOutcome, pchRoot, planPch, refusePch, startsWithUcenv, type PchState } from './pch.js';
import { namesCalledOrDeclared } from './scan.js';

/** Bumped when the way libraries are built changes: old cache entries are then ignored. */
const BUILD = 2;
/** Compiler messages kept (the first ones say what matters). */
const MAX_COMPILER_DIAGNOSTICS = 30;

export interface CppBuildOptions {
  /** absolute paths of the C++ sources */
  sources: string[];
  /** what each source mentions as `name(` (scan.ts), aligned with sources */
  scans: Set<string>[];
  /** imports the C++ library implements */
  imports: GlueImport[];
  /** imports the TypeScript module implements: an error when C++ defines them too */
  tsImports: GlueImport[];
  cacheDir: string;
  /** compiler flags (default: LUNA_CXXFLAGS, else -O3) */
  cxxflags?: string;
}

export interface CppBuild {
  native?: NativeUcodes;
  diagnostics: Diagnostic[];
}

interface CacheMeta {
  lib: string;
  aliases: string[];
  defined: string[];
  compiler: string;
  flags: string[];
  inputs: { path: string; hash: string }[];
  /** what became of the precompiled ucenv.h (for people reading the entry, and tests) */
  pch?: PchState;
}

const sha = (b: string | Uint8Array): string => createHash('sha256').update(b).digest('hex').slice(0, 16);

function fileHash(path: string): string | undefined {
  try { return sha(readFileSync(path)); } catch { return undefined; }
}

/** The directory holding ucenv.h (native/ of the package), or where it was looked for when absent (an incomplete install). */
function headerDir(): { dir: string } | { searched: string } {
  const from = dirname(fileURLToPath(import.meta.url));
  let dir = from;
  for (let i = 0; i < 7; i++) {
    if (existsSync(join(dir, 'native', 'ucenv.h'))) return { dir: join(dir, 'native') };
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return { searched: `native/ucenv.h in ${from} and up to ${dir}` };
}

/** What each C++ source mentions as `name(` (for placing glue and for the front end). */
export function scanSources(sources: readonly string[]): Set<string>[] {
  return sources.map((s) => namesCalledOrDeclared(readFileSync(s, 'utf8')));
}

function cached(metaFile: string): CacheMeta | undefined {
  let m: CacheMeta;
  try { m = JSON.parse(readFileSync(metaFile, 'utf8')) as CacheMeta; } catch { return undefined; }
  if (!m || !Array.isArray(m.inputs) || typeof m.lib !== 'string' || !intact(m.lib)) return undefined;
  for (const i of m.inputs) if (fileHash(i.path) !== i.hash) return undefined;
  return m;
}

export async function buildCppUcodes(o: CppBuildOptions): Promise<CppBuild> {
  let compiler: Compiler;
  try {
    compiler = findCompiler();
  } catch (e) {
    if (e instanceof NoCompilerError) return { diagnostics: [{ severity: 'error', code: 'LUNA-U003', message: e.message }] };
    throw e;
  }
  const flags = cxxFlags(o.cxxflags);
  const header = headerDir();
  if ('searched' in header) return { diagnostics: [{ severity: 'error', code: 'LUNA-U003', message: `luna-ts is installed without its C++ headers (no ${header.searched}), so the C++ ucodes cannot be built: reinstall luna-ts` }] };
  const include = header.dir;
  const placement = o.imports.map((imp) => Math.max(0, o.scans.findIndex((s) => s.has(imp.symbol))));
  const signature = o.imports.map((imp, i) => `${imp.alias}=${imp.symbol}(${kindsOf(imp.params)})@${placement[i]}`);
  const dir = resolve(o.cacheDir);
  const key = sha(JSON.stringify({ BUILD, sources: o.sources, signature, flags, compiler: compiler.identity, include, cxx: compiler.argv }));
  const metaFile = join(dir, `cpp-${key}.json`);
  const hit = cached(metaFile);
  if (hit) return { native: { lib: hit.lib, aliases: hit.aliases }, diagnostics: duplicates(o.tsImports, new Set(hit.defined)) };

  mkdirSync(dir, { recursive: true });
  const work = join(dir, `cpp-build-${key}-${process.pid}-${randomBytes(4).toString('hex')}`);
  mkdirSync(work);
  try {
    return await build(o, compiler, flags, include, placement, work, dir, metaFile);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function build(o: CppBuildOptions, compiler: Compiler, flags: string[], include: string, placement: number[], work: string, dir: string, metaFile: string): Promise<CppBuild> {
  const units = makeGlue(o.sources, o.imports, placement);
  const cxx = compiler.argv[0]!;
  const pre = compiler.argv.slice(1);
  const common = [...pre, '-std=gnu++17', '-fPIC', '-fdiagnostics-color=never', ...flags, '-I', include];
  const suits = units.map((u) => startsWithUcenv(readFileSync(u.source, 'utf8'), existsSync(join(dirname(u.source), 'ucenv.h'))));
  const plan = suits.some(Boolean) ? await planPch(compiler, common, include) : undefined;
  // made beside the units, which compile without it: the next build in any directory takes it
  const making = plan?.state === 'make' ? plan.make() : undefined;
  const pch = plan?.state === 'ready' ? plan.pch : undefined;
  let refused: string | undefined;
  const files = units.map((u, i) => {
    const unit = join(work, `unit-${i}.cpp`);
    writeFileSync(unit, u.text);
    return { unit, obj: join(work, `unit-${i}.o`), dep: join(work, `unit-${i}.d`) };
  });
  // compile the units, at most one per core
  const results: RunResult[] = new Array(units.length);
  let next = 0;
  const lanes = Math.max(1, Math.min(units.length, availableParallelism()));
  await Promise.all(Array.from({ length: lanes }, async () => {
    for (let i = next++; i < units.length; i = next++) {
      const f = files[i]!;
      const own = ['-MMD', '-MF', f.dep, '-c', f.unit, '-o', f.obj];
      if (pch && suits[i]) {
        const r = await runProgram(cxx, [...common, '-Winvalid-pch', '-include', pch.header, ...own], work);
        const o = pchOutcome(pch, r.code, r.stderr);
        refused ??= o.refused;
        if (!o.plain) { results[i] = { ...r, stderr: o.stderr }; continue; }
      }
      results[i] = await runProgram(cxx, [...common, ...own], work);
    }
  }));
  if (pch && refused) refusePch(pch, refused);
  const made = making ? await making : false;
  const pchState: PchState = !plan ? 'unsuitable' : plan.state === 'ready' ? (refused ? 'refused' : 'used') : plan.state === 'make' ? (made ? 'built' : 'failed') : plan.state;
  const diags = new Collector(o.imports, units, files.map((f) => f.unit), placement);
  results.forEach((r) => diags.compilerOutput(r.stderr));
  if (results.some((r) => r.code !== 0)) {
    diags.ensureError(results.map((r) => r.stderr).join('\n'));
    return { diagnostics: diags.list() };
  }
  const tmpLib = join(work, 'ucodes.so');
  const linkArgs = [...pre, '-shared', '-o', tmpLib, ...files.map((f) => f.obj), ...flags];
  // exit() and its kin in a ucode go to ucenv.h's wrappers, which report them as the call's error
  if (process.platform === 'linux') linkArgs.push('-Wl,-z,defs', '-Wl,--wrap=exit,--wrap=_exit,--wrap=_Exit,--wrap=quick_exit');
  const link = await runProgram(cxx, linkArgs, work);
  if (link.code !== 0) {
    diags.linkerOutput(link.stderr);
    diags.ensureError(link.stderr);
    return { diagnostics: diags.list() };
  }
  const defined = await definedSymbols(tmpLib);
  const dup = duplicates(o.tsImports, defined);
  const bytes = readFileSync(tmpLib);
  const lib = join(dir, `ucodes-${sha(bytes)}.so`);
  if (!intact(lib)) renameSync(tmpLib, lib);
  const deps = new Set<string>(o.sources);
  for (const f of files) {
    try { for (const p of parseDepFile(readFileSync(f.dep, 'utf8'))) deps.add(resolve(work, p)); } catch { /* no dependency file: sources only */ }
  }
  for (const f of files) deps.delete(f.unit);
  // the .gch's stand-in header is read when GCC refuses the .gch: not the program's input
  const pchDir = pchRoot();
  if (pchDir) for (const d of deps) if (d.startsWith(pchDir + '/')) deps.delete(d);
  const inputs = [...deps].flatMap((path) => { const hash = fileHash(path); return hash ? [{ path, hash }] : []; });
  const meta: CacheMeta = {
    lib, aliases: o.imports.map((i) => i.alias), defined: [...defined], compiler: `${compiler.path} (${await compilerVersion(compiler)})`, flags, inputs, pch: pchState,
  };
  // written whole then renamed: a concurrent run (several nodes, mpirun) never reads half an entry
  const tmp = `${metaFile}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(meta, null, 1));
  renameSync(tmp, metaFile);
  return { native: { lib, aliases: meta.aliases }, diagnostics: [...diags.list(), ...dup] };
}

/** The dynamic symbols the library defines (extern "C" functions appear by their names). */
async function definedSymbols(lib: string): Promise<Set<string>> {
  const r = await runProgram(process.env.NM?.trim() || 'nm', ['-D', '--defined-only', '-P', lib]);
  const out = new Set<string>();
  if (r.code !== 0) return out; // no nm: the duplicate check is skipped
  for (const line of r.stdout.split('\n')) {
    const name = line.split(' ')[0];
    if (name) out.add(name);
  }
  return out;
}

function duplicates(tsImports: readonly GlueImport[], defined: ReadonlySet<string>): Diagnostic[] {
  return tsImports.filter((imp) => defined.has(imp.symbol)).map((imp) => ({
    severity: 'error' as const, code: 'LUNA-U007', origin: imp.origin,
    message: `${imp.symbol} is implemented twice: exported by the TypeScript ucode module and defined in the C++ ucodes (keep one)`,
  }));
}

/** A path as messages show it: relative to the working directory when inside it. */
function shown(file: string): string {
  const r = relative(process.cwd(), file);
  return r && !r.startsWith('..') && !isAbsolute(r) ? r : file;
}

const MESSAGE = /^(.+?):(\d+):(?:(\d+):)? (fatal error|error|warning): (.*)$/;
const TOOL_MESSAGE = /^([^:\s]+): (fatal error|error): (.*)$/;
const UNDEFINED = /undefined reference to [`'‘]([^'’`]+)['’]/;

/** Compiler and linker output → diagnostics, deduplicated, the glue's mapped to imports. */
class Collector {
  private readonly out: Diagnostic[] = [];
  private readonly seen = new Set<string>();
  private readonly importsReported = new Set<number>();
  private omitted = 0;

  constructor(
    private readonly imports: readonly GlueImport[], private readonly units: readonly GlueUnit[], private readonly unitFiles: readonly string[],
    private readonly placement: readonly number[],
  ) {}

  private push(d: Diagnostic): void {
    const k = `${d.origin?.file}:${d.origin?.line}:${d.origin?.col}:${d.message}`;
    if (this.seen.has(k)) return;
    this.seen.add(k);
    if (this.out.length >= MAX_COMPILER_DIAGNOSTICS) { this.omitted++; return; }
    this.out.push(d);
  }

  compilerOutput(text: string): void {
    for (const line of text.split('\n')) {
      const m = MESSAGE.exec(line);
      if (!m) {
        const t = TOOL_MESSAGE.exec(line);
        if (t) this.push({ severity: 'error', code: 'LUNA-U002', message: `${t[1]}: ${t[3]}` });
        continue;
      }
      const [, file, ln, col, sev, msg] = m as unknown as [string, string, string, string | undefined, string, string];
      const unit = this.unitFiles.indexOf(file);
      if (unit >= 0) {
        const check = this.units[unit]!.lines.get(Number(ln));
        if (check && sev !== 'warning') this.glueError(check, msg);
        else if (sev !== 'warning') this.push({ severity: 'error', code: 'LUNA-U002', message: msg });
        continue;
      }
      const origin: Origin = { file: shown(file), line: Number(ln), col: Number(col ?? 1) };
      this.push({ severity: sev === 'warning' ? 'warning' : 'error', code: 'LUNA-U002', message: msg, origin });
    }
  }

  linkerOutput(text: string): void {
    for (const line of text.split('\n')) {
      const u = UNDEFINED.exec(line);
      if (u) {
        const k = this.imports.findIndex((i) => i.symbol === u[1]);
        if (k >= 0) {
          if (this.importsReported.has(k)) continue;
          this.importsReported.add(k);
          const imp = this.imports[k]!;
          this.push({ severity: 'error', code: 'LUNA-U006', origin: imp.origin, message: `${imp.symbol} is declared in the C++ ucodes but defined nowhere (undefined reference when linking)` });
        } else this.push({ severity: 'error', code: 'LUNA-U002', message: `linking the C++ ucodes: undefined reference to ${u[1]}` });
      } else if (/error|cannot find/i.test(line) && !/collect2: error: ld returned/.test(line)) {
        this.push({ severity: 'error', code: 'LUNA-U002', message: `linking the C++ ucodes: ${line.trim()}` });
      }
    }
  }

  /** The tool failed without a message we understood: show its own words. */
  ensureError(raw: string): void {
    if (this.out.some((d) => d.severity === 'error') || this.omitted > 0) return;
    const text = raw.trim().split('\n').slice(0, 20).join('\n');
    this.push({ severity: 'error', code: 'LUNA-U002', message: `the C++ compiler failed${text ? `:\n${text}` : ''}` });
  }

  list(): Diagnostic[] {
    if (this.omitted === 0) return this.out;
    return [...this.out, { severity: 'error', code: 'LUNA-U002', message: `${this.omitted} more messages of the C++ compiler not shown` }];
  }

  private glueError(check: GlueCheck, compilerMessage: string): void {
    if (this.importsReported.has(check.imp)) return; // the first problem of an import says it
    this.importsReported.add(check.imp);
    const imp = this.imports[check.imp]!;
    const source = basename(this.units[this.placement[check.imp]!]!.source);
    const wanted = `extern "C" void ${imp.symbol}(${imp.params.map((p) => expectedCppType(p)).join(', ')})`;
    let message: string;
    let code = 'LUNA-U005';
    switch (check.what) {
      case 'declared':
        code = 'LUNA-U004';
        message = `no C++ function ${imp.symbol} is declared in ${source}: define ${wanted} (the compiler says: ${compilerMessage})`;
        break;
      case 'arity':
        message = `the C++ function ${imp.symbol} must take ${imp.params.length} parameter${imp.params.length === 1 ? '' : 's'}, as the import says: ${wanted}`;
        break;
      case 'param':
        message = `parameter ${check.param + 1} of ${imp.symbol} is \`${imp.params[check.param]}\` in the import, so its C++ type must be ${expectedCppType(imp.params[check.param]!, true)}: ${wanted}`;
        break;
      default:
        message = `the C++ function ${imp.symbol} cannot be called as its import says (${wanted}): ${compilerMessage}`;
    }
    this.push({ severity: 'error', code, origin: imp.origin, message });
  }
}
