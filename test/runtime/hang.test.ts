// Hang detection (always on): when nothing can run while CFs wait for DFs nobody produces, the
// run stops within seconds with exit 1 and reports every waiting CF (label, indices,
// file:line:col) and the DFs it waits for — on one node and merged across nodes.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertFails, describeRun, lines, luna, program, runArgs } from './helpers.js';

const HANG = program('hang');
const WAITERS = [
  /CF w\[2\] \(ucode c_show, id [\d_]+\)[^\n]* at [^\n]*hang\.fa:12:9[^\n]* waits for x\[2\]/,
  /CF w\[3\] \(ucode c_show, id [\d_]+\)[^\n]* at [^\n]*hang\.fa:12:9[^\n]* waits for x\[3\]/,
  /CF v \(ucode c_show2, id [\d_]+\)[^\n]* at [^\n]*hang\.fa:14:5[^\n]* waits for z\b/,
];
// Liveness bound of the whole run, node start-up included (~1–2 s on an idle 2-core machine;
// the margin is for a loaded one): a run that reaches it is killed and the test fails.
const LIMIT_MS = 30_000;

describe('hang report', { concurrency: true }, () => {
  for (const [nodes, threads] of [[1, 1], [1, 2], [2, 1], [2, 2], [3, 1]] as const) {
    test(`--nodes ${nodes} --threads ${threads}: exit 1 within ${LIMIT_MS / 1000} s naming every waiting CF and its DF`, async () => {
      const r = await luna(runArgs(nodes, threads, { file: HANG }), { timeoutMs: LIMIT_MS });
      assertFails(r, [/hang/i, ...WAITERS]);
      assert.deepEqual(lines(r.stdout), ['fine'], describeRun(r));
      // the merged report mentions each waiting CF once
      assert.equal(r.stderr.match(/CF w\[2\]/g)?.length, 1, describeRun(r));
      assert.equal(r.stderr.match(/CF w\[3\]/g)?.length, 1, describeRun(r));
      assert.equal(r.stderr.match(/CF v /g)?.length, 1, describeRun(r));
      if (nodes > 1) {
        // w[3] is placed on node 3 mod N (locator_cyclic: i): the report says where it waits
        assert.match(r.stderr, new RegExp(`CF w\\[3\\][^\\n]*node ${3 % nodes}`), describeRun(r));
      }
    });
  }
});
