// The compiled-program cache: the front end's result (the checked, let-free tree, the
// preprocessed text with its position maps, the diagnostics) kept on disk, so that running a
// program again does not preprocess, parse and check it again. The PIC's front end (100 KB
// after the macros) takes ~120 ms in a fresh `luna run` (its code from bin/luna's code cache),
// reading its entry back ~31 ms (docs/benchmarks.md, "A compiled-program cache"). What the compiler makes of the tree is
// closures, which cannot be stored, so the sites are compiled on every run.
//
// An entry is found by what decides the front end's output besides the sources: luna's build,
// the program's path as given and the working directory (diagnostics name files as given;
// includes resolve from there), -D, the include path, the ucode names the checks know. It
// holds every path the preprocessor tried to read (the program, each include, each place an
// include was looked for and not found) with what it found there, by hash: an entry whose
// sources read otherwise now is stale, and is compiled and written again. Only a program
// without errors is kept; its warnings are kept and replayed.
//
// The cache is an optimisation only: a missing, stale, truncated or corrupt entry, or a
// directory that cannot be used, never fails a command nor changes what it prints.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileError, readRegular } from '../core/files.js';
import { version } from '../core/version.js';
import { compileFrontEnd, type FrontEndOptions, type FrontEndResult } from '../lang/index.js';
import { hasErrors } from '../lang/diagnostics.js';
import { fits } from '../lang/heap.js';
import { BYTES_PER_CHAR } from '../lang/parser.js';
import { FRONT_END_MODULE, restoredFrontEnd, storedFrontEnd, type StoredFrontEnd } from '../lang/stored.js';
import { marksHeavy } from './compile.js';

/**
 * An entry: these bytes (the format's version is in them), the header's length (uint32 LE), the
 * header (JSON: the key, what each path held, whether the program marks a CF `heavy`), SHA-256 of
 * header and payload, the payload (JSON of the stored front end).
 */
const MAGIC = Buffer.from('LUNAFE03');
const ENTRY = '.fe';
/**
 * Entries kept (the most recently used), and the bytes they may take together: more programs
 * than one works on at a time (each -D set is an entry of its own), at most 16 of the PIC's
 * size (its entry is 1.8 MB, 45 k tree objects; hello's is 5 KB).
 */
export const KEPT_PROGRAMS = 16;
export const KEPT_BYTES = 32 * 2 ** 20;

/** What the cache did for a front end: found a valid entry, none, one for other sources, a damaged one; turned off; its directory unusable. */
export type FrontCacheState = 'hit' | 'miss' | 'stale' | 'corrupt' | 'off' | 'unusable';

/** An entry's checksum: of its header (key and sources) and its payload. */
const checksum = (head: Buffer, payload: Buffer): Buffer => createHash('sha256').update(head).update(payload).digest();

/** What a path held when the preprocessor read it: its text's hash; REFUSED (a FIFO, a directory…); null when absent or unreadable. */
type Found = string | null;
const REFUSED = 'refused';

const sha256 = (s: string | Buffer): Buffer => createHash('sha256').update(s).digest();

/** What the preprocessor finds at `path` now, as its reader would (a FIFO or a device is not opened for reading). */
function found(path: string): Found {
  try { return sha256(readRegular(path, 'source file')).toString('hex'); } catch (e) { return e instanceof FileError ? REFUSED : null; }
}

let stamp: string | undefined;

/**
 * luna's build: its version, and the size, time and inode of the files holding this module and
 * the front end's (a bundle, or tsc's output: each build writes all of its files again), so
 * that a rebuilt luna never reads a tree an older one stored. Two stat calls: hashing ~65
 * files' stats instead took ~4 ms of a 3 ms front end (hello's).
 */
function buildStamp(): string {
  if (stamp !== undefined) return stamp;
  const h = createHash('sha256').update(version()).update('\0').update(process.version);
  for (const url of [import.meta.url, FRONT_END_MODULE]) {
    const file = fileURLToPath(url);
    try { const st = statSync(file); h.update(`\0${file}\0${st.size}\0${st.mtimeMs}\0${st.ino}`); } catch { h.update(`\0${file}`); }
  }
  return (stamp = h.digest('hex'));
}

/** The entry's name: everything but the sources that decides the front end's output. */
function entryKey(file: string, o: FrontEndOptions): string {
  const defines = Object.entries(o.defines ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const exports = o.ucodeExports ? [...o.ucodeExports].sort() : null;
  return sha256(JSON.stringify([buildStamp(), process.cwd(), file, resolve(file), defines, o.includePath ?? null, exports, o.ucodeModuleMissing ?? null]))
    .toString('hex').slice(0, 32);
}

/** `dir` made (this user's, private) and checked: the entries are programs that will run. */
function usable(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = statSync(dir);
    const uid = process.getuid?.();
    return st.isDirectory() && (uid === undefined || st.uid === uid) && (st.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/** An entry's parts: the key it was written for, what each path held, whether its program marks a CF heavy, the stored front end. */
function readEntry(file: string, key: string): { deps: [string, Found][]; heavy: boolean; payload: Buffer } | 'none' | 'corrupt' {
  let b: Buffer;
  try { b = readFileSync(file); } catch { return 'none'; }
  try {
    if (b.length < MAGIC.length + 4 || !b.subarray(0, MAGIC.length).equals(MAGIC)) return 'corrupt';
    const n = b.readUInt32LE(MAGIC.length);
    const at = MAGIC.length + 4 + n;
    if (at + 32 > b.length) return 'corrupt';
    const headBytes = b.subarray(MAGIC.length + 4, at);
    const payload = b.subarray(at + 32);
    if (!checksum(headBytes, payload).equals(b.subarray(at, at + 32))) return 'corrupt';
    const head = JSON.parse(headBytes.toString('utf8')) as { key: string; deps: [string, Found][]; heavy?: boolean };
    const dep = (d: unknown): boolean => Array.isArray(d) && d.length === 2 && typeof d[0] === 'string' && (typeof d[1] === 'string' || d[1] === null);
    if (head.key !== key || !Array.isArray(head.deps) || !head.deps.every(dep)) return 'corrupt';
    return { deps: head.deps, heavy: head.heavy === true, payload };
  } catch {
    return 'corrupt';
  }
}

/**
 * A null in the JSON of a stored front end, which has none of its own: JSON wrote a number that
 * is not finite (a real literal past the largest double) or undefined in an array as null, and
 * the tree would not come back as it was, so it is not kept. (A string that holds such text is
 * not kept either: a needless miss, never a wrong tree. Numbers come back exact: the literals
 * are read from digits, never -0, and nothing folds them.) A replacer that checks each value
 * instead made the PIC's write ~15–20 ms longer; this test takes ~5 ms.
 */
const NOT_KEPT = /[:,[]null[,\]}]/;

/** Writes an entry whole or not at all (a temporary name, then a rename), then drops the least recently used past the bounds. */
function writeEntry(dir: string, file: string, key: string, deps: Map<string, Found>, stored: StoredFrontEnd, heavy: boolean): void {
  const head = Buffer.from(JSON.stringify({ key, deps: [...deps], heavy }), 'utf8');
  let json: string;
  // a tree deeper than JSON recurses (a flat chain of thousands of operators) is not kept
  try { json = JSON.stringify(stored); } catch { return; }
  if (NOT_KEPT.test(json)) return;
  const payload = Buffer.from(json, 'utf8');
  const n = Buffer.alloc(MAGIC.length + 4);
  MAGIC.copy(n);
  n.writeUInt32LE(head.length, MAGIC.length);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, Buffer.concat([n, head, checksum(head, payload), payload]), { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    rmSync(tmp, { force: true });
    return;
  }
  prune(dir);
}

/** Keeps the most recently used entries within KEPT_PROGRAMS and KEPT_BYTES. */
export function prune(dir: string): void {
  let names: string[];
  try { names = readdirSync(dir).filter((f) => f.endsWith(ENTRY)); } catch { return; }
  const entries = names.map((f) => { try { const st = statSync(join(dir, f)); return { f, t: st.mtimeMs, size: st.size }; } catch { return { f, t: 0, size: 0 }; } })
    .sort((a, b) => b.t - a.t);
  let bytes = 0;
  entries.forEach(({ f, size }, i) => {
    bytes += size;
    if (i >= KEPT_PROGRAMS || (i > 0 && bytes > KEPT_BYTES)) rmSync(join(dir, f), { force: true });
  });
}

/**
 * The front end of `file` (compileFrontEnd), from the cache in `dir` when it holds a valid entry
 * for these sources and options, else compiled and, without errors, stored there. `dir`
 * undefined: compiled, nothing stored. `onHeavy`: called when a valid entry says the program
 * marks a CF `heavy`, before its tree is read back (~30 ms of the PIC's start; a run boots its
 * workers then); not on a miss, whose caller sees the tree.
 */
export function cachedFrontEnd(file: string, o: FrontEndOptions, dir: string | undefined, onHeavy?: () => void): { fe: FrontEndResult; cache: FrontCacheState } {
  if (dir === undefined || o.source !== undefined) return { fe: compileFrontEnd(file, o), cache: 'off' };
  if (!usable(dir)) return { fe: compileFrontEnd(file, o), cache: 'unusable' };
  const key = entryKey(file, o);
  const path = join(dir, key + ENTRY);
  const entry = readEntry(path, key);
  let cache: FrontCacheState = entry === 'none' ? 'miss' : entry === 'corrupt' ? 'corrupt' : 'stale';
  if (typeof entry === 'object' && entry.deps.every(([p, h]) => found(p) === h)) {
    if (entry.heavy) onHeavy?.();
    try {
      const r = restoredFrontEnd(JSON.parse(entry.payload.toString('utf8')) as StoredFrontEnd);
      // a tree the front end stored with more heap than this process has is compiled, and refused, as the front end refuses it
      if (fits(r.pre.text.length * BYTES_PER_CHAR).ok) {
        try { const now = new Date(); utimesSync(path, now, now); } catch { /* kept by age, not use */ }
        return { fe: { pre: r.pre, program: r.program, diagnostics: r.diagnostics }, cache: 'hit' };
      }
      cache = 'miss';
    } catch {
      cache = 'corrupt';
    }
  }
  const deps = new Map<string, Found>();
  const readFile = (p: string): string => {
    try {
      const text = readRegular(p, 'source file');
      deps.set(p, sha256(text).toString('hex'));
      return text;
    } catch (e) {
      deps.set(p, e instanceof FileError ? REFUSED : null);
      throw e;
    }
  };
  const fe = compileFrontEnd(file, { ...o, readFile });
  if (fe.program && !hasErrors(fe.diagnostics)) writeEntry(dir, path, key, deps, storedFrontEnd(fe.pre, fe.program, fe.diagnostics), marksHeavy(fe.program));
  return { fe, cache };
}
