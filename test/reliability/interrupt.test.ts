// Interrupted runs keep their traces: the interrupt matrix — SIGINT, SIGTERM, SIGHUP to the
// run's process group and SIGKILL of the launcher, on 1 and 2 nodes — with real `bin/luna`
// processes recording a trace. Each interrupted run must end (dying of the signal it got, as a
// shell expects), leave a trace that analyses with the fragments run so far, a manifest that
// says `interrupted` and why (only a one-node run killed outright cannot: nothing survives to
// write it), no process running and no socket file in its temporary directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { luna } from '../cli/helpers.js';
import { cleanEnv, fixtureDir, groupGone, socketFiles, startLuna, type Started } from './procs.js';

// n CFs of `ms` milliseconds each, spread over the nodes; the first one says the run is going.
const PROGRAM = `import c_init(int \`v, name \`x) as init;
import c_work(int \`ms, value \`a, name \`x) as work;
import c_sum(value \`s, value \`x, name \`t) as sum;
import c_print(value \`x) as print;
sub main(int n, int ms)
{
    df a, b, s;
    for i = 0..n-1 init(i, a[i]);
    for i = 0..n-1 cf w[i]: work(ms, a[i], b[i]) @ { locator_cyclic: i; };
    init(0, s[0]);
    for i = 0..n-1 cf acc[i]: sum(s[i], b[i], s[i+1]);
    print(s[n]);
}
`;
const UCODES = `
let said = false;
export function c_init(v: number, x: { setInt(v: number): void }): void { x.setInt(v); }
export function c_work(ms: number, a: { getInt(): number }, x: { setInt(v: number): void }): void {
  if (!said) { said = true; console.log('running'); }
  const t = Date.now(); while (Date.now() - t < ms) { /* work */ }
  x.setInt(a.getInt() + 1);
}
export function c_sum(s: { getInt(): number }, x: { getInt(): number }, t: { setInt(v: number): void }): void { t.setInt(s.getInt() + x.getInt()); }
export function c_print(x: { getInt(): number }): void { console.log('sum ' + x.getInt()); }
`;

const fixture = fixtureDir('luna-interrupt-', { 'prog.fa': PROGRAM, 'ucodes.ts': UCODES });

interface Manifest { status: string; message?: string; signal?: string; files: unknown[] }

type How = 'SIGINT' | 'SIGTERM' | 'SIGHUP' | 'launcher SIGKILL';

/** Start a long traced run, interrupt it once it computes, and return what it left. */
async function interrupted(how: How, nodes: number): Promise<{ run: Started; ended: { code: number | null; signal: NodeJS.Signals | null }; trace: string; tmp: string; gone: boolean }> {
  const cell = `${how.replace(' ', '-')}-${nodes}`;
  const trace = join(fixture(), `T-${cell}`);
  const tmp = join(fixture(), `tmp-${cell}`);
  mkdirSync(tmp);
  // 2 000 CFs of 20 ms: far longer than the test waits
  const run = startLuna(['run', '--nodes', String(nodes), '--threads', '1', '--trace', trace, 'prog.fa', '2000', '20'], fixture(), cleanEnv({ TMPDIR: tmp }));
  await run.waitFor(/^running$/m);
  // let fragments complete on every node (a spill period too)
  await new Promise((r) => setTimeout(r, 1500));
  if (how === 'launcher SIGKILL') run.child.kill('SIGKILL');
  else process.kill(-run.pid, how);
  const ended = await run.exited;
  const gone = await groupGone(run.pid);
  return { run, ended, trace, tmp, gone };
}

function manifestOf(trace: string): Manifest {
  return JSON.parse(readFileSync(join(trace, 'manifest.json'), 'utf8')) as Manifest;
}

/** `luna analyze slow --json` of the trace: it must analyse (complete or with damage named), with fragments. */
async function assertAnalyses(trace: string, ctx: string): Promise<void> {
  const r = await luna(['analyze', 'slow', '--json', trace], fixture());
  // 4: the analysis says first that the run did not complete (interrupted; still `running` when
  // a one-node launcher was killed before it could write its end); 3: with damage named
  assert.ok(r.status === 0 || r.status === 3 || r.status === 4, `analyze slow ${trace} -> ${r.status}\n${r.stderr}\n${ctx}`);
  if (r.status === 4) assert.match(r.stderr, /did not complete \((interrupted|running)\)/, `${r.stderr}\n${ctx}`);
  assert.doesNotMatch(r.stderr, /internal error|^\s+at /m, r.stderr);
  const report = JSON.parse(r.stdout) as { cfs: number };
  assert.ok(report.cfs > 0, `the trace holds the fragments that ran: ${r.stdout.slice(0, 400)}\n${ctx}`);
}

for (const nodes of [1, 2]) {
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    test(`${sig} to a ${nodes}-node run: it dies of ${sig}, the trace analyses and says interrupted, nothing is left`, async () => {
      const { run, ended, trace, tmp, gone } = await interrupted(sig, nodes);
      const ctx = `--- stdout\n${run.out()}--- stderr\n${run.err()}`;
      assert.equal(ended.signal, sig, `exit ${ended.code}\n${ctx}`);
      assert.match(run.err(), new RegExp(`^luna: (node 1: )?interrupted by ${sig} \\(the trace in .* holds the run up to then\\)$`, 'm'), ctx);
      assert.doesNotMatch(run.err(), /internal error|^\s+at /m, ctx);
      assert.doesNotMatch(run.out(), /^sum /m, 'the run did not complete');
      const m = manifestOf(trace);
      assert.equal(m.status, 'interrupted', ctx);
      assert.equal(m.signal, sig);
      assert.match(m.message ?? '', new RegExp(`interrupted by ${sig}`));
      assert.equal(m.files.length, 2 * nodes, 'every thread file is listed');
      await assertAnalyses(trace, ctx);
      assert.ok(gone, 'no process of the run is left');
      assert.deepEqual(socketFiles(tmp), []);
    });
  }

  test(`launcher SIGKILL of a ${nodes}-node run: ${nodes > 1 ? 'node 1 flushes and finishes the manifest' : 'the trace keeps what was spilled'}, nothing is left`, async () => {
    const { run, ended, trace, tmp, gone } = await interrupted('launcher SIGKILL', nodes);
    const ctx = `--- stdout\n${run.out()}--- stderr\n${run.err()}`;
    assert.equal(ended.signal, 'SIGKILL', ctx);
    const m = manifestOf(trace);
    if (nodes > 1) {
      assert.equal(m.status, 'interrupted', ctx);
      assert.match(m.message ?? '', /^node 1: interrupted: the launching process \(node 0, pid \d+\) is gone$/);
      assert.match(run.err(), /^luna: node 1: interrupted: the launching process \(node 0, pid \d+\) is gone \(its trace in .* holds the run up to then\)$/m, ctx);
    } else {
      // nothing survives to finish it: the draft stays, and the trace what was spilled (every second)
      assert.equal(m.status, 'running', ctx);
    }
    await assertAnalyses(trace, ctx);
    assert.ok(gone, 'the surviving node exits by itself');
    assert.deepEqual(socketFiles(tmp), []);
  });
}
