// Shared helpers of the runtime tests: run the real `luna` CLI (real worker threads, real node
// processes) asynchronously with a time limit, a small concurrency limiter so that tests of a
// suite can overlap on 2 cores, and the fixture table (test/runtime/programs/<name>/<name>.fa)
// with the output every fixture must print whatever the number of nodes and threads.
// Compiled to dist/test/runtime/; run from the repository root.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

export const LUNA = 'bin/luna';

export function program(name: string): string {
  return join('test', 'runtime', 'programs', name, `${name}.fa`);
}

export interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** wall time of the whole run in ms (until its output pipes closed) */
  ms: number;
  /** time at which the launched process itself exited (performance.now()) */
  exitAt: number;
  timedOut: boolean;
  args: string[];
}

// ------------------------------------------------------------------ concurrency limiter

const LIMIT = Number(process.env.LUNA_TEST_JOBS ?? Math.max(5, 2 * availableParallelism() + 1));
let running = 0;
const waiting: (() => void)[] = [];

async function acquire(): Promise<void> {
  if (running < LIMIT) { running++; return; }
  await new Promise<void>((r) => waiting.push(r));
}

function release(): void {
  const next = waiting.shift();
  if (next) next(); else running--;
}

/** Run `fn` when fewer than LIMIT luna runs are in progress in this test file. */
export async function limited<T>(fn: () => Promise<T>): Promise<T> {
  await acquire();
  try { return await fn(); } finally { release(); }
}

// ------------------------------------------------------------------ running luna

/**
 * The environment for a `--warm-start` run that needs the workers booted before the program, not
 * warmed: no rehearsal on the system thread or the workers. The rehearsals were two thirds of such
 * a run's CPU (feed.test 26.9 → 15.5 s of CPU, two pairs at load 6–11), and what they do is tested
 * where it is the subject (rehearsal, lane-rehearsal, lane-rehearsal-ends, loop-plans, boot,
 * options). Spread before a test's own settings, which may still ask for a rehearsal.
 */
export const BOOT_ONLY: Readonly<Record<string, string>> = { LUNA_REHEARSE_CFS: '0', LUNA_LANE_REHEARSE_CFS: '0' };


export interface LunaOptions {
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** called with the child's pid as soon as it started */
  onSpawn?: (pid: number) => void;
  /** command to run instead of `node bin/luna` (e.g. mpirun …); args follow */
  command?: string[];
  /** start reading stdout only after this many ms (a slow consumer: the pipe fills up) */
  slowReaderMs?: number;
}

/**
 * `node bin/luna …args` (or `command …args`) in its own process group; on timeout the whole
 * group is killed (it is ours), so a hanging run cannot outlive the test.
 */
export function luna(args: string[], o: LunaOptions = {}): Promise<Run> {
  return limited(() => runRaw(args, o));
}

export function runRaw(args: string[], o: LunaOptions = {}): Promise<Run> {
  const timeoutMs = o.timeoutMs ?? 60_000;
  const cmd = o.command ?? [process.execPath, LUNA];
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(cmd[0]!, [...cmd.slice(1), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      env: o.env ?? process.env,
    });
    const out: Buffer[] = [], err: Buffer[] = [];
    if (o.slowReaderMs) {
      child.stdout.pause();
      setTimeout(() => { child.stdout.on('data', (b: Buffer) => out.push(b)); child.stdout.resume(); }, o.slowReaderMs);
    } else child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ }
    }, timeoutMs);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    if (child.pid !== undefined) o.onSpawn?.(child.pid);
    let exitAt = 0;
    child.on('exit', () => { exitAt = performance.now(); });
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({
        status, signal, timedOut, exitAt, args: [...cmd.slice(1), ...args],
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        ms: performance.now() - t0,
      });
    });
  });
}

export function lines(s: string): string[] {
  const l = s.split('\n');
  if (l[l.length - 1] === '') l.pop();
  return l;
}

export function sorted(a: readonly string[]): string[] {
  return [...a].sort();
}

/** The `--timing` JSON a run printed on stderr (its counts), or a failed assertion that shows the run. */
export function timingOf<T>(r: Run): T {
  const m = /luna: timing: (\{.*\})/.exec(r.stderr);
  assert.ok(m, `no --timing line\n${describeRun(r)}`);
  return JSON.parse(m[1]!) as T;
}

export function describeRun(r: Run): string {
  const cut = (s: string) => (s.length > 4000 ? `${s.slice(0, 2000)}\n…[${s.length - 4000} chars]…\n${s.slice(-2000)}` : s);
  return `luna ${r.args.join(' ')} -> status ${r.status}${r.signal ? ` (signal ${r.signal})` : ''}${r.timedOut ? ' (TIMED OUT)' : ''} in ${Math.round(r.ms)} ms\n--- stdout\n${cut(r.stdout)}--- stderr\n${cut(r.stderr)}`;
}

export function assertOk(r: Run): void {
  assert.equal(r.status, 0, describeRun(r));
}

export function assertSameLines(r: Run, want: readonly string[]): void {
  assertOk(r);
  assert.deepEqual(sorted(lines(r.stdout)), sorted(want), describeRun(r));
}

/** Exit 1 (or `status`; not a crash, not a timeout) and stderr matching every pattern. */
export function assertFails(r: Run, patterns: readonly RegExp[], status = 1): void {
  assert.equal(r.timedOut, false, describeRun(r));
  assert.equal(r.status, status, describeRun(r));
  for (const p of patterns) assert.match(r.stderr, p, `stderr should match ${p}\n${describeRun(r)}`);
  assert.doesNotMatch(r.stderr, /internal error/i, describeRun(r));
}

/** Command line for a run with `nodes` nodes and `threads` worker threads each. */
export function runArgs(nodes: number, threads: number, c: { file: string; args?: string[]; defines?: string[] }): string[] {
  const a = ['run', '--threads', String(threads)];
  if (nodes !== 1) a.push('--nodes', String(nodes));
  for (const d of c.defines ?? []) a.push('-D', d);
  return [...a, c.file, ...(c.args ?? [])];
}

export function hasCommand(cmd: string): boolean {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() !== '';
}

// ------------------------------------------------------------------ the fixture table

export interface Case {
  /** test name */
  name: string;
  file: string;
  args?: string[];
  defines?: string[];
  /** success: stdout lines (as a multiset) */
  out?: string[];
  /** failure: exit 1 (or `status`) and stderr matching these (for any number of nodes and threads) */
  fails?: RegExp[];
  /** exit status of a failure (default 1; 2 for a bad command line) */
  status?: number;
  /** failure: these lines must still be on stdout (printed before the error in any order) */
  stdoutHas?: string[];
  /** failure, one node and one thread (FIFO order): these lines too */
  stdoutHasFifo?: string[];
}

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, k) => a + k);

/**
 * The semantics fixtures. Every case must give this result on 1, 2 or 3 nodes with 1 or 2
 * threads (multinode.test.ts, in process); semantics.test.ts runs each through the CLI on one
 * node with one thread.
 */
export const CASES: Case[] = [
  { name: 'req_count: exactly the announced number of readers', file: program('reqcount'), out: ['r1 5', 'r2 5', 's1 7', 's2 7', 's3 7'] },
  {
    name: 'req_count: too many requests (readers pending when the DF is posted)',
    file: program('toomany'),
    fails: [/too many requests/i, /\bDF x\b/, /CF (p|r1|r2) \(ucode c_(set|show), id [\d_]+\)[^\n]* at [^\n]*toomany\.fa:(8|9|10):5/],
  },
  {
    name: 'req_count: a request after the DF was freed is "too many requests" naming the requesting CF',
    file: program('toomany_late'),
    stdoutHas: ['r1 5'],
    fails: [/too many requests/i, /x\[0\]/, /CF r2 \(ucode c_show, id [\d_]+\)[^\n]* at [^\n]*toomany_late\.fa:12:5/],
  },
  {
    name: 'a DF index that is itself a DF requests only the DF it names',
    file: program('dfindex'),
    out: ['r1 5', 'r2 6'],
  },
  {
    name: 'double assignment: "assigned twice" naming the CF and its source position',
    file: program('twice'),
    fails: [/\bDF a\b[^\n]*assigned twice/, /CF w[12] \(ucode c_set, id [\d_]+\)[^\n]* at [^\n]*twice\.fa:(8|9):5/],
  },
  {
    name: 'destroy (-->) with a positive request count is an error naming the CF',
    file: program('destroy_pos'),
    stdoutHas: ['r1 5'],
    fails: [/destroy[^\n]*\bDF x\b|\bDF x\b[^\n]*destroy/i, /positive requests? count/i, /CF r1 \(ucode c_show, id [\d_]+\)[^\n]* at [^\n]*destroy_pos\.fa:12:5/],
  },
  {
    name: 'destroy (delete) with a positive request count is an error naming the CF',
    file: program('destroy_pos'),
    defines: ['USE_DELETE'],
    stdoutHas: ['r1 5'],
    fails: [/positive requests? count/i, /CF r1 \(ucode c_show, id [\d_]+\)[^\n]* at [^\n]*destroy_pos\.fa:10:5/],
  },
  { name: '--> and delete after the last reader', file: program('delete_ok'), out: ['r1 5', 'r2 5', 'last 2 5', 'ry 6', 'rz 7'] },
  { name: '>> sets int 1 flags (after an atomic CF and after a sub call)', file: program('setdfs'), out: ['a', 'f 1 size 4', 'g2 1 size 4', 'h 1 size 4', 'sub'] },
  { name: 'afterpush / wait push mode', file: program('afterpush'), out: ['c 7', 'u1 10', 'u2 20', 'u3 30'] },
  {
    name: 'req_unlimited (implicit default and explicit): many readers',
    file: program('unlimited'),
    out: [...range(1, 40).map((i) => `r${i} 3`), ...range(1, 5).map((i) => `s${i} 4`)],
  },
  { name: 'drop suppresses the publication', file: program('drop'), out: ['x 1', 'y 3'] },
  {
    name: 'while with an out value (i=1..out N sets N=6) and a DF condition',
    file: program('while'),
    out: ['i 1', 'i 2', 'i 3', 'i 4', 'i 5', 'N 6', 'M 7', 'v7 128'],
  },
  { name: 'if (true branch)', file: program('if'), args: ['4'], out: ['big', 'k is 8'] },
  { name: 'if (false branch)', file: program('if'), args: ['1'], out: ['small', 'k is not 8'] },
  { name: 'recursion (recursive subs)', file: program('recursion'), args: ['10'], out: ['fact 3628800', 'fib 55'] },
  { name: 'name aliasing: x[6] in the sub is the caller\'s z[10][6]', file: program('alias'), out: ['inside y6 66', 'z10_6 66', 'z10_1_2 12'] },
  { name: 'let substitution', file: program('let'), args: ['4'], out: ['a 8', 'b 9', 'z12 5'] },
  {
    name: 'integer/real arithmetic rules (§4.2)',
    file: program('arith'),
    args: ['3', '0.5'],
    out: [
      'div 3', 'negdiv -3', 'divneg -3', 'rem 1', 'rem_negdivisor 1', 'rem_negdividend -1', 'prec 5',
      't16a -2', 't16b -2', 'tern 6', 'tern2 3', 'tern3 30', 'cmpchain 1', 'eqprec 1', 'and 1', 'or 0', 'or2 1',
      'trunc 3', 'negtrunc -3', 'cast 7', 'leftassoc 12', 'leftassocdiv 3', 'parens 9',
      'dfdiv 3', 'dfrem -3', 'dfmix 20',
      'mix 1.5000', 'mixdiv 1.5000', 'param 1.5000', 'dfreal 5.0000', 'realcast 3.5000', 'intarg 3.0000',
    ],
  },
  {
    name: 'string concatenation with ints and DFs, string ==',
    file: program('strings'),
    args: ['bob'],
    out: ['User_1', 'User_2', 'User_3', 'n=42', 'r=0.500000', 'bob!5', 'q-3', 'hi bob'],
  },
  {
    name: 'string !=',
    file: program('strings'),
    args: ['ann'],
    out: ['User_1', 'User_2', 'User_3', 'n=42', 'r=0.500000', 'ann!5', 'q-3', 'not bob'],
  },
  { name: 'missing command-line argument (one of two): a usage error naming main\'s parameters', file: program('missing_arg'), args: ['3'], status: 2, fails: [/too few program arguments/i, /\bstring s\b/] },
  { name: 'missing command-line arguments (none)', file: program('missing_arg'), status: 2, fails: [/too few program arguments/i, /\bint n\b/] },
  {
    name: 'ucode exception: CF label, indices and position; earlier output kept',
    file: program('exception'),
    args: ['3', '2'],
    stdoutHas: ['boom 2 runs'],
    stdoutHasFifo: ['line 1', 'line 2', 'line 3', 'before the error', 'boom 1 runs'],
    fails: [/kaboom in boom 2/, /CF boom\[2\] \(ucode c_explode, id [\d_]+\)[^\n]* at [^\n]*exception\.fa:13:9/],
  },
  {
    name: 'wrong DF accessor (getReal on an int) names the CF',
    file: program('accessor'),
    fails: [/getReal/, /\bint\b/, /CF bad\[[67]\] \(ucode c_wantreal, id [\d_]+\)[^\n]* at [^\n]*accessor\.fa:10:9/],
  },
  {
    name: 'hang: waiting CFs reported with label, indices, position and awaited DF',
    file: program('hang'),
    stdoutHas: ['fine'],
    fails: [
      /hang/i,
      /CF w\[2\] \(ucode c_show, id [\d_]+\)[^\n]* at [^\n]*hang\.fa:12:9[^\n]* waits for x\[2\]/,
      /CF w\[3\] \(ucode c_show, id [\d_]+\)[^\n]* at [^\n]*hang\.fa:12:9[^\n]* waits for x\[3\]/,
      /CF v \(ucode c_show2, id [\d_]+\)[^\n]* at [^\n]*hang\.fa:14:5[^\n]* waits for z\b/,
    ],
  },
  { name: 'FIFO program (as a set)', file: program('fifo'), out: ['A', 'P sets x', 'B', 'G', 'H flag 1', 'S.1', 'S.2', 'F1', 'F2', 'W x 5', 'T.1', 'T.2'] },
];

/** Every fixture directory must be used by some test (keeps the table honest). */
export const FIXTURES_USED_ELSEWHERE = ['chain_mem', 'cyclic', 'replicate', 'bigdf', 'nodefail', 'killnode', 'steal', 'backward', 'leave', 'farwait', 'writecb', 'spread', 'recycle', 'recycle_nodes', 'recycle_copies', 'held_views', 'recycle_drift', 'heavy_ahead', 'board', 'board_recycle'];
