// NPB IS on the SPMD layer (examples/npb-is): class S passes the benchmark's own partial and full
// verification on 1, 2 and 4 ranks (worker threads) and on 2 in-process nodes, in every variant;
// through `luna spmd` it prints the benchmark's lines; a traced run of the original structure
// shows the seed's finding — waits in collective allocation and at barriers at the allAlloc and
// barrier calls of the iteration — the fixed variants have neither call in their iteration, and
// the nosync one no synchronisation at its collectives' exit.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleSpmdProgram } from '../../src/spmd/bundle.js';
import { runSpmdNode, type SpmdRunResult } from '../../src/spmd/run.js';
import { MemoryMesh } from '../../src/runtime/transport/memory.js';
import { analyzePatternsTrace, type PatternReport } from '../../src/analysis/patterns/index.js';
import { explain, inTempDir, luna, ROOT } from '../cli/helpers.js';

const IS = join(ROOT, 'examples', 'npb-is', 'is.ts');

// One bundle of is.ts for every in-process run of the file (bundling is the same work each time).
let bundled: Promise<{ program: string; cache: string }> | undefined;
after(() => bundled?.then((b) => rmSync(b.cache, { recursive: true, force: true })));
function bundle(): Promise<{ program: string; cache: string }> {
  bundled ??= (async () => {
    const cache = mkdtempSync(join(tmpdir(), 'luna-npb-is-'));
    return { program: await bundleSpmdProgram(IS, cache), cache };
  })();
  return bundled;
}

/** Run IS on `threads` ranks over `nodes` in-process nodes; node 0's result (a failed verification throws on rank 0). */
async function run(threads: number, nodes: number, args: string[]): Promise<SpmdRunResult> {
  const { program } = await bundle();
  if (nodes === 1) return await runSpmdNode({ program, threads, args });
  const mesh = new MemoryMesh(nodes);
  return (await Promise.all(mesh.endpoints.map((tp) => runSpmdNode({ program, threads, args, transport: tp }))))[0]!;
}

/** 1-based line numbers of the source lines of is.ts that contain `text`. */
function linesOf(text: string): number[] {
  return readFileSync(IS, 'utf8').split('\n').flatMap((l, i) => (l.includes(text) ? [i + 1] : []));
}

test('class S verifies on 1, 2 and 4 ranks, in every variant', async () => {
  for (const variant of ['original', 'fixed', 'nosync']) {
    for (const threads of variant === 'nosync' ? [4] : [1, 2, 4]) {
      const r = await run(threads, 1, ['S', variant]);
      assert.equal(r.message, undefined, `${variant}, ${threads} ranks`);
      assert.equal(r.ok, true, `${variant}, ${threads} ranks`);
    }
  }
});

test('class S verifies on 2 in-process nodes (2 and 4 ranks): keys pulled across nodes', async () => {
  for (const [threads, variant] of [[2, 'original'], [4, 'fixed'], [4, 'nosync']] as const) {
    const r = await run(threads, 2, ['S', variant]);
    assert.equal(r.message, undefined, `${variant}, ${threads} ranks`);
    assert.equal(r.ok, true, `${variant}, ${threads} ranks`);
  }
});

test('luna spmd: the benchmark\'s report, every check passed; a bad class or rank count fails with a message', async () => {
  await inTempDir('luna-npb-is-', async (dir) => {
    const r = await luna(['spmd', '--threads', '2', IS, 'S'], dir, 120_000);
    assert.equal(r.status, 0, explain(r));
    assert.match(r.stdout, /Class S, 65536 keys, 10 iterations, 2 rank\(s\), original/, explain(r));
    // 5 test keys × 10 iterations, and one full verification per rank
    assert.match(r.stdout, /Verification {4}= SUCCESSFUL \(52 of 52 checks\)/, explain(r));
    assert.match(r.stdout, /^npb-is: OK \(class S, 2 ranks, original, \d+\.\d+ s\)$/m, explain(r));
    const bad = await luna(['spmd', '--threads', '1', IS, 'Q'], dir, 120_000);
    assert.equal(bad.status, 1, explain(bad));
    assert.match(bad.stderr, /unknown class 'Q' \(one of S, W, A\)/, explain(bad));
    const three = await luna(['spmd', '--threads', '3', IS, 'S'], dir, 120_000);
    assert.equal(three.status, 1, explain(three));
    assert.match(three.stderr, /3 ranks: IS runs on a power of two ranks/, explain(three));
  });
});

// The traced runs through `luna spmd --trace`; their traces read by the pattern engine in this
// process (what `luna analyze patterns --json` prints: test/analysis/patterns-cli.test.ts runs the command)
async function patterns(dir: string, variant: string): Promise<PatternReport> {
  const tr = `tr-${variant}`;
  const r = await luna(['spmd', '--threads', '4', '--trace', tr, IS, 'S', variant], dir, 120_000);
  assert.equal(r.status, 0, explain(r));
  return analyzePatternsTrace(join(dir, tr));
}

const atLine = (site: string, lines: number[]): boolean => lines.some((l) => new RegExp(`is\\.ts:${l}:\\d+$`).test(site));

test('traced, 4 ranks: the engine finds waits in the per-iteration allocation and at the barriers; the fixed variants have neither in their loop', async () => {
  await inTempDir('luna-npb-is-trace-', async (dir) => {
    const loopAllocs = linesOf('?? allAlloc(');
    const loopBarriers = linesOf('if (!fixed) barrier();');
    assert.equal(loopAllocs.length, 2);
    assert.equal(loopBarriers.length, 3);
    const original = await patterns(dir, 'original');
    const alloc = original.patterns.find((p) => p.id === 'wait_in_all_alloc');
    assert.ok(alloc?.sites.some((s) => atLine(s.site, loopAllocs) && s.locations.some((l) => l.wasted > 0)), JSON.stringify(original.patterns.map((p) => p.id)));
    // the others wait for rank 0's allocation (a round trip to the node's system thread) at every
    // iteration: above the noise threshold on any machine
    assert.equal(alloc?.found, true);
    const bar = original.patterns.find((p) => p.id === 'wait_at_barrier');
    assert.ok(bar?.sites.some((s) => atLine(s.site, loopBarriers) && s.locations.some((l) => l.wasted > 0)), JSON.stringify(original.patterns.map((p) => p.id)));
    const fixed = await patterns(dir, 'fixed');
    for (const p of fixed.patterns) {
      for (const s of p.sites) assert.ok(!atLine(s.site, [...loopAllocs, ...loopBarriers]), `${p.id} at ${s.site} in the fixed variant`);
    }
    // what remains is at the collectives; the nosync variant leaves them without waiting at exit
    const collectives = [...linesOf('gatherAll(sums, counts'), ...linesOf('exchange(recvInfo, sendInfo')];
    assert.equal(collectives.length, 2);
    const nosync = await patterns(dir, 'nosync');
    for (const p of nosync.patterns) {
      for (const s of p.sites) {
        assert.ok(!atLine(s.site, [...loopAllocs, ...loopBarriers]), `${p.id} at ${s.site} in the nosync variant`);
        if (p.id === 'exit_sync' || p.id === 'nxn_exit_sync') assert.ok(!atLine(s.site, collectives), `${p.id} at ${s.site} in the nosync variant`);
      }
    }
  });
});
