// bin/luna's V8 inlining budget (its first line: --max-inlined-bytecode-size-cumulative) and
// LUNA_V8_INLINE, which lifts it for a run: the value reaches the worker threads that run the
// ucodes, on every node's process, and a bad value is refused by name. Node is started with
// bin/luna's own first-line flags, as the file itself starts it. A ucode reads the budget of
// the thread it runs on through V8's flag hash (v8.cachedDataVersionTag): setting a flag to the
// value it already has leaves the hash as it was, another value changes it.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { explain, inTempDir, LUNA, runNode } from './helpers.js';

/** The node flags of bin/luna's first line. */
const SHEBANG_FLAGS = readFileSync(LUNA, 'utf8').split('\n')[0]!.split(/\s+/).filter((a) => a.startsWith('--'));
const FLAG = '--max-inlined-bytecode-size-cumulative';
const LUNAS_BUDGET = Number(SHEBANG_FLAGS.find((a) => a.startsWith(`${FLAG}=`))?.slice(FLAG.length + 1));

const PROGRAM = `
import c_probe(int \`node, int \`budget, name \`done) as probe;
import c_both(value \`a, value \`b) as both;

sub main(int budget)
{
    df a, b;
    cf p0: probe(0, budget, a) @ { locator_cyclic: 0; };
    cf p1: probe(1, budget, b) @ { locator_cyclic: 1; };
    both(a, b);
}
`;

const UCODES = `
import v8 from 'node:v8';
import { isMainThread } from 'node:worker_threads';

/** whether this thread's V8 flags are unchanged by setting the inlining budget to n (n is the budget) */
function setKeepsHash(n) {
  const before = v8.cachedDataVersionTag();
  v8.setFlagsFromString('${FLAG}=' + n);
  return v8.cachedDataVersionTag() === before;
}

export function c_probe(node, budget, done) {
  const is = setKeepsHash(budget);
  // the hash must see this flag at all: another value changes it (then the budget is put back)
  const seen = !setKeepsHash(budget + 1);
  v8.setFlagsFromString('${FLAG}=' + budget);
  console.log('probe node ' + node + ' on ' + (isMainThread ? 'the system thread' : 'a worker thread') + ': budget ' + budget + ' ' + is + ', hash follows it ' + seen);
  done.setInt(1);
}

export function c_both(a, b) {}
`;

/** Run the program on 2 node processes, one worker each, fragments on workers only, `env` added. */
async function probe(dir: string, budget: number, env: Record<string, string | undefined>): Promise<string> {
  writeFileSync(join(dir, 'prog.fa'), PROGRAM);
  writeFileSync(join(dir, 'ucodes.ts'), UCODES);
  const e = { ...process.env, ...env };
  for (const k of Object.keys(env)) if (env[k] === undefined) delete e[k];
  const r = await runNode([...SHEBANG_FLAGS, LUNA, 'run', '--nodes', '2', '--threads', '1', '--cf-timeout', '60s', join(dir, 'prog.fa'), String(budget)], dir, 120_000, e);
  assert.equal(r.status, 0, explain(r));
  return r.stdout;
}

const probed = (node: number, budget: number): RegExp => new RegExp(`^probe node ${node} on a worker thread: budget ${budget} true, hash follows it true$`, 'm');

test("the workers of every node run with bin/luna's inlining budget, and with LUNA_V8_INLINE's when it is set", async () => {
  assert.ok(LUNAS_BUDGET > 0, `bin/luna's first line sets ${FLAG}: ${SHEBANG_FLAGS.join(' ')}`);
  await inTempDir('luna-inlining-', async (dir) => {
    const own = await probe(dir, LUNAS_BUDGET, { LUNA_V8_INLINE: undefined });
    for (const node of [0, 1]) assert.match(own, probed(node, LUNAS_BUDGET), own);
    const lifted = await probe(dir, 777, { LUNA_V8_INLINE: '777' });
    for (const node of [0, 1]) assert.match(lifted, probed(node, 777), lifted);
    // `default` is V8's own budget
    const v8s = await probe(dir, 920, { LUNA_V8_INLINE: 'default' });
    for (const node of [0, 1]) assert.match(v8s, probed(node, 920), v8s);
  });
});

test('LUNA_V8_INLINE that is not a number of bytes is refused by name, before anything runs', async () => {
  await inTempDir('luna-inlining-bad-', async (dir) => {
    for (const bad of ['more', '-5', '1e3', '2000000']) {
      const r = await runNode([LUNA, '--version'], dir, 60_000, { ...process.env, LUNA_V8_INLINE: bad });
      assert.equal(r.status, 2, explain(r));
      assert.equal(r.stdout, '');
      assert.match(r.stderr, new RegExp(`^luna: error: LUNA_V8_INLINE must be a number of bytes \\(0 to 1000000\\) or default, got "${bad}"\\n$`));
    }
  });
});
