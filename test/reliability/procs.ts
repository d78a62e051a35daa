// Real processes for the reliability tests: `bin/luna` (or mpirun) started in a process group of
// its own, its output collected as it comes, signals sent to it or its group, and checks that
// nothing it started is left running.
import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { LUNA } from '../cli/helpers.js';

/**
 * A temporary directory holding `files` (name → text) for the test file's runs, made before its
 * tests and removed after them; the returned function gives its path.
 */
export function fixtureDir(prefix: string, files: Record<string, string>): () => string {
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  });
  after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });
  return () => dir;
}

export interface Started {
  child: ChildProcess;
  pid: number;
  out: () => string;
  err: () => string;
  /** how it ended: code, or the signal that killed it */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** resolves once its stdout matched `re` (rejects after timeoutMs, naming what it printed) */
  waitFor(re: RegExp, timeoutMs?: number): Promise<void>;
}

/** This environment without launcher variables (the test runner may run under one). */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(LUNA_(?!CACHE_DIR)|OMPI_|PMIX_|PMI_|SLURM_)/.test(k)) env[k] = v;
  return { ...env, ...extra };
}

/** Start `cmd args` in `cwd` as the leader of a new process group. */
export function start(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = cleanEnv()): Started {
  const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '', err = '';
  const watchers: (() => void)[] = [];
  child.stdout!.on('data', (b: Buffer) => { out += b.toString('utf8'); for (const w of [...watchers]) w(); });
  child.stderr!.on('data', (b: Buffer) => { err += b.toString('utf8'); });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.on('close', (code, signal) => res({ code, signal })));
  return {
    child, pid: child.pid!, out: () => out, err: () => err, exited,
    waitFor(re, timeoutMs = 60_000) {
      return new Promise((res, rej) => {
        const check = (): void => {
          if (!re.test(out)) return;
          clearTimeout(t);
          watchers.splice(watchers.indexOf(check), 1);
          res();
        };
        const t = setTimeout(() => rej(new Error(`no ${re} on stdout after ${timeoutMs} ms\n--- stdout\n${out}--- stderr\n${err}`)), timeoutMs);
        watchers.push(check);
        check();
      });
    },
  };
}

/** `bin/luna …args` in its own process group. */
export function startLuna(args: string[], cwd: string, env?: NodeJS.ProcessEnv): Started {
  return start(process.execPath, [LUNA, ...args], cwd, env);
}

/** Whether any process of group `pgid` is alive. */
export function groupAlive(pgid: number): boolean {
  try { process.kill(-pgid, 0); return true; } catch { return false; }
}

/** Resolves true once group `pgid` has no process left, false after timeoutMs (then it kills what is left). */
export async function groupGone(pgid: number, timeoutMs = 15_000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (!groupAlive(pgid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  try { process.kill(-pgid, 'SIGKILL'); } catch { /* gone meanwhile */ }
  return false;
}

/** Processes whose command line contains `marker` (an argument unique to the test's runs: with the test process's pid, so that two suites at once do not see each other's). */
export function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try { if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(marker)) pids.push(Number(d)); } catch { /* ended */ }
  }
  return pids;
}

/** The pid of the process with `marker` on its command line and `VAR=value` in its environment. */
export function pidWithEnv(marker: string, variable: string, value: string): number | undefined {
  for (const pid of processesWith(marker)) {
    try {
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (env.includes(`${variable}=${value}`)) return pid;
    } catch { /* ended */ }
  }
  return undefined;
}

/** Path of mpirun, or undefined. */
export function mpirunPath(): string | undefined {
  try { return execFileSync('sh', ['-c', 'command -v mpirun'], { encoding: 'utf8' }).trim() || undefined; } catch { return undefined; }
}

/** Files in `dir` a run must not leave behind: Unix sockets of its nodes. */
export function socketFiles(dir: string): string[] {
  return readdirSync(dir).filter((f) => /^luna-\d+-[0-9a-f]+\.sock$/.test(f));
}
