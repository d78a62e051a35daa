import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const PEER = fileURLToPath(new URL('./peer.js', import.meta.url));

/** This environment without any launcher variables (the test runner may run under one). */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(LUNA_|OMPI_|PMIX_|PMI_|SLURM_)/.test(k)) env[k] = v;
  }
  return { ...env, ...extra };
}

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run a command to completion, collecting its output (killed after timeoutMs). */
export function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<Ran> {
  return new Promise((resolve) => {
    const c = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    const t = setTimeout(() => c.kill('SIGKILL'), timeoutMs);
    c.on('close', (code, signal) => {
      clearTimeout(t);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `p`, or a rejection naming `what` after `ms`: a failing test ends (and cleans up) instead of hanging. */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms / 1000} s`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
