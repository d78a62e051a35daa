// Shared helpers of the CLI tests: run the real `bin/luna` of this checkout in a working
// directory of the test's own (a fresh temporary directory: the ucode bundle cache and any
// output go there, never into the source tree), with a time limit.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const LUNA = join(ROOT, 'bin', 'luna');

export interface Run { status: number | null; stdout: string; stderr: string; args: string[] }

/** `node bin/luna …args` in `cwd` (with `env`, default this process's); killed (with its process group) after `timeoutMs`. */
export function luna(args: string[], cwd: string, timeoutMs = 60_000, env?: NodeJS.ProcessEnv): Promise<Run> {
  return runNode([LUNA, ...args], cwd, timeoutMs, env);
}

/** `node …argv` in `cwd`, in its own process group so that a timeout kills everything it started. */
export function runNode(argv: string[], cwd: string, timeoutMs = 60_000, env?: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out: Buffer[] = [], err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const timer = setTimeout(() => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } }, timeoutMs);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), args: argv.slice(1) });
    });
  });
}

export function explain(r: Run): string {
  return `luna ${r.args.join(' ')} -> status ${r.status}\n--- stdout\n${r.stdout}--- stderr\n${r.stderr}`;
}

/** A fresh temporary directory, removed when `fn` settles. */
export async function inTempDir<T>(prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try { return await fn(dir); } finally { rmSync(dir, { recursive: true, force: true }); }
}
