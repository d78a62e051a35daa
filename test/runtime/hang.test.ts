// Hang detection (always on): when nothing can run while CFs wait for DFs nobody produces, the
// run stops with exit 1 and reports every waiting CF (label, indices, file:line:col) and the DFs
// it waits for — on one node and merged across nodes. In one process on 1–3 nodes with 1–2
// lanes (files.ts), and end to end over node processes and sockets once.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertFails, describeRun, lines, luna, program, runArgs } from './helpers.js';
import { runFile } from './files.js';

const HANG = program('hang');
const WAITERS = [
  /CF w\[2\] \(ucode c_show, id [\d_]+\)[^\n]* at [^\n]*hang\.fa:12:9[^\n]* waits for x\[2\]/,
  /CF w\[3\] \(ucode c_show, id [\d_]+\)[^\n]* at [^\n]*hang\.fa:12:9[^\n]* waits for x\[3\]/,
  /CF v \(ucode c_show2, id [\d_]+\)[^\n]* at [^\n]*hang\.fa:14:5[^\n]* waits for z\b/,
];
// Liveness bound of the whole run, node start-up included (~1–2 s on an idle 2-core machine;
// the margin is for a loaded one): a run that reaches it is killed and the test fails.
const LIMIT_MS = 30_000;

/** The report names each waiting CF once, and where w[3] waits (locator_cyclic: i). */
function assertReport(report: string, nodes: number, why: string): void {
  for (const w of [/hang/i, ...WAITERS]) assert.match(report, w, why);
  assert.equal(report.match(/CF w\[2\]/g)?.length, 1, why);
  assert.equal(report.match(/CF w\[3\]/g)?.length, 1, why);
  assert.equal(report.match(/CF v /g)?.length, 1, why);
  if (nodes > 1) assert.match(report, new RegExp(`CF w\\[3\\][^\\n]*node ${3 % nodes}`), why);
}

describe('hang report in one process', () => {
  for (const [nodes, lanes] of [[1, 1], [1, 2], [2, 1], [2, 2], [3, 1], [3, 2]] as const) {
    test(`${nodes} node(s), ${lanes} lane(s): every waiting CF and its DF, once, merged`, async () => {
      const r = await runFile(HANG, { nodes, lanes });
      assert.equal(r.kind, 'hang', r.message);
      assert.deepEqual(r.stdout, ['fine']);
      assertReport(r.message ?? '', nodes, r.message ?? '');
      for (const n of r.nodes) assert.equal(n.result?.ok, false);
    });
  }
});

test(`hang report end to end: --nodes 2 --threads 2 exits 1 within ${LIMIT_MS / 1000} s naming every waiting CF and its DF`, async () => {
  const r = await luna(runArgs(2, 2, { file: HANG }), { timeoutMs: LIMIT_MS });
  assertFails(r, []);
  assert.deepEqual(lines(r.stdout), ['fine'], describeRun(r));
  assertReport(r.stderr, 2, describeRun(r));
});
