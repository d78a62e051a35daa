// V8's code cache for the CLI's CommonJS bundle, on Node versions that have none for ES modules
// (Node 20; Node 22+ caches the ES modules itself, module.enableCompileCache). `bin/luna` loads
// dist/bundle/main.cjs through here. Node's own cache is made when a module is compiled, so it
// holds only the code that runs at load; this one is made after a command has run, so it also
// holds every function compiled on first use: the parsers, the compiler and the runtime's
// per-fragment path, which a short program otherwise compiles inside its span
// (docs/runtime.md, "Start-up: a code cache on Node 20").
//
// The cache is an optimisation only: a missing, stale, truncated or corrupt file, a directory that
// cannot be written, or V8 refusing the data (another V8 or other flags) never fails a command.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import vm from 'node:vm';

/** The file's first bytes; the format's version is in them. */
const MAGIC = Buffer.from('LUNACC02');
/**
 * magic, SHA-256 of the payload, the number of runs that wrote it and the work (fragments) of the
 * last writer (uint32 LE each), then V8's data
 */
const HEADER = MAGIC.length + 32 + 4 + 4;
/**
 * How many runs of a command may write its cache. The first successful run writes it; a later run
 * writes it again only if it did far more work than the last writer (MORE_WORK): a write costs
 * ~7 ms of CPU and ~3 MB of peak memory (serialising ~0.7 MB) after the command has run, and
 * writing on every one of the first 3 runs of a flag set made a benchmark's first runs pay it
 * (the empty program's peak 54.3–55.8 MB reading the cache, 57.6–59.3 writing it). A cache holds
 * only what its writer compiled: written by the empty program (a start-up measurement, a test,
 * the first example a user tries), it lacks the loop's and the store's per-fragment functions,
 * and a 20 000-link chain then paid 12.4 ms more of its process's CPU (126.9 against 114.5 ms,
 * 7 of 7 alternated pairs; a 2 000-step stencil 6.7 ms, 6 of 7; docs/benchmarks.md, "The tiering
 * probe").
 */
export const CACHE_WRITES = 3;
/** A later run writes the cache again when it ran at least this many times the last writer's fragments, */
export const MORE_WORK = 4;
/** and at least this many: fewer run in the interpreter's tiers, whose compiled functions a cache hardly shortens. */
export const MIN_REWRITE_WORK = 1000;
/** Cache files kept per bundle name and command (the newest): two checkouts or two flag sets in turn keep theirs. */
export const KEPT_KEYS = 4;

/** luna's directory under Node's compile cache: NODE_COMPILE_CACHE, else the temporary directory's (the compiled-program cache lives there too). */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.NODE_COMPILE_CACHE || join(tmpdir(), 'node-compile-cache'), 'luna');
}

/** Where the cache goes (cacheRoot); undefined when turned off. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.NODE_DISABLE_COMPILE_CACHE === '1') return undefined;
  return cacheRoot(env);
}

export interface CachedScriptOptions {
  /** the cache's directory (cacheDir()); undefined: no cache, the script is compiled as usual */
  dir: string | undefined;
  /** what the process does (the command): each has its own file, holding the functions it compiled */
  tag: string;
  /** what else decides V8's code (its flags as the process set them): part of the file's key */
  flags: string;
  /** import() on behalf of the script (the bundle calls it for every dynamic import) */
  importer: (specifier: string) => Promise<unknown>;
}

export interface CachedScript {
  /** the bundle's exports */
  exports: Record<string, unknown>;
  /** what became of the cache: read and taken, refused by V8, absent (or unreadable, or corrupt), or turned off */
  state: 'used' | 'rejected' | 'none' | 'off';
  /**
   * writes the cache if this run should (never throws); call it after the command has run, with
   * the work it did (fragments run; 0 when it runs none): the first run writes, a later one only
   * if it did far more than the last writer (CACHE_WRITES, MORE_WORK, MIN_REWRITE_WORK)
   */
  save(work?: number): void;
}

const sha256 = (...parts: (string | Buffer)[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

/** V8's data from a cache file, with the number of runs that wrote it and its last writer's work; undefined if absent or damaged. */
function readCache(file: string): { data: Buffer; writes: number; work: number } | undefined {
  let b: Buffer;
  try { b = readFileSync(file); } catch { return undefined; }
  if (b.length <= HEADER || !b.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const data = b.subarray(HEADER);
  if (!sha256(data).equals(b.subarray(MAGIC.length, MAGIC.length + 32))) return undefined;
  return { data, writes: b.readUInt32LE(MAGIC.length + 32), work: b.readUInt32LE(MAGIC.length + 36) };
}

/** Writes a cache file whole or not at all (a temporary name, then a rename); other keys of the same bundle and tag go. */
function writeCache(file: string, data: Buffer, writes: number, work: number): void {
  const head = Buffer.alloc(HEADER);
  MAGIC.copy(head);
  sha256(data).copy(head, MAGIC.length);
  head.writeUInt32LE(writes, MAGIC.length + 32);
  head.writeUInt32LE(Math.min(Math.max(0, Math.floor(work)), 0xffffffff), MAGIC.length + 36);
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, Buffer.concat([head, data]));
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  // the caches of other builds of the bundle or other flags (same name and tag, other keys): the
  // newest few stay, for checkouts and builds run in turn (an A/B benchmark) do not evict each other
  const prefix = basename(file).replace(/-[0-9a-f]+\.cache$/, '-');
  const dir = dirname(file);
  const others = readdirSync(dir).filter((f) => f.startsWith(prefix) && f.endsWith('.cache'))
    .map((f) => { try { return { f, t: statSync(join(dir, f)).mtimeMs }; } catch { return { f, t: 0 }; } })
    .sort((a, b) => b.t - a.t);
  for (const { f } of others.slice(KEPT_KEYS)) rmSync(join(dir, f), { force: true });
}

/** Whether a run that did `work` writes again a cache it read (written `writes` times, last by a run that did `work`). */
export function rewrites(cached: { writes: number; work: number }, work: number): boolean {
  return cached.writes < CACHE_WRITES && work >= MIN_REWRITE_WORK && work >= MORE_WORK * cached.work;
}

/**
 * Compiles and runs a CommonJS file (strict, with require, module and exports as Node gives a
 * module) as a script, with V8's code cache of earlier runs when there is a valid one for this
 * file's content, this Node and these flags.
 */
export function loadCachedScript(file: string, o: CachedScriptOptions): CachedScript {
  const source = readFileSync(file, 'utf8');
  const key = o.dir ? sha256(source, '\0', process.version, process.arch, '\0', o.flags).toString('hex').slice(0, 16) : '';
  const cacheFile = o.dir ? join(o.dir, `${basename(file)}-${o.tag.replace(/[^\w.-]/g, '_')}-${key}.cache`) : undefined;
  const cached = cacheFile ? readCache(cacheFile) : undefined;
  const wrapped = `(function (exports, require, module, __filename, __dirname, __lunaImport) {'use strict';${source}\n})`;
  const script = new vm.Script(wrapped, { filename: file, ...(cached ? { cachedData: cached.data } : {}) });
  const state: CachedScript['state'] = !cacheFile ? 'off' : !cached ? 'none' : script.cachedDataRejected ? 'rejected' : 'used';
  const mod = { exports: {} as Record<string, unknown> };
  (script.runInThisContext() as (...a: unknown[]) => void)(mod.exports, createRequire(file), mod, file, dirname(file), o.importer);
  let saved = false;
  return {
    exports: mod.exports,
    state,
    save(work = 0) {
      if (!cacheFile || saved || (state === 'used' && !rewrites(cached!, work))) return;
      saved = true;
      try { writeCache(cacheFile, script.createCachedData(), state === 'used' ? cached!.writes + 1 : 1, work); } catch { /* the next run compiles as usual */ }
    },
  };
}
