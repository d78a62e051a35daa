// Bundle the program's TypeScript ucode modules with esbuild into a cache file that every
// worker thread (and the system thread) imports: no TypeScript loader at run time. A bundle is
// rebuilt only when one of its input files changed (their contents are hashed), so a run of an
// unchanged program does not even load esbuild.
import type { NativeUcodes } from './cpp/native.js';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Message } from 'esbuild';
import { restoreConsts, topLevelConsts } from './constants.js';

export interface UcodeBundle {
  /** absolute path of the bundled ESM file (undefined when the program has no ucode module) */
  file?: string;
  /** names exported by the ucode modules */
  exports: Set<string>;
  /** the source modules bundled */
  sources: string[];
  /** the imports implemented by the program's compiled C++ ucodes (src/ucode/cpp) */
  native?: NativeUcodes;
}

export class UcodeBundleError extends Error {}

/** What a cache entry remembers of the build that made it. */
interface CacheMeta {
  file: string;
  exports: string[];
  /** every input file of the bundle (imports included) with the hash of its contents */
  inputs: { path: string; hash: string }[];
}

/** Bumped when the way bundles are built changes: old cache entries are then ignored. */
const BUILD = 3;

/** Default: `ucodes.ts` beside the program, when it exists. */
export function defaultUcodeSources(programFile: string): string[] {
  const f = join(dirname(resolve(programFile)), 'ucodes.ts');
  return existsSync(f) ? [f] : [];
}

const sha = (b: string | Uint8Array): string => createHash('sha256').update(b).digest('hex').slice(0, 16);

function fileHash(path: string): string | undefined {
  try { return sha(readFileSync(path)); } catch { return undefined; }
}

/**
 * Whether a cached output named by the hash of its contents (`ucodes-<hash>.mjs`, `.so`) still
 * holds them: a damaged entry is rebuilt, not loaded.
 */
export function intact(file: string): boolean {
  const m = /-([0-9a-f]{16})\.[a-z]+$/.exec(file);
  return m !== null && fileHash(file) === m[1];
}

/** Write a cache output whole (temp file + rename): a concurrent run never reads half of it. */
export function writeWhole(file: string, data: string | Uint8Array): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, file);
}

/** A cache entry whose inputs are all unchanged, if there is one. */
function cached(metaFile: string): CacheMeta | undefined {
  let m: CacheMeta;
  try { m = JSON.parse(readFileSync(metaFile, 'utf8')) as CacheMeta; } catch { return undefined; }
  if (!m || !Array.isArray(m.inputs) || typeof m.file !== 'string' || !intact(m.file)) return undefined;
  for (const i of m.inputs) if (fileHash(i.path) !== i.hash) return undefined;
  return m;
}

export async function bundleUcodes(sources: string[], cacheDir: string): Promise<UcodeBundle> {
  if (sources.length === 0) return { exports: new Set(), sources };
  for (const s of sources) if (!existsSync(s)) throw new UcodeBundleError(`ucode module not found: ${s}`);
  const abs = sources.map((s) => resolve(s));
  const dir = resolve(cacheDir);
  const metaFile = join(dir, `bundle-${sha(JSON.stringify({ BUILD, abs, cwd: process.cwd() }))}.json`);
  const hit = cached(metaFile);
  if (hit) return { file: hit.file, exports: new Set(hit.exports), sources };

  // One virtual entry re-exporting every module, so several files form one namespace.
  const entry = abs.map((s) => `export * from ${JSON.stringify(s)};`).join('\n');
  const { build } = await import('esbuild');
  let result;
  try {
    result = await build({
      stdin: { contents: entry, resolveDir: process.cwd(), loader: 'ts', sourcefile: 'luna-ucodes-entry.ts' },
      bundle: true, format: 'esm', platform: 'node', target: 'node20', write: false,
      metafile: true, logLevel: 'silent', sourcemap: 'inline', outfile: join(dir, 'ucodes.mjs'), // source paths relative to the cache dir
    });
  } catch (e) {
    const errors = (e as { errors?: Message[] }).errors ?? [];
    const text = errors.map((m) => m.location ? `${m.location.file}:${m.location.line}:${m.location.column + 1}: ${m.text}` : m.text).join('\n');
    throw new UcodeBundleError(`cannot build the ucode module:\n${text || String(e)}`);
  }
  const outMeta = Object.values(result.metafile.outputs)[0];
  const inputFiles = Object.keys(result.metafile.inputs).map((p) => resolve(process.cwd(), p)).filter((p) => existsSync(p));
  const code = await restoreConsts(result.outputFiles[0]!.text, topLevelConsts(inputFiles));
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `ucodes-${sha(code)}.mjs`);
  if (!intact(file)) writeWhole(file, code);
  const inputs = inputFiles.map((path) => ({ path, hash: fileHash(path)! }));
  const meta: CacheMeta = { file, exports: outMeta?.exports ?? [], inputs };
  writeWhole(metaFile, JSON.stringify(meta));
  return { file, exports: new Set(meta.exports), sources };
}
