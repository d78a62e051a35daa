// Nothing fails silently at run time: a fault matrix — a ucode that throws, calls process.exit,
// runs a worker out of memory, leaves a rejected promise, a timer or a nextTick behind, returns a
// Promise, or runs past --cf-timeout — on one node and on two (real `bin/luna` processes). Every
// run must exit non-zero and say on stderr which fragment (label with indices, ucode, position),
// which node and what happened, without a stack trace of the runtime.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { explain, luna, type Run } from '../cli/helpers.js';

// `kind` picks the fault; a `-worker` kind faults only on worker threads (the system thread runs
// the first, unmeasured call of a code itself on one node: there it just works for 12 ms, longer
// than a code may take on the system thread while workers boot, which keeps the code off it
// afterwards).
const UCODES = `
import { isMainThread } from 'node:worker_threads';
export function c_init(v: number, x: { setInt(v: number): void }): void { x.setInt(v); }
export function c_work(kind: string, a: { getInt(): number }, x: { setInt(v: number): void }): unknown {
  const v = a.getInt();
  const k = kind.replace(/-worker$/, '');
  if (k !== kind && isMainThread) { const t = Date.now(); while (Date.now() - t < 12) { /* work */ } x.setInt(v); return; }
  if (k === 'throw') throw new Error('boom ' + v);
  if (k === 'exit') process.exit(3);
  if (k === 'oom') { const keep: number[][] = []; for (;;) keep.push(new Array(1 << 20).fill(v + 0.5)); }
  if (k === 'reject') void Promise.reject(new Error('rejected later'));
  if (k === 'timer') setTimeout(() => { throw new Error('timer boom'); }, 60_000);
  if (k === 'tick') process.nextTick(() => { throw new Error('tick boom'); });
  if (k === 'promise') { x.setInt(v); return Promise.resolve(v); }
  if (k === 'hang') { const t = Date.now(); while (Date.now() - t < 30_000) { /* too long */ } }
  x.setInt(v + 1);
  return undefined;
}
export function c_print(i: number, x: { getInt(): number }): void { console.log('result ' + i + ': ' + x.getInt()); }
`;

const PROGRAM = `import c_init(int \`v, name \`x) as init;
import c_work(string \`kind, value \`a, name \`x) as work;
import c_print(int \`i, value \`x) as print;
sub main(string kind)
{
    df a, b;
    for i = 1..4 init(i, a[i]);
    for i = 1..4 cf w[i]: work(kind, a[i], b[i]);
    for i = 1..4 print(i, b[i]);
}
`;

// the same, every fragment placed on node 1
const ON_NODE1 = PROGRAM.replace(/(init\(i, a\[i\]\)|work\(kind, a\[i\], b\[i\]\));/g, '$1 @ { locator_cyclic: 1; };');

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'luna-faults-'));
  writeFileSync(join(dir, 'ucodes.ts'), UCODES);
  writeFileSync(join(dir, 'prog.fa'), PROGRAM);
  writeFileSync(join(dir, 'node1.fa'), ON_NODE1);
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

/**
 * `escaped`: the other way the fault may be reported — an error that left the ucode
 * asynchronously on the system thread (promises are not tracked there), named by node and by
 * the ucode's own stack frame rather than by fragment.
 */
interface Case { kind: string; cause: RegExp; escaped?: RegExp; opts?: string[]; env?: Record<string, string> }

const CASES: Case[] = [
  { kind: 'throw', cause: /exception in ucode c_work: boom \d/ },
  { kind: 'exit', cause: /a ucode called process\.exit\(3\)|worker thread \d+ of node \d+ exited with code 3 while running ucode c_work/ },
  { kind: 'exit-worker', cause: /worker thread \d+ of node \d+ exited with code 3 while running ucode c_work \(did the ucode call process\.exit\?\)/ },
  { kind: 'oom-worker', cause: /worker thread \d+ of node \d+ ran out of memory \(heap limit 32 MB, LUNA_WORKER_HEAP_MB\) while running ucode c_work/, env: { LUNA_WORKER_HEAP_MB: '32' } },
  { kind: 'reject', cause: /ucode c_work started asynchronous work \(PROMISE\): ucodes are synchronous/, escaped: /an error escaped a ucode asynchronously on the system thread of node 0 \(uncaught rejection\): rejected later\n\s+at c_work \(.*ucodes\.ts:\d+:\d+\)/ },
  { kind: 'reject-worker', cause: /ucode c_work started asynchronous work \(PROMISE\): ucodes are synchronous/ },
  { kind: 'timer', cause: /ucode c_work started asynchronous work \(Timeout\): ucodes are synchronous/ },
  { kind: 'tick-worker', cause: /ucode c_work started asynchronous work \(TickObject\): ucodes are synchronous/ },
  { kind: 'promise', cause: /ucode c_work returned a Promise: ucodes are synchronous/ },
  { kind: 'hang', cause: /worker thread \d+ of node \d+ was stopped after 300\.0 ms \(--cf-timeout\) while running ucode c_work/, opts: ['--cf-timeout', '300ms'] },
];

const FRAGMENT = /\n {2}in CF w\[([1-4])\] \(ucode c_work, id [\d_]+\) at prog\.fa:8:18 on node [01]\n/;

function assertFault(r: Run, c: Case): void {
  assert.notEqual(r.status, 0, explain(r));
  assert.equal(r.status, 1, explain(r));
  assert.match(r.stderr, /^luna: error: /m, explain(r));
  assert.doesNotMatch(r.stderr, /internal error/, explain(r));
  // the user's own frames (ucodes.ts) may follow an exception; the runtime's never
  assert.doesNotMatch(r.stderr, /^\s+at (?!.*ucodes\.ts:)/m, explain(r));
  if (c.escaped && c.escaped.test(r.stderr)) return;
  assert.match(r.stderr, c.cause, explain(r));
  assert.match(r.stderr, FRAGMENT, explain(r));
  // the run stops at the fault: the faulted fragment's output is never printed, nor are all four
  // (fragments that completed before it may have printed theirs: nothing computed is lost)
  const k = FRAGMENT.exec(r.stderr)![1]!;
  assert.doesNotMatch(r.stdout, new RegExp(`^result ${k}:`, 'm'), explain(r));
  assert.ok((r.stdout.match(/^result/gm) ?? []).length < 4, explain(r));
}

for (const nodes of [1, 2]) {
  for (const c of CASES) {
    test(`${c.kind} on ${nodes} node(s): non-zero exit, fragment, node and cause on stderr`, async () => {
      const env = c.env ? Object.entries(c.env).map(([k, v]) => `${k}=${v}`) : [];
      const args = ['run', '--nodes', String(nodes), '--threads', '2', ...(c.opts ?? []), 'prog.fa', c.kind];
      const r = env.length ? await lunaEnv(args, c.env!) : await luna(args, dir);
      assertFault(r, c);
    });
  }
}

test('faults on node 1 are reported by node 0, naming node 1', async () => {
  for (const [kind, cause, opts] of [['exit-worker', /worker thread 1 of node 1 exited with code 3/, []], ['hang', /worker thread 1 of node 1 was stopped after 300\.0 ms \(--cf-timeout\)/, ['--cf-timeout', '300ms']]] as const) {
    const r = await luna(['run', '--nodes', '2', '--threads', '1', ...opts, 'node1.fa', kind], dir);
    assert.equal(r.status, 1, explain(r));
    assert.match(r.stderr, cause, explain(r));
    assert.match(r.stderr, /\n {2}in CF w\[[12]\] \(ucode c_work, id [\d_]+\) at node1\.fa:8:18 on node 1\n/, explain(r));
  }
});

test('--cf-timeout: a run whose fragments are all shorter completes; a bad duration is exit 2', async () => {
  const ok = await luna(['run', '--threads', '2', '--cf-timeout', '20s', 'prog.fa', 'fine'], dir);
  assert.equal(ok.status, 0, explain(ok));
  assert.deepEqual(ok.stdout.trim().split('\n').sort(), ['result 1: 2', 'result 2: 3', 'result 3: 4', 'result 4: 5']);
  const bad = await luna(['run', '--cf-timeout', '5', 'prog.fa', 'fine'], dir);
  assert.equal(bad.status, 2, explain(bad));
  assert.match(bad.stderr, /^luna: error: --cf-timeout: "5" needs a unit/m, explain(bad));
  const heap = await lunaEnv(['run', 'prog.fa', 'fine'], { LUNA_WORKER_HEAP_MB: '2' });
  assert.equal(heap.status, 2, explain(heap));
  assert.match(heap.stderr, /^luna: error: LUNA_WORKER_HEAP_MB must be a whole number of at least 8 \(a worker thread's heap limit, MB\), got "2"$/m, explain(heap));
});

/** luna with extra environment variables (helpers.luna inherits this process's environment). */
async function lunaEnv(args: string[], env: Record<string, string>): Promise<Run> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try { return await luna(args, dir); } finally {
    for (const [k, v] of Object.entries(saved)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }
  }
}
