// Shared by the C++ ucode tests: the CLI runner, and programs written into a temporary
// directory (the cache goes there too, so each fixture is compiled once per test file).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { findCompiler } from '../../src/ucode/cpp/compiler.js';
import { pchRoot } from '../../src/ucode/cpp/pch.js';

export const LUNA = resolve('bin/luna');
export const DF_MODULE = resolve('src/ucode/df.js');

/** Why the C++ tests cannot run here (no compiler), or undefined. */
export function noCompiler(): string | undefined {
  try { findCompiler(); return undefined; } catch (e) { return `${(e as Error).message}`; }
}

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * This environment without launcher variables (the test runner may run under one). The
 * precompiled ucenv.h stays in the suite's temporary cache (test/setup.ts), shared by the test
 * files, never in the user's ~/.cache.
 */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(LUNA_|OMPI_|PMIX_|PMI_|SLURM_)/.test(k)) env[k] = v;
  return { ...env, LUNA_PCH_DIR: pchRoot() ?? '', ...extra };
}

/**
 * Run a command in `cwd` to completion (killed after timeoutMs: a hang fails the test). The
 * default leaves room for a C++ compile at -O3: 10–20 s alone, over 60 s at load 20 on 2 cores.
 */
export function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = cleanEnv(), timeoutMs = 180_000): Promise<Ran> {
  return new Promise((done) => {
    const c = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    const t = setTimeout(() => c.kill('SIGKILL'), timeoutMs);
    c.on('close', (code, signal) => { clearTimeout(t); done({ code, signal, stdout, stderr }); });
  });
}

export function luna(args: string[], cwd: string, env?: NodeJS.ProcessEnv, timeoutMs?: number): Promise<Ran> {
  return run(process.execPath, [LUNA, ...args], cwd, env, timeoutMs);
}

export function show(r: Ran): string {
  return `exit ${r.code}${r.signal ? ` (${r.signal})` : ''}\n--- stdout\n${r.stdout}--- stderr\n${r.stderr}`;
}

export function sortedLines(s: string): string[] {
  return s.split('\n').filter(Boolean).sort();
}

/** A fresh directory holding `files` (name → text). */
export function fixture(prefix: string, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  for (const [name, text] of Object.entries(files)) {
    const p = join(dir, name);
    mkdirSync(join(p, '..'), { recursive: true });
    writeFileSync(p, text);
  }
  return dir;
}
