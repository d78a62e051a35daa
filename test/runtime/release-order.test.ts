// What a CF posts to its node (a dynamic array's release, whose STAND must leave before the CF's
// outputs) reaches the system thread before the result of any CF that used those outputs — also
// when the output was fed straight to a worker on another lane and that worker's result comes
// first. Real worker threads: CF a on lane 1 posts, then its output is fed to CF b on lane 0;
// lane 1 then stays busy, so b's result is the first result the system thread sees. The system
// thread is kept busy until b has run, so a's post and b's result wait for it together: it must
// hand over the post first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkerPool } from '../../src/runtime/exec/pool.js';
import type { ImportDef, ParamType } from '../../src/core/imports.js';
import type { BatchResult, WireRequest } from '../../src/runtime/exec/protocol.js';

/** a: posts, then sets its output; b: reads a's output (fed), marks that it ran; hold: busy until told to end. */
const MODULE = (ran: string, go: string): string => `
import { existsSync, writeFileSync } from 'node:fs';
const ctx = () => globalThis[Symbol.for('luna-ts.ucode.context')];
export function c_a(x) { ctx().post('test.release', { from: 'a' }); x.setInt(7); }
export function c_b(v, y) { y.setInt(v.getInt() + 1); writeFileSync(${JSON.stringify(ran)}, ''); }
export function c_hold(k) {
  const until = Date.now() + 30000;
  while (!existsSync(${JSON.stringify(go)}) && Date.now() < until) { /* busy: lane 1's result comes after */ }
}
`;

const imp = (index: number, symbol: string, params: ParamType[]): ImportDef => ({ alias: symbol, symbol, params, code: index, index, waits: false });

/** Block this thread until `cond` holds (at most `ms`): whatever is posted to it meanwhile waits. */
function blockUntil(cond: () => boolean, ms: number): boolean {
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (const t0 = Date.now(); Date.now() - t0 < ms; Atomics.wait(nap, 0, 0, 2)) if (cond()) return true;
  return cond();
}

test("a CF's post is handed over before the result of a CF on another lane that its output was fed to", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'luna-release-order-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const ran = join(dir, 'b-ran'), go = join(dir, 'go'), bundle = join(dir, 'ucodes.mjs');
  writeFileSync(bundle, MODULE(ran, go));
  const seen: string[] = [];
  let first!: (r: BatchResult) => void;
  const firstResult = new Promise<BatchResult>((res) => { first = res; });
  let both!: () => void;
  const allResults = new Promise<void>((res) => { both = res; });
  const results: BatchResult[] = [];
  const pool = new WorkerPool({
    lanes: 2, feed: true, bundle,
    imports: [imp(0, 'c_a', ['name']), imp(1, 'c_b', ['value', 'name']), imp(2, 'c_hold', ['int'])],
    onRequest: (lane, r: WireRequest) => { seen.push(`post of lane ${lane}: ${r.kind}`); },
    onResult: (r) => {
      seen.push(`result of lane ${r.lane}`);
      results.push(r);
      if (results.length === 1) first(r);
      if (results.length === 2) both();
    },
    onDeath: (lane, _cf, cause) => { seen.push(`worker ${lane} ${cause}`); first({ lane, batch: -1, outs: [] }); both(); },
  });
  try {
    await pool.allBooted();
    assert.ok(pool.feeds, 'the pool feeds values across lanes');
    // lane 1: a, then hold (its result comes only once hold ends); a's output 0 is fed to lane 0.
    // The request goes first: sent after the batch, it may reach lane 1 only once a has run and
    // hold holds the lane, which answers it when hold ends (seen once in CI: b waited 30 s)
    pool.feed(1, [1, 0, 0, 0]);
    pool.send(1, { id: 1, tasks: [{ cf: 1, imp: 0, args: [null], keys: ['x'] }, { cf: 2, imp: 2, args: [0], keys: [''] }] });
    // lane 0: b, whose input is a's output on lane 1
    pool.send(0, { id: 2, tasks: [{ cf: 3, imp: 1, args: [null, null], keys: ['x', 'y'], fwd: [{ arg: 0, lane: 1, batch: 1, task: 0, out: 0 }] }] });
    // this thread takes no message until b has run and its worker had time to post the result:
    // a's post (made before its output was fed) and b's result then wait here side by side
    assert.ok(blockUntil(() => existsSync(ran), 30_000), 'b ran on lane 0 with the value fed from lane 1');
    blockUntil(() => false, 100);
    const r = await firstResult;
    assert.equal(r.lane, 0, `b's result is the first (${seen.join('; ')})`);
    assert.equal((r.outs[0]![0] as { v: number } | null)?.v, 8, 'b read a\'s output, fed');
    assert.deepEqual(seen.slice(0, 2), ['post of lane 1: test.release', 'result of lane 0'], 'a\'s post was handed over before b\'s result');
    writeFileSync(go, '');
    await allResults;
    assert.deepEqual(seen, ['post of lane 1: test.release', 'result of lane 0', 'result of lane 1']);
  } finally {
    writeFileSync(go, '');
    await pool.stop();
  }
});
