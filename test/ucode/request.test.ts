// Ucodes that ask their node through the request port and hold blocks, run for real: worker
// threads waiting on the test resource (resource.ts) on one node and on two, the waits in the
// trace as `wait` records of the handler's kind, and booked as W by SLOW.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeSlowTrace } from '../../src/analysis/slow/index.js';
import { WAIT_KINDS } from '../../src/trace/schema.js';
import { fixture, runWithResource, tracedWaits, UCODE_API } from './fixtures.js';

const PROGRAM = `
import c_make(string \`id, name \`r) as make;
import c_add(block \`r, int \`ms, name \`seen) as add;
import c_nap(int \`ms, name \`done) as nap : WAITS;
import c_who(int \`k, name \`w) as who : WAITS;
import c_check(value \`w, int \`k) as check;

sub main(int n)
{
    df r, seen, done, w;
    make("a", r);
    for i = 0..n-1 {
        cf add[i]: add(r, 8, seen[i]) @ { locator_cyclic: i; };
    }
    cf nap0: nap(30, done);
    cf who[7]: who(7, w);
    check(w, 7);
}
`;

const UCODES = `
import { context, type DF } from ${JSON.stringify(UCODE_API)};

export function c_make(id: string, r: DF): void { r.setValue({ block: 'test', id }); }

/** Holds block r for ms: nobody else may be inside meanwhile. */
export function c_add(r: { counter: Int32Array; bytes: Uint8Array }, ms: number, seen: DF): void {
  const inside = new Int32Array(r.bytes.buffer, 4, 1);
  if (Atomics.add(inside, 0, 1) !== 0) throw new Error('two CFs hold the block at once');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  seen.setInt(++r.counter[0]);
  Atomics.sub(inside, 0, 1);
}

export function c_nap(ms: number, done: DF): void {
  done.setInt(context().request('test.sleep', { ms }) as number);
}

export function c_who(k: number, w: DF): void {
  const c = context();
  w.setString(\`\${c.label} \${c.gid} \${c.node} \${c.lane} \${c.waits} \${c.request('test.who')}\`);
}

export function c_check(w: DF, k: number): void {
  if (!w.getString().startsWith(\`who[\${k}] \`)) throw new Error('wrong identity: ' + w.getString());
}
`;

for (const nodes of [1, 2]) {
  test(`TypeScript ucodes wait on the test resource through the request port, ${nodes} node(s) × 2 threads: wait records, W in SLOW`, async (t) => {
    const dir = fixture(t, { 'prog.fa': PROGRAM, 'ucodes.ts': UCODES });
    const n = 6;
    const ran = await runWithResource(dir, { nodes, threads: 2, args: [String(n)], traced: true });
    for (const r of ran.results) assert.equal(r.ok, true, r.message);
    // every add held block a of its node exclusively, and each node's adds were granted in turn
    const perNode = Array.from({ length: nodes }, (_, k) => Math.ceil((n - k) / nodes));
    assert.deepEqual(ran.logs.map((l) => l.count.get('test.acquire') ?? 0), perNode);
    assert.deepEqual(ran.logs.map((l) => l.count.get('test.release') ?? 0), perNode);
    assert.deepEqual(ran.logs.map((l) => l.grants.get('a')?.length ?? 0), perNode);
    assert.equal(ran.logs[0]!.count.get('test.sleep'), 1);

    const ws = tracedWaits(ran.trace!);
    const nap = ws.filter((w) => w.resource === 'sleep 30 ms');
    assert.equal(nap.length, 1);
    assert.equal(WAIT_KINDS[nap[0]!.waitKind], 'test');
    assert.ok(nap[0]!.end - nap[0]!.t >= 29e6, `the nap waited ${(nap[0]!.end - nap[0]!.t) / 1e6} ms`);
    const holds = ws.filter((w) => w.resource === 'test resource a');
    assert.equal(holds.length, n, 'one wait per hold of the block');
    assert.ok(holds.every((w) => WAIT_KINDS[w.waitKind] === 'test'));
    // an acquire the resource queued behind another's 8 ms hold waited for the rest of it
    // (whether two threads overlap at all is the scheduler's choice: the resource says which did)
    const queued = ran.logs.reduce((s, l) => s + l.queued, 0);
    const long = holds.filter((w) => w.end - w.t >= 0.5e6).length;
    assert.ok(long >= Math.min(1, queued), `${queued} acquire(s) queued; holds waited ${holds.map((w) => ((w.end - w.t) / 1e6).toFixed(2)).join(', ')} ms`);
    assert.ok(ws.some((w) => w.resource === 'the identity of its CF' && WAIT_KINDS[w.waitKind] === 'request'));

    const slow = analyzeSlowTrace(ran.trace!);
    const W = slow.perThread.reduce((s, x) => s + x.W, 0);
    const booked = ws.reduce((s, w) => s + (w.end - w.t), 0);
    assert.ok(W > 0.99 * booked && W <= booked + 1, `SLOW books the waits as W: ${W} of ${booked} ns`);
  });
}

const HANG = `
import c_take(string \`id, int \`k, name \`got) as take : WAITS;
import c_show(value \`got) as show;

sub main(int n)
{
    df got;
    for i = 0..n-1 {
        cf t[i]: take("z", i, got[i]) @ { locator_cyclic: 1; };
        show(got[i]) @ { locator_cyclic: 1; };
    }
}
`;

const HANG_UCODES = `
import { context, type DF } from ${JSON.stringify(UCODE_API)};

/** Takes the test lock z and never gives it back: the second taker waits for good. */
export function c_take(id: string, k: number, got: DF): void {
  context().request('test.acquire', { id });
  got.setInt(k);
}

export function c_show(got: DF): void {}
`;

for (const nodes of [1, 2]) {
  test(`a request no handler works on is a hang report naming the waiting CF, not a silent hang, ${nodes} node(s) × 2 threads`, async (t) => {
    const dir = fixture(t, { 'prog.fa': HANG, 'ucodes.ts': HANG_UCODES });
    const ran = await runWithResource(dir, { nodes, threads: 2, args: ['2'] });
    const r = ran.results[0]!;
    assert.equal(r.ok, false);
    assert.equal(r.kind, 'hang', r.message);
    const on = nodes > 1 ? ' on node 1' : '';
    // (the show of the missing value waits for it, in the node's queue or fed behind the taker)
    assert.match(r.message!, /^the program hangs: nothing can run while .*1 CF\(s\) wait for answers to their requests that never come$/m);
    assert.match(r.message!, new RegExp(`^  CF t\\[\\d\\] \\(ucode c_take, id [^)]+\\) at .*prog\\.fa:9:\\d+${on} waits on worker thread [12] for the answer to its request 'test\\.acquire' \\(test resource z\\), which no handler is working on$`, 'm'));
  });
}
