// Ways for ranks > 0 to find rank 0. Rank 0 then acts as the directory for everyone else's
// address (tcp.ts), so a rendezvous only ever carries one address (and maybe the secret).
import { randomBytes } from 'node:crypto';
import { constants, rmSync, type Stats } from 'node:fs';
import { chmod, mkdir, open, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import * as path from 'node:path';
import { launchSecret } from './secret.js';
import { atExit } from '../../core/exit.js';
import type { LocalAddress } from './local.js';
import type { PeerAddress, Rendezvous } from './types.js';

/** "host:port" or "[v6]:port" → address. */
export function parseHostPort(s: string): PeerAddress {
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(s.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || !m[1] || !(port > 0 && port < 65536)) throw new Error(`bad rendezvous address "${s}" (expected host:port)`);
  return { host: m[1], port };
}

export function formatHostPort(a: PeerAddress): string {
  return a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

/**
 * For nodes spawned by a luna launcher (spawn.ts): rank 0's address and the secret come in the
 * environment as LUNA_RENDEZVOUS=host:port and LUNA_SECRET, its Unix socket (transport/local.ts)
 * as LUNA_RENDEZVOUS_LOCAL (JSON {machine, path}) when it has one.
 */
export function envRendezvous(env: NodeJS.ProcessEnv = process.env): Rendezvous {
  return {
    async publish() {
      throw new Error('envRendezvous is for ranks > 0; rank 0 uses launcherRendezvous');
    },
    async lookup() {
      const addr = env.LUNA_RENDEZVOUS;
      if (!addr) throw new Error('LUNA_RENDEZVOUS is not set (this process was not started by a luna launcher)');
      // process.env no longer holds the secret once read (secret.ts).
      const secret = env.LUNA_SECRET || (env === process.env ? launchSecret() : undefined);
      const local = parseLocal(env.LUNA_RENDEZVOUS_LOCAL);
      return { ...parseHostPort(addr), ...(local ? { local } : {}), secret };
    },
  };
}

/** A published Unix socket ({machine, path}), or undefined when absent or malformed (TCP then). */
function parseLocal(v: unknown): LocalAddress | undefined {
  let o: unknown = v;
  if (typeof v === 'string') {
    try { o = JSON.parse(v); } catch { return undefined; }
  }
  const l = o as { machine?: unknown; path?: unknown } | null | undefined;
  return l && typeof l.machine === 'string' && typeof l.path === 'string' && l.machine && l.path ? { machine: l.machine, path: l.path } : undefined;
}

/** For the launching rank 0: once it listens, `onListening` starts the other ranks (spawnLocalNodes). */
export function launcherRendezvous(onListening: (addr: PeerAddress, secret: string) => void | Promise<void>): Rendezvous {
  return {
    async publish(addr, secret) {
      await onListening(addr, secret);
    },
    async lookup() {
      throw new Error('launcherRendezvous is for rank 0 only');
    },
  };
}

/** The launcher's job id, so concurrent jobs sharing a directory do not meet each other. */
export function jobIdFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.LUNA_JOB_ID) return env.LUNA_JOB_ID;
  if (env.PMIX_NAMESPACE) return env.PMIX_NAMESPACE;
  const ompi = env.OMPI_MCA_ess_base_jobid ?? env.OMPI_MCA_orte_ess_jobid;
  if (ompi) return `ompi-${ompi}`;
  if (env.SLURM_JOB_ID) return `slurm-${env.SLURM_JOB_ID}.${env.SLURM_STEP_ID ?? env.SLURM_STEPID ?? '0'}`;
  return undefined;
}

export interface FileRendezvousOptions {
  /** Directory shared by all hosts (default: $LUNA_RENDEZVOUS_DIR or <cwd>/.luna-rendezvous). */
  dir?: string;
  /** Job id naming the file (default: jobIdFromEnv). */
  jobId?: string;
  env?: NodeJS.ProcessEnv;
  /** How long ranks > 0 wait for the file (default 60 s). */
  timeoutMs?: number;
  pollMs?: number;
}

interface RendezvousFile {
  host: string;
  port: number;
  /** rank 0's Unix socket, for ranks on its machine */
  local?: LocalAddress;
  secret: string;
  pid: number;
  created: number;
}

const FILE_MODE = 0o600;
const DIR_MODE = 0o700;
/** Undefined where files have no POSIX owner and mode (Windows): nothing to check there. */
const ownUid = (): number | undefined => process.getuid?.();
const modeText = (mode: number) => (mode & 0o7777).toString(8).padStart(4, '0');

/**
 * For mpirun/srun, which start every rank themselves: rank 0 writes {host, port, secret} to
 * <dir>/<job id>.json; the others poll for it. The file is created exclusively under an
 * unpredictable name with mode 0600 and renamed into place, so it appears whole and nothing
 * that was at that path before (another user's file, a symlink) can see the secret. Rank 0
 * refuses a directory another user owns or can write to (they could replace the file); readers
 * refuse a file that is not a regular 0600 file of their own user.
 */
export function fileRendezvous(o: FileRendezvousOptions = {}): Rendezvous & { readonly file: string } {
  const env = o.env ?? process.env;
  const jobId = o.jobId ?? jobIdFromEnv(env);
  if (!jobId) {
    throw new Error('file rendezvous needs a job id: none of PMIX_NAMESPACE, OMPI_MCA_ess_base_jobid, SLURM_JOB_ID, LUNA_JOB_ID is set');
  }
  const userDir = o.dir ?? env.LUNA_RENDEZVOUS_DIR;
  const dir = path.resolve(userDir ?? path.join(process.cwd(), '.luna-rendezvous'));
  const file = path.join(dir, `${jobId.replace(/[^A-Za-z0-9._-]/g, '_')}.json`);
  const timeoutMs = o.timeoutMs ?? 60_000;
  const pollMs = o.pollMs ?? 50;
  /** Directories cleanup() may remove when empty: only the default one. */
  let created: string[] = [];
  let published = false;
  /** the file holds the secret: it goes with the process, however that ends (short of SIGKILL) */
  let forget = (): void => {};

  async function prepareDir(): Promise<void> {
    let first: string | undefined;
    try {
      first = await mkdir(dir, { recursive: true, mode: DIR_MODE });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' || code === 'ENOTDIR') throw notADirectory(dir);
      if (code === 'ENOENT') throw e; // removed under a recursive mkdir: publish() retries
      throw new Error(`cannot create the rendezvous directory ${dir}: ${(e as Error).message}`);
    }
    if (first !== undefined) await chmod(dir, DIR_MODE); // exactly 0700 whatever the umask
    // A directory the user named is theirs to keep, even when we had to create it. The default
    // one is luna's: whichever job leaves it empty removes it, not only the job that made it.
    if (userDir === undefined) created = [dir];
    checkDirectory(dir, await stat(dir));
  }

  /** Exclusive create (O_EXCL: never an existing file or symlink), then an atomic rename. */
  async function writeFileExclusively(content: string): Promise<void> {
    const tmp = `${file}.${randomBytes(12).toString('hex')}.tmp`;
    const fh = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), FILE_MODE);
    try {
      await fh.chmod(FILE_MODE); // the umask may only have narrowed it, but readers insist on 0600
      await fh.writeFile(content);
      await fh.close();
      await rename(tmp, file);
    } catch (e) {
      await fh.close().catch(() => {});
      await unlink(tmp).catch(() => {});
      throw e;
    }
  }

  return {
    file,
    async publish(addr, secret) {
      const content: RendezvousFile = { host: addr.host, port: addr.port, ...(addr.local ? { local: addr.local } : {}), secret, pid: process.pid, created: Date.now() };
      for (let attempt = 1; ; attempt++) {
        try {
          await prepareDir();
          await writeFileExclusively(JSON.stringify(content));
          published = true;
          forget = atExit(() => rmSync(file, { force: true }));
          return;
        } catch (e) {
          // Another job that had created the default directory may remove it, empty, at its
          // end: between our mkdir and stat, or between stat and the write. Make it again.
          if ((e as NodeJS.ErrnoException).code === 'ENOENT' && attempt < 5) continue;
          if (!(e as NodeJS.ErrnoException).code) throw e; // already a message of ours
          throw new Error(`cannot write the rendezvous file ${file}: ${(e as Error).message}`);
        }
      }
    },
    async lookup() {
      const deadline = Date.now() + timeoutMs;
      let problem = '';
      for (;;) {
        const found = await readRendezvousFile(file);
        if (typeof found !== 'string') return found;
        if (found) problem = `; last seen: ${found}`;
        if (Date.now() > deadline) {
          throw new Error(
            `no rendezvous file ${file} after ${timeoutMs / 1000} s: is rank 0 running, and is ${dir} on a filesystem shared by all hosts? (set LUNA_RENDEZVOUS_DIR)${problem}`,
          );
        }
        await new Promise((r) => setTimeout(r, pollMs));
      }
    },
    async cleanup() {
      if (published) { await rm(file, { force: true }); forget(); }
      for (const d of created) await rmdir(d).catch(() => {}); // only if empty: other jobs may use it
      created = [];
    },
  };
}

const notADirectory = (dir: string) => new Error(`the rendezvous path ${dir} is not a directory; set LUNA_RENDEZVOUS_DIR to a directory of your own`);

/** Rank 0: refuse a directory that is not ours or that others can write to. */
function checkDirectory(dir: string, st: Stats): void {
  if (!st.isDirectory()) throw notADirectory(dir);
  const uid = ownUid();
  if (uid === undefined) return;
  if (st.uid !== uid) {
    throw new Error(
      `refusing the rendezvous directory ${dir}: it belongs to uid ${st.uid}, not to you (uid ${uid}), so its owner could replace the rendezvous file; set LUNA_RENDEZVOUS_DIR to a directory of your own`,
    );
  }
  if (st.mode & 0o022) {
    throw new Error(
      `refusing the rendezvous directory ${dir}: it is writable by ${st.mode & 0o002 ? 'every user' : 'its group'} (mode ${modeText(st.mode)}), so they could replace the rendezvous file; run \`chmod go-w ${dir}\` or set LUNA_RENDEZVOUS_DIR to a directory only you can write`,
    );
  }
}

/** Ranks > 0: refuse a file that is not a regular file of ours with mode 0600. */
function checkFile(file: string, st: Stats): void {
  if (!st.isFile()) throw new Error(`refusing the rendezvous file ${file}: it is not a regular file`);
  const uid = ownUid();
  if (uid === undefined) return;
  if (st.uid !== uid) {
    throw new Error(
      `refusing the rendezvous file ${file}: it belongs to uid ${st.uid}, not to you (uid ${uid}), so this job's rank 0 did not write it (every rank must run as the same user); remove it`,
    );
  }
  if ((st.mode & 0o7777) !== FILE_MODE) {
    throw new Error(`refusing the rendezvous file ${file}: its mode is ${modeText(st.mode)}, not 0600, so others may have read the run's secret; remove it`);
  }
}

/**
 * The published address and secret; otherwise a string: '' when there is no file yet, or what
 * is wrong with an unreadable one (rank 0 may still replace it). Unsafe files throw.
 */
async function readRendezvousFile(file: string): Promise<(PeerAddress & { secret: string }) | string> {
  let fh;
  try {
    // O_NOFOLLOW: a symlink is refused; O_NONBLOCK: a FIFO planted there cannot block us.
    fh = await open(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return '';
    if (code === 'ELOOP') throw new Error(`refusing the rendezvous file ${file}: it is a symbolic link; remove it`);
    throw new Error(`cannot read the rendezvous file ${file}: ${(e as Error).message}`);
  }
  try {
    checkFile(file, await fh.stat());
    let f: Partial<RendezvousFile>;
    try {
      f = JSON.parse(await fh.readFile('utf8')) as Partial<RendezvousFile>;
    } catch {
      return 'the file is not valid JSON';
    }
    if (typeof f?.host === 'string' && typeof f.port === 'number' && typeof f.secret === 'string') {
      const local = parseLocal(f.local);
      return { host: f.host, port: f.port, ...(local ? { local } : {}), secret: f.secret };
    }
    return 'the file lacks host, port or secret';
  } finally {
    await fh.close();
  }
}
