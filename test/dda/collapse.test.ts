// examples/collapse: one dynamic array of particles over the nodes, rearranged every few steps
// with weights = each node's measured throughput (language.md §9.11, `@ { weights: W; }`).
// Through the CLI on 2 node processes, the particles end where the sequential reference puts
// them; in process on 3 nodes, the blocks' counts after each rearrangement are exactly the
// shares its weights ask (counts; the weights themselves come from timings and are whatever
// they are), and without weights the counts never change.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { dynamicArrays } from '../../src/runtime/dda/index.js';
import { shares } from '../../src/runtime/dda/plan.js';
import { WORDS, reference, slab } from '../../examples/collapse/physics.js';
import { fixture, runWithResource } from '../ucode/fixtures.js';

const EXAMPLE = 'examples/collapse/collapse.fa';

for (const weighted of [1, 0]) {
  test(`the collapse example through the CLI on 2 node processes, ${weighted ? 'weighted' : 'fixed'} shares: every particle once, where the reference puts it`, () => {
    const r = spawnSync(process.execPath, ['bin/luna', 'run', '-q', '--nodes', '2', '--threads', '1', EXAMPLE, '3000', '12', '2', '3', String(weighted), '1'], { encoding: 'utf8', timeout: 180_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, new RegExp(`collapse: OK \\(n=3000, 12 steps, 2 node\\(s\\), ${weighted ? 'weighted' : 'fixed'} shares; max deviation from the reference 0\\)`));
  });
}

/** The example's ucodes, with each step's count per node and each rearrangement's weights written to `log`. */
const recording = (log: string): string => `
import { appendFileSync } from 'node:fs';
import { c_push as push, c_weights as weights } from ${JSON.stringify(resolve('examples/collapse/ucodes.ts'))};
export * from ${JSON.stringify(resolve('examples/collapse/ucodes.ts'))};
export function c_push(P, go, step, k, st) { appendFileSync(${JSON.stringify(log)}, JSON.stringify({ step, k, count: P.getNumel() }) + '\\n'); push(P, go, step, k, st); }
export function c_weights(w, W) { weights(w, W); appendFileSync(${JSON.stringify(log)}, JSON.stringify({ weights: W.getValue() }) + '\\n'); }
`;

for (const weighted of [1, 0]) {
  test(`the collapse example in process on 3 nodes, ${weighted ? 'weighted: the counts after each rearrangement are its weights\' shares' : 'fixed: the counts never change'}; node 0 ends with the reference's particles`, async (t) => {
    const n = 2400, steps = 9, every = 3, nodes = 3;
    const dir = fixture(t, { 'prog.fa': readFileSync(EXAMPLE, 'utf8'), 'ucodes.ts': '' });
    const log = join(dir, 'log.jsonl');
    (await import('node:fs')).writeFileSync(join(dir, 'ucodes.ts'), recording(log));
    const layer = dynamicArrays();
    const ran = await runWithResource(dir, { nodes, threads: 1, args: [n, steps, nodes, every, weighted, 0].map(String), layers: [layer] });
    for (const r of ran.results) assert.equal(r.ok, true, r.message);
    const lines = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { step?: number; k?: number; count?: number; weights?: number[] });
    const counts = (s: number): number[] => [0, 1, 2].map((k) => lines.find((l) => l.step === s && l.k === k)!.count!);
    const weightsSeen = lines.filter((l) => l.weights).map((l) => l.weights!);
    // the slabs the nodes start with
    const start = [0, 1, 2].map((k) => slab(n, nodes, k).length / WORDS);
    assert.deepEqual(counts(0), start);
    if (weighted) {
      // a rearrangement after steps 2 and 5 (not after the last): the next step's counts are its shares
      assert.equal(weightsSeen.length, 2);
      for (const [r, s] of [[0, 3], [1, 6]] as const) {
        assert.equal(weightsSeen[r]!.length, nodes);
        assert.deepEqual(counts(s), shares(n, [0, 1, 2], weightsSeen[r]!), `after step ${s - 1}`);
        // and they hold until the next one
        assert.deepEqual(counts(s + 1), counts(s));
      }
    } else {
      assert.equal(weightsSeen.length, 0);
      for (let s = 1; s < steps; s++) assert.deepEqual(counts(s), start);
    }
    // everything gathered on node 0, each particle once, where the sequential reference puts it
    const f = layer.nodes[0]!.block('P').f64();
    const ref = reference(n, steps);
    const seen = new Set<number>();
    let worst = 0;
    for (let i = 0; i < f.length / WORDS; i++) {
      const id = f[i * WORDS]!;
      assert.ok(!seen.has(id), `particle ${id} twice`);
      seen.add(id);
      for (let j = 1; j < 7; j++) worst = Math.max(worst, Math.abs(f[i * WORDS + j]! - ref[id * WORDS + j]!));
    }
    assert.equal(seen.size, n);
    assert.ok(worst <= 1e-12, `deviation ${worst}`);
    // the particles moved: the reference is not the start
    assert.notEqual(ref[1], slab(n, 1, 0)[1]);
    assert.deepEqual(layer.nodes.slice(1).map((d) => d.block('P').getNumel()), [0, 0]);
  });
}
