// Opening what a user names: only regular files and directories. A FIFO blocks a reader (and a
// writer) until someone opens its other end, a device like /dev/zero never ends, and a
// recursive mkdir under /proc loops forever (procfs answers ENOENT for a parent that exists):
// each is refused with a message that names the path and what it is.
import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, statSync, type Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** A path that is not what the command needs, or that the system refused; `message` says which and why. */
export class FileError extends Error {
  /** set so that callers treating errno errors as messages (exit 1) treat this one alike */
  readonly code = 'ELUNAFILE';
  /** for a path of the wrong kind: what it is, after its name ("is a FIFO (named pipe), not a regular file") */
  constructor(message: string, readonly problem?: string) { super(message); }
}

/** What a path is, in words ("a FIFO", "a directory", …). */
export function kindOf(st: Stats): string {
  if (st.isFile()) return 'a regular file';
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

/** The system's reason in words ("permission denied"), without the errno code and syscall. */
export function reason(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  const m = /^[A-Z]+: ([^,]+)/.exec(err.message ?? '');
  return m ? m[1]! : String(err.message ?? e);
}

/** An errno error as a FileError: "cannot VERB PATH: reason"; any other error unchanged. */
export function fileError(e: unknown, verb: string, path: string): unknown {
  if (e instanceof FileError || (e as NodeJS.ErrnoException)?.code === undefined) return e;
  return new FileError(`cannot ${verb} ${path}: ${reason(e)}`);
}

/**
 * Open a regular file for reading. O_NONBLOCK makes opening a FIFO return at once instead of
 * waiting for a writer; what was opened is then checked with fstat, so nothing is read from it.
 * The system's errors (ENOENT …) are thrown as they are.
 */
export function openRegular(path: string, what = 'file'): number {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const st = fstatSync(fd);
  if (!st.isFile()) {
    closeSync(fd);
    const problem = `is ${kindOf(st)}, not a regular file`;
    throw new FileError(`${path} ${problem}: the ${what} must be one`, problem);
  }
  return fd;
}

/** The text of a regular file (see openRegular). */
export function readRegular(path: string, what = 'file'): string {
  const fd = openRegular(path, what);
  try { return readFileSync(fd, 'utf8'); } finally { closeSync(fd); }
}

/** Why `path` is not a regular file ("X is a FIFO …"), or undefined when it is one or does not exist. */
export function notRegular(path: string): string | undefined {
  let st: Stats;
  try { st = statSync(path); } catch { return undefined; }
  return st.isFile() ? undefined : `${path} is ${kindOf(st)}, not a regular file`;
}

/** Open (create or truncate) a regular file for writing: an existing path must be a regular file. */
export function createRegular(path: string, what = 'file'): number {
  const bad = notRegular(path);
  if (bad) throw new FileError(`cannot write the ${what}: ${bad}`);
  try {
    return openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NONBLOCK, 0o666);
  } catch (e) {
    throw fileError(e, `write the ${what}`, path);
  }
}

/**
 * Create directory `path` and its missing parents one at a time (not mkdir's recursive mode:
 * see above); an existing path must be a directory. A FileError's `problem` is the reason with
 * the path it concerns ("/x/.luna-cache is a regular file, not a directory").
 */
export function makeDirectory(path: string, what = 'directory', mode = 0o777): void {
  const fail = (problem: string): FileError => new FileError(`cannot create the ${what} ${path}: ${problem}`, problem);
  const missing: string[] = [];
  let p = resolve(path);
  for (;;) {
    let st: Stats | undefined;
    try { st = statSync(p); } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw fail(`${p}: ${reason(e)}`);
    }
    if (st) {
      if (!st.isDirectory()) throw fail(`${p} is ${kindOf(st)}, not a directory`);
      break;
    }
    missing.push(p);
    const up = dirname(p);
    if (up === p) break;
    p = up;
  }
  for (let i = missing.length - 1; i >= 0; i--) {
    try { mkdirSync(missing[i]!, { mode }); } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST' && statSync(missing[i]!).isDirectory()) continue;
      throw fail(`${missing[i]}: ${reason(e)}`);
    }
  }
}
