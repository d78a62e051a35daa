// Faults of the DF protocol name their authors, on one node and on two (real node processes):
// a DF assigned twice names both writers, their positions and nodes, and the node holding the
// DF; a DF read more often than its req_count allows blames the reader that asked once too
// often, not the producer. A DF read less often than its req_count is no fault, but it is not
// silent either: --timing counts it and the SLOW analysis of the trace names it.
import { before, after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { explain, luna, type Run } from './helpers.js';

const UCODES = `
export function c_set(v: number, x: { setInt(v: number): void }): void { x.setInt(v); }
export function c_huge(gib: number, x: { create(n: number): Uint8Array }): void { x.create(gib * 2 ** 30); }
export function c_show(tag: string, x: { getInt(): number }): void { console.log(\`\${tag} \${x.getInt()}\`); }
`;
const HEAD = 'import c_set(int `v, name `x) as set;\nimport c_show(string `tag, value `x) as show;\n';

const PROGRAMS: Record<string, string> = {
  // lines 5, 6: the two writers
  'twice.fa': `${HEAD}sub main() {\n    df a;\n    cf w1: set(1, a) @ { locator_cyclic: 0; };\n    cf w2: set(2, a) @ { locator_cyclic: 1; };\n    cf rd: show("a", a);\n}\n`,
  // lines 5, 6: two readers of x, which may be read once
  // a raw DF larger than one message between nodes can carry
  'huge.fa': 'import c_huge(int \`gib, name \`x) as huge;\nsub main() {\n    df x;\n    cf h: huge(5, x);\n}\n',
  // x may be read 3 times and is read once: it stays held to the end; y is spent
  'overcount.fa': `${HEAD}sub main() {\n    df x, y;\n    cf p: set(5, x) @ { req_count x = 3; };\n    cf r1: show("r1", x);\n    cf q: set(7, y) @ { req_count y = 1; };\n    cf r2: show("r2", y);\n}\n`,
  'toomany.fa': `${HEAD}sub main() {\n    df x;\n    cf r1: show("r1", x) @ { locator_cyclic: 0; };\n    cf r2: show("r2", x) @ { locator_cyclic: 1; };\n    cf p: set(5, x) @ { req_count x = 1; };\n}\n`,
};

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'luna-df-faults-'));
  writeFileSync(join(dir, 'ucodes.ts'), UCODES);
  for (const [f, text] of Object.entries(PROGRAMS)) writeFileSync(join(dir, f), text);
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

const run = (nodes: number, file: string): Promise<Run> => luna(['run', '--nodes', String(nodes), '--threads', '1', file], dir);

function assertFault(r: Run): void {
  assert.equal(r.status, 1, explain(r));
  assert.doesNotMatch(r.stderr, /internal error|\n\s+at /, explain(r));
}

const W1 = /CF w1 \(ucode c_set(, id \d+)?\) at twice\.fa:5:5/.source;
const W2 = /CF w2 \(ucode c_set(, id \d+)?\) at twice\.fa:6:5/.source;

test('double assignment on one node: both writers with their positions', async () => {
  const r = await run(1, 'twice.fa');
  assertFault(r);
  // one node runs in spawn order: w1 writes first, w2 is the second writer
  assert.match(r.stderr, new RegExp(`^luna: error: DF a is assigned twice \\(Duplicate id in post\\): it already holds the value of ${W1}\\n  in ${W2.replace('(, id \\d+)?', ', id \\d+')} on node 0$`, 'm'), explain(r));
});

test('double assignment on two nodes: both writers, their nodes, and the node holding the DF', async () => {
  const r = await run(2, 'twice.fa');
  assertFault(r);
  // the writers race to node 0, which holds a: whichever came second is the one blamed
  const first = `(${W1} on node 0|${W2} on node 1)`;
  const second = `(CF w1 \\(ucode c_set, id \\d+\\) at twice\\.fa:5:5 on node 0|CF w2 \\(ucode c_set, id \\d+\\) at twice\\.fa:6:5 on node 1)`;
  const m = new RegExp(`^luna: error: DF a \\(held by node 0\\) is assigned twice \\(Duplicate id in post\\): it already holds the value of ${first}\\n  in ${second}$`, 'm').exec(r.stderr);
  assert.ok(m, explain(r));
  assert.notEqual(m[1]!.slice(0, 6), m[m.length - 1]!.slice(0, 6), `two different writers\n${explain(r)}`);
});

test('too many requests on one node: the reader that asked once too often is blamed, not the producer', async () => {
  const r = await run(1, 'toomany.fa');
  assertFault(r);
  assert.match(r.stderr, /^luna: error: too many requests for DF x\b[^\n]*\(Too many requests\)\n {2}in CF r2 \(ucode c_show, id \d+\) at toomany\.fa:6:5 on node 0$/m, explain(r));
  assert.doesNotMatch(r.stderr, /CF p\b/, explain(r));
});

test('too many requests on two nodes: the remote reader is blamed on its node; the DF names its holder', async () => {
  const r = await run(2, 'toomany.fa');
  assertFault(r);
  assert.match(r.stderr, /^luna: error: too many requests for DF x \(held by node 0\)[^\n]*\(Too many requests\)\n {2}in CF r2 \(ucode c_show, id \d+\) at toomany\.fa:6:5 on node 1$/m, explain(r));
  assert.doesNotMatch(r.stderr, /CF p\b/, explain(r));
});

test('create() above the largest raw DF is refused with the limit, naming the DF and the CF', async () => {
  const r = await run(1, 'huge.fa');
  assert.equal(r.status, 1, explain(r));
  // the ucode's own frame (ucodes.ts) follows its exception; a runtime frame never
  assert.doesNotMatch(r.stderr, /internal error|^\s+at (?!.*ucodes\.ts:)/m, explain(r));
  assert.match(r.stderr, /^luna: error: exception in ucode c_huge: create\(5368709120\) on DF x: a raw DF holds a whole number of bytes from 0 to 4294901760 \(4 GiB less 64 KiB, the most one message between nodes carries\)$/m, explain(r));
  assert.match(r.stderr, /in CF h \(ucode c_huge, id \d+\) at huge\.fa:4:5 on node 0/, explain(r));
});

for (const nodes of [1, 2]) {
  test(`a req_count never reached, ${nodes} node(s): counted by --timing, named by the analysis of the trace`, async () => {
    const trace = join(dir, `overcount-${nodes}.ltr`);
    const r = await luna(['run', '--nodes', String(nodes), '--threads', '1', '--timing', '--trace', trace, 'overcount.fa'], dir);
    assert.equal(r.status, 0, explain(r));
    assert.match(r.stdout, /r1 5/, explain(r));
    const timing = JSON.parse(/luna: timing: (\{.*\})/.exec(r.stderr)?.[1] ?? '{}') as Record<string, number>;
    assert.equal(timing.unspentDfs, 1, explain(r));
    const a = await luna(['analyze', 'slow', trace], dir);
    assert.equal(a.status, 0, explain(a));
    const where = nodes > 1 ? ' on node \\d' : '';
    assert.match(a.stdout, new RegExp(`1 DF \\(4 B\\) stayed in memory to the end of the run: its req_count was never reached — x${where} \\(4 B, 2 reads short\\)\\. `), explain(a));
    assert.doesNotMatch(a.stdout, /— y/, 'y was spent');
  });
}
