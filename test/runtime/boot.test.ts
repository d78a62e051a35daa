// When worker threads boot (real threads, the real CLI): a program whose fragments are all tiny
// never boots one — a code's first, cold call does not count as long — and a program of long
// fragments does, and runs them there; a program that marks a fragment `heavy` boots them at its
// start, however tiny its fragments turn out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const LUNA = resolve('bin/luna');

function run(args: string[], env: Record<string, string> = {}): { out: string; workers: number; sent: number } {
  const r = spawnSync(process.execPath, [LUNA, 'run', '--timing', ...args], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, ...env } });
  assert.equal(r.status, 0, r.stderr);
  const m = /luna: timing: (\{.*\})/.exec(r.stderr);
  assert.ok(m, `--timing line on stderr\n${r.stderr}`);
  const t = JSON.parse(m[1]!) as { workers: number; sent: number };
  return { out: r.stdout, workers: t.workers, sent: t.sent };
}

const PROGRAM = `
import c_work(int \`i, name \`x) as work;
import c_sum(value \`a, value \`b, value \`c, value \`d, value \`e, value \`f) as sum;
sub main() {
  df x;
  for i = 1..6
    work(i, x[i]);
  sum(x[1], x[2], x[3], x[4], x[5], x[6]);
}
`;

/**
 * ucodes whose \`c_work\` busy-waits \`firstMs\` on its first call and \`ms\` on every later one;
 * \`firstCpu\`: the first call spins until the process has used \`firstMs\` of CPU (its length on a
 * loaded machine too)
 */
function ucodes(firstMs: number, ms: number, firstCpu = false): string {
  return `
let calls = 0;
const spin = (ms: number): void => { const end = performance.now() + ms; while (performance.now() < end); };
const spinCpu = (ms: number): void => { const u = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000; const end = u(process.cpuUsage()) + ms; while (u(process.cpuUsage()) < end); };
export function c_work(i: number, x: { setInt(v: number): void }): void { if (calls++ === 0 && ${firstCpu}) spinCpu(${firstMs}); else spin(calls === 1 ? ${firstMs} : ${ms}); x.setInt(i); }
export function c_sum(...v: { getInt(): number }[]): void { console.log('sum', v.reduce((s, d) => s + d.getInt(), 0)); }
`;
}

function inTemp<T>(firstMs: number, ms: number, f: (prog: string) => T, firstCpu = false, program = PROGRAM, modulePrefix = ''): T {
  const dir = mkdtempSync(join(tmpdir(), 'luna-boot-'));
  try {
    writeFileSync(join(dir, 'prog.fa'), program);
    writeFileSync(join(dir, 'ucodes.ts'), modulePrefix + ucodes(firstMs, ms, firstCpu));
    return f(join(dir, 'prog.fa'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('examples/hello boots no worker: every fragment runs on the system thread', () => {
  const r = run(['--threads', '2', resolve('examples/hello/hello.fa')]);
  assert.match(r.out, /hello: OK/);
  assert.equal(r.workers, 0, 'no worker booted');
  assert.equal(r.sent, 0);
});

test('a slow first call of an otherwise tiny code boots no worker', () => {
  const r = inTemp(5, 0, (prog) => run(['--threads', '2', prog]));
  assert.match(r.out, /sum 21/);
  assert.equal(r.workers, 0, 'the cold first call alone does not boot workers');
});

test('a first call as long as a worker\'s boot boots the workers, however tiny the later ones', () => {
  // 150 ms of the process's CPU: the system thread's share is above the policy's 50 ms
  const r = inTemp(150, 0, (prog) => run(['--threads', '2', prog]), true);
  assert.match(r.out, /sum 21/);
  assert.ok(r.workers >= 1, `workers booted (${r.workers})`);
});

test('a code that stays long boots the workers and runs there', () => {
  const r = inTemp(15, 15, (prog) => run(['--threads', '2', prog]));
  assert.match(r.out, /sum 21/);
  assert.ok(r.workers >= 1, `workers booted (${r.workers})`);
  assert.ok(r.sent >= 1, `fragments sent to workers (${r.sent})`);
});

test('fragments marked heavy never run on the system thread: each lane\'s worker boots at the start and every marked call is sent to one', () => {
  const marked = PROGRAM.replace('work(i, x[i]);', 'work(i, x[i]) @ { heavy; };');
  const r = inTemp(0, 0, (prog) => run(['--threads', '2', prog]), false, marked);
  assert.match(r.out, /sum 21/);
  assert.equal(r.workers, 2, 'both lanes\' workers booted');
  assert.ok(r.sent >= 6, `the six marked calls went to workers (sent ${r.sent})`);
  const u = inTemp(0, 0, (prog) => run(['--threads', '2', prog]));
  assert.equal(u.sent, 0, 'unmarked: every call ran on the system thread');
});

test('--warm-start boots the workers before the program, tiny or not; with the system thread as a lane, one fewer', () => {
  const r = run(['--threads', '2', '--warm-start', resolve('examples/hello/hello.fa')]);
  assert.match(r.out, /hello: OK/);
  assert.equal(r.workers, 2, 'every lane a worker');
  const s = run(['--threads', '2', '--warm-start', resolve('examples/hello/hello.fa')], { LUNA_SYSTEM_LANE: '1' });
  assert.match(s.out, /hello: OK/);
  assert.equal(s.workers, 1, 'one worker and the system thread');
});

test('a fragment marked heavy boots the workers at the program\'s start, however tiny its calls; the same program unmarked boots none', () => {
  const marked = PROGRAM.replace('work(i, x[i]);', 'work(i, x[i]) @ { heavy; };');
  assert.notEqual(marked, PROGRAM);
  const r = inTemp(0, 0, (prog) => run(['--threads', '2', prog]), false, marked);
  assert.match(r.out, /sum 21/);
  assert.ok(r.workers >= 1, `workers booted (${r.workers})`);
  const u = inTemp(0, 0, (prog) => run(['--threads', '2', prog]));
  assert.match(u.out, /sum 21/);
  assert.equal(u.workers, 0, 'unmarked: every call tiny, no worker');
});

test('a ucode module that fails to load on the workers a heavy program boots at its start fails the run, naming the cause', () => {
  const marked = PROGRAM.replace('work(i, x[i]);', 'work(i, x[i]) @ { heavy; };');
  const throwsOnWorkers = `import { isMainThread } from 'node:worker_threads';\nif (!isMainThread) throw new Error('no module on a worker');\n`;
  const f = inTemp(0, 0, (prog) => spawnSync(process.execPath, [LUNA, 'run', '--threads', '2', prog], { encoding: 'utf8', timeout: 120_000 }), false, marked, throwsOnWorkers);
  assert.notEqual(f.status, 0);
  assert.match(f.stderr, /could not load the ucode module: no module on a worker/);
  assert.doesNotMatch(f.stderr, /\n\s+at /, 'no stack trace');
});
