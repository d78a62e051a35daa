// `luna check`: the TypeScript ucode modules type-checked, and each ucode checked against the
// signature its import implies, with the TypeScript compiler (loaded only here: `luna run`
// never pays for it).
//
// A checker module is generated in memory: for each import it assigns the ucode to an object
// type whose method has the import's parameters (int, real → number, string → string,
// value → DfReader, name → DfWriter; src/ucode/df.ts). Method parameters are compared both ways
// (TypeScript's method bivariance), so a ucode declared with the DF class of any copy of
// luna-ts fits, while a number where a DF comes, a DF where a number comes, or an input used as
// an output does not. The checker module and the ucode sources are compiled together with
// strict options through an in-memory compiler host: nothing is written anywhere.
import { existsSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as TS from 'typescript';
import type { ParamType } from '../core/imports.js';
import type { Diagnostic } from '../lang/diagnostics.js';
import type { Origin } from '../lang/source.js';

/** One import of the program that a TypeScript ucode implements. */
export interface UcodeSignature {
  /** the exported function */
  symbol: string;
  params: readonly ParamType[];
  /** the import's code name in the program (or the C++ sub's name) */
  origin?: Origin;
  /** how the program declares it, for messages: `import c_f(int, value) as f` */
  declared: string;
}

/** LUNA-U008: a ucode whose type does not fit its import; LUNA-U009: a type error in a ucode module. */
export const MISMATCH = 'LUNA-U008';
export const TYPE_ERROR = 'LUNA-U009';

/** Diagnostics kept per ucode file. */
const MAX_PER_FILE = 50;

const HERE = dirname(fileURLToPath(import.meta.url));
/** The package root (this file is src/ucode/ or dist/src/ucode/ under it). */
const ROOT = [resolve(HERE, '..', '..'), resolve(HERE, '..', '..', '..')].find((d) => existsSync(join(d, 'package.json'))) ?? resolve(HERE, '..', '..');
/**
 * This module's own directory of the package: beside it when run from the sources or the
 * compiled modules, dist/src/ucode/ when it was bundled (dist/bundle/, see scripts/bundle.mjs).
 */
const OWN = existsSync(join(HERE, 'df.ts')) || existsSync(join(HERE, 'df.js')) ? HERE : join(ROOT, 'dist', 'src', 'ucode');
/** DfReader/DfWriter: df.js of OWN (its .d.ts, or df.ts when run from the sources). */
const DF_MODULE = join(OWN, 'df.js');

// a block's view is the layer's own object: any object type fits, a number or string does not
const TS_TYPE: Record<ParamType, string> = { int: 'number', real: 'number', string: 'string', value: '__LunaValue', name: '__LunaName', block: 'object' };

/** The first pass's globals beside the ES library: console, as Node declares its common methods. */
const GLOBALS = `declare var console: {
  log(...data: any[]): void; error(...data: any[]): void; warn(...data: any[]): void;
  info(...data: any[]): void; debug(...data: any[]): void;
};
`;

/** Node's globals a ucode may name without an import. */
const NODE_GLOBALS = new Set(['process', 'Buffer', 'require', '__dirname', '__filename', 'NodeJS', 'setImmediate', 'clearImmediate', 'global']);
const isNodeModule = (spec: string): boolean => spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0]!);

/** Parsed declaration files, shared by the checks of one process (`luna check` of several programs, the tests). */
const declarations = new Map<string, TS.SourceFile>();

/** Type-check `modules` (absolute paths of the TypeScript/JavaScript ucode modules) and `signatures`. */
export async function typecheckUcodes(modules: readonly string[], signatures: readonly UcodeSignature[]): Promise<Diagnostic[]> {
  if (modules.length === 0) return [];
  const ts = (await import('typescript')).default;
  const base = dirname(modules[0]!);
  // virtual files beside the first module (never written): one namespace of all modules, and the checks
  const entryFile = join(base, '__luna_ucodes__.ts');
  const checkFile = join(base, '__luna_check__.ts');
  const entry = modules.map((m) => `export * from ${JSON.stringify(m)};`).join('\n') + '\n';
  const head = [
    `import type { DfReader as __LunaValue, DfWriter as __LunaName } from ${JSON.stringify(DF_MODULE)};`,
    `import * as __luna from ${JSON.stringify(entryFile)};`,
  ];
  // one line per import: a diagnostic on line head.length + i belongs to signatures[i]
  const checks = signatures.map((s, i) => {
    const params = s.params.map((p, j) => `${p}_${j + 1}: ${TS_TYPE[p]}`).join(', ');
    return `export const __luna_${i}: { ${s.symbol}(${params}): unknown } = { ${s.symbol}: __luna.${s.symbol} };`;
  });
  const virtual = new Map([[entryFile, entry], [checkFile, [...head, ...checks].join('\n') + '\n']]);

  // Node's declarations (@types/node) are ~2 MB: parsing and binding them was ~2.2 s of hello's
  // ~4 s check. Most ucodes use no Node API but console, so a first pass reads only the ES
  // library and a console. It stands only when no ucode file names a Node module or global and
  // it finds nothing; otherwise the check is made again with Node's types, and only that pass's
  // diagnostics are reported, so no finding depends on the first pass. The ucode files are
  // parsed once for both.
  const globalsFile = join(base, '__luna_globals__.d.ts');
  virtual.set(globalsFile, GLOBALS);
  const parsed = new Map<string, TS.SourceFile>();
  const roots = typeRoots(base);
  const nodeTypes = roots.some((d) => existsSync(join(d, 'node', 'package.json')));
  let checker: TS.TypeChecker;
  if (nodeTypes) {
    const quick = build(false);
    if (!usesNode(quick)) {
      const found = diagnose(quick);
      if (found.length === 0) return found;
    }
  }
  return diagnose(build(true));

  function build(withNode: boolean): TS.Program {
    const options = compilerOptions(ts, roots, withNode && nodeTypes);
    const host = ts.createCompilerHost(options, true);
    const { fileExists, readFile, getSourceFile } = host;
    host.fileExists = (f) => virtual.has(resolve(f)) || fileExists.call(host, f);
    host.readFile = (f) => virtual.get(resolve(f)) ?? readFile.call(host, f);
    host.getSourceFile = (f, lang, onError, create) => {
      const text = virtual.get(resolve(f));
      if (text !== undefined) return ts.createSourceFile(f, text, lang, true);
      // installed declaration files (TypeScript's libs, @types/node, luna's DF types) do not change
      // within a process: one parse serves every check of it, as a language service's document
      // registry shares them (luna check of the examples in one process: ~0.9 → ~0.4 s each);
      // the other files do not change within one check
      const installed = f.endsWith('.d.ts') && (f.includes('/node_modules/') || resolve(f).startsWith(OWN));
      const cache = installed ? declarations : parsed;
      const key = `${f}\0${typeof lang === 'object' ? JSON.stringify(lang) : lang}`;
      let sf = cache.get(key);
      if (sf === undefined) {
        sf = getSourceFile.call(host, f, lang, onError, create);
        if (sf !== undefined) cache.set(key, sf);
      }
      return sf;
    };
    host.writeFile = () => {};
    return ts.createProgram({ rootNames: withNode ? [checkFile] : [checkFile, globalsFile], options, host });
  }

  /** Whether a ucode file imports a Node module or names one of Node's globals (by name: a local of that name counts too). */
  function usesNode(program: TS.Program): boolean {
    const visit = (n: TS.Node): boolean => {
      if (ts.isIdentifier(n) && NODE_GLOBALS.has(n.text)) return true;
      if (ts.isStringLiteral(n) && isNodeModule(n.text) && n.parent !== undefined
        && (ts.isImportDeclaration(n.parent) || ts.isExportDeclaration(n.parent) || ts.isCallExpression(n.parent) || ts.isExternalModuleReference(n.parent) || ts.isImportTypeNode(n.parent.parent))) return true;
      return ts.forEachChild(n, visit) ?? false;
    };
    return program.getSourceFiles().some((sf) => isUserFile(resolve(sf.fileName), sf) && visit(sf));
  }

  function diagnose(program: TS.Program): Diagnostic[] {
    const out: Diagnostic[] = [];
    const mismatches: Diagnostic[] = [];
    checker = program.getTypeChecker();
    for (const d of [...program.getSyntacticDiagnostics(), ...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()]) out.push(...own(d));
    for (const sf of program.getSourceFiles()) {
      const file = resolve(sf.fileName);
      if (file === checkFile) {
        for (const d of program.getSemanticDiagnostics(sf)) mismatches.push(mismatch(d, sf));
      } else if (file === entryFile || isUserFile(file, sf)) {
        let n = 0;
        for (const d of program.getSemanticDiagnostics(sf)) if (n++ < MAX_PER_FILE) out.push(...own(d));
      }
    }
    return [...mismatches, ...out];
  }

  /** A diagnostic in a ucode file, at its position. */
  function own(d: TS.Diagnostic): Diagnostic[] {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n  ');
    if (!d.file || d.start === undefined) return [{ severity: 'error', code: TYPE_ERROR, message: `TypeScript: ${message}` }];
    const file = resolve(d.file.fileName);
    if (file === entryFile) return [{ severity: 'error', code: TYPE_ERROR, message: `the ucode modules ${modules.map(shown).join(', ')} together: ${message}` }];
    if (!isUserFile(file, d.file)) return [];
    return [{ severity: d.category === ts.DiagnosticCategory.Warning ? 'warning' : 'error', code: TYPE_ERROR, message, origin: at(d.file, d.start) }];
  }

  /** A diagnostic of the generated checks: the import it belongs to, and the ucode as declared. */
  function mismatch(d: TS.Diagnostic, sf: TS.SourceFile): Diagnostic {
    const line = d.start === undefined ? -1 : sf.getLineAndCharacterOfPosition(d.start).line - head.length;
    const s = signatures[line];
    const chain = ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n').map((l) => l.trim().replace(/\.$/, ''));
    if (!s) return { severity: 'error', code: MISMATCH, message: chain.join(': ') };
    // the first line restates both function types; the rest says which parameter does not fit and why
    // the generated parameter names (`int_1`) mean nothing to the user: say which parameter of the import
    let why = (chain.length > 1 ? chain.slice(1) : chain).join(': ')
      .replace(/'(int|real|string|value|name)_(\d+)'/g, (_, type: string, n: string) => `parameter ${n} (${type}) of the import`);
    if (/\bDfReader\b/.test(why)) why += ' (a value parameter is an input: it can be read, not set)';
    const decl = declarationOf(sf, line + head.length);
    const message = `ucode ${s.symbol}${decl ?? ''} does not fit \`${s.declared}\`: ${why}`;
    return { severity: 'error', code: MISMATCH, message, ...(s.origin ? { origin: s.origin } : {}) };
  }

  /** ` at ucodes.ts:3:17, (v: DF) => void,`: the place and type of the export the check on `line` reads. */
  function declarationOf(sf: TS.SourceFile, line: number): string | undefined {
    const stmt = sf.statements.find((st) => sf.getLineAndCharacterOfPosition(st.getStart(sf)).line === line);
    if (!stmt || !ts.isVariableStatement(stmt)) return undefined;
    const init = stmt.declarationList.declarations[0]?.initializer;
    if (!init || !ts.isObjectLiteralExpression(init)) return undefined;
    const prop = init.properties[0];
    if (!prop || !ts.isPropertyAssignment(prop)) return undefined;
    let sym = checker.getSymbolAtLocation(prop.initializer);
    if (sym && sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
    const decl = sym?.declarations?.[0];
    if (!decl) return undefined;
    const type = checker.typeToString(checker.getTypeAtLocation(prop.initializer));
    const where = at(decl.getSourceFile(), (ts.getNameOfDeclaration(decl) ?? decl).getStart());
    return ` at ${where.file}:${where.line}:${where.col}, ${type},`;
  }

  function at(file: TS.SourceFile, pos: number): Origin {
    const lc = file.getLineAndCharacterOfPosition(pos);
    return { file: shown(file.fileName), line: lc.line + 1, col: lc.character + 1 };
  }

  /** The user's own sources: not declarations, not installed packages, not luna-ts's own sources. */
  function isUserFile(file: string, sf: TS.SourceFile): boolean {
    if (sf.isDeclarationFile || file.includes(`${'/'}node_modules${'/'}`) || virtual.has(file)) return false;
    return !file.startsWith(join(ROOT, 'src') + '/') && !file.startsWith(join(ROOT, 'dist') + '/');
  }
}

/** A path as messages show it: relative to the working directory when it is inside it. */
function shown(file: string): string {
  const r = relative(process.cwd(), file);
  return r.startsWith('..') || r === '' ? file : r;
}

/**
 * Strict, like the project's own code; resolution like the bundler that builds the ucodes
 * (esbuild), so whatever bundles also resolves here; `luna-ts` and `luna-ts/ucode` are this
 * copy of luna-ts wherever the ucodes live; Node's types from the user's project or ours.
 */
function compilerOptions(ts: typeof TS.default, roots: string[], nodeTypes: boolean): TS.CompilerOptions {
  return {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    allowImportingTsExtensions: true,
    resolveJsonModule: true,
    allowJs: true,
    checkJs: false,
    skipLibCheck: true,
    esModuleInterop: true,
    lib: ['lib.es2022.d.ts'],
    typeRoots: roots,
    types: nodeTypes ? ['node'] : [],
    paths: {
      // without an extension: df.ts or df.d.ts, whose type aliases (DfReader, DfWriter) the
      // compiled df.js does not declare
      'luna-ts/ucode': [join(OWN, 'api')],
      'luna-ts': [join(OWN, '..', 'index')],
    },
  };
}

/** Where Node's declarations may come from: the ucodes' project, then ours. */
function typeRoots(base: string): string[] {
  return [...ancestors(base).map((d) => join(d, 'node_modules', '@types')), join(ROOT, 'node_modules', '@types')].filter((d) => existsSync(d));
}

function ancestors(dir: string): string[] {
  const out: string[] = [];
  for (let d = resolve(dir); ; d = dirname(d)) {
    out.push(d);
    if (dirname(d) === d) return out;
  }
}
