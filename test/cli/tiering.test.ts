// bin/luna's V8 tiering budget (LUNA_V8_BUDGET): on V8 11 (Node 20) a hot function is optimised
// after fewer calls than with V8's default, the value reaches the whole process, a bad value is
// refused by name, and a program that marks a CF heavy raises it above V8's own (on later V8s,
// which count calls, the counts). A probe (`--import`) counts, as the process exits, the calls a small
// function takes to be optimised; compilation is synchronous so the count is the same every run.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { explain, inTempDir, LUNA, runNode } from './helpers.js';

const PROBE = `import { writeSync } from 'node:fs';
process.on('exit', () => {
  function f(x) { let s = 0; for (let i = 0; i < 3; i++) s += x * i; return s; }
  function drive(n) { let t = 0; for (let i = 0; i < n; i++) t += f(i); return t; }
  %NeverOptimizeFunction(drive);
  let calls = 0;
  while (calls < 1000000 && !(%GetOptimizationStatus(f) & 16)) { drive(10); calls += 10; }
  writeSync(2, 'PROBE-OPTIMISED-AFTER ' + calls + '\\n');
});
`;

async function callsToOptimise(dir: string, budget: string | undefined): Promise<number> {
  const probe = join(dir, 'probe.mjs');
  writeFileSync(probe, PROBE);
  const env = { ...process.env };
  if (budget === undefined) delete env.LUNA_V8_BUDGET; else env.LUNA_V8_BUDGET = budget;
  const r = await runNode(['--allow-natives-syntax', '--no-concurrent-recompilation', '--import', pathToFileURL(probe).href, LUNA, '--version'], dir, 60_000, env);
  assert.equal(r.status, 0, explain(r));
  const m = /^PROBE-OPTIMISED-AFTER (\d+)$/m.exec(r.stderr);
  assert.ok(m, `the probe reports: ${explain(r)}`);
  return Number(m[1]);
}

test("luna's V8 budget optimises a hot function sooner than V8's default on V8 11, and LUNA_V8_BUDGET sets it", async () => {
  await inTempDir('luna-tiering-', async (dir) => {
    const v8s = await callsToOptimise(dir, 'default');
    const luna = await callsToOptimise(dir, undefined);
    const small = await callsToOptimise(dir, '1024');
    if (process.versions.v8.startsWith('11.')) {
      assert.ok(luna < v8s, `luna's budget: optimised after ${luna} calls, V8's default after ${v8s}`);
      assert.ok(small < luna, `LUNA_V8_BUDGET=1024: after ${small} calls, luna's default after ${luna}`);
    } else {
      // later V8s count calls and have no interrupt budget: bin/luna leaves them as they are
      assert.equal(luna, v8s);
      assert.equal(small, v8s);
    }
  });
});

test('LUNA_V8_BUDGET that is not a number of bytes is refused by name, before anything runs', async () => {
  await inTempDir('luna-tiering-bad-', async (dir) => {
    for (const bad of ['fast', '100', '-5']) {
      const r = await runNode([LUNA, '--version'], dir, 60_000, { ...process.env, LUNA_V8_BUDGET: bad });
      assert.equal(r.status, 2, explain(r));
      assert.equal(r.stdout, '');
      assert.match(r.stderr, new RegExp(`^luna: error: LUNA_V8_BUDGET must be a number of bytes \\(at least 1024\\) or default, got "${bad}"\\n$`));
    }
  });
});

const HEAVY = `import c_make(name \`x) as make;
import c_show(value \`x) as show;
sub main()
{
    df x;
    cf m: make(x) @ { heavy; };
    show(x);
}
`;
const HEAVY_UCODES = `export function c_make(x) { x.setInt(7); }
export function c_show(x) { if (x.getInt() !== 7) throw new Error('bad value'); }
`;

/** `luna run --timing` of the heavy program with the probe: the calls to optimise at exit, and the timing line. */
async function heavyRun(dir: string, budget: string | undefined, program = 'heavy.fa'): Promise<{ calls: number; timing: Record<string, unknown> }> {
  const env = { ...process.env };
  if (budget === undefined) delete env.LUNA_V8_BUDGET; else env.LUNA_V8_BUDGET = budget;
  const r = await runNode(['--allow-natives-syntax', '--no-concurrent-recompilation', '--import', pathToFileURL(join(dir, 'probe.mjs')).href, LUNA, 'run', '--timing', program], dir, 60_000, env);
  assert.equal(r.status, 0, explain(r));
  const m = /^PROBE-OPTIMISED-AFTER (\d+)$/m.exec(r.stderr), t = /^luna: timing: (\{.*\})$/m.exec(r.stderr);
  assert.ok(m && t, `the probe and the timing line: ${explain(r)}`);
  return { calls: Number(m[1]), timing: JSON.parse(t[1]!) as Record<string, unknown> };
}

test("a program that marks a CF heavy raises V8's budget above V8's own (V8 11) or its call counts (later V8s); one the user set stays, and so does luna's for fine fragments", async () => {
  await inTempDir('luna-tiering-heavy-', async (dir) => {
    writeFileSync(join(dir, 'probe.mjs'), PROBE);
    writeFileSync(join(dir, 'heavy.fa'), HEAVY);
    writeFileSync(join(dir, 'fine.fa'), HEAVY.replace(' @ { heavy; }', ''));
    writeFileSync(join(dir, 'ucodes.ts'), HEAVY_UCODES);
    const v8s = await callsToOptimise(dir, 'default');
    const luna = await callsToOptimise(dir, undefined);
    const heavy = await heavyRun(dir, undefined);
    const chosen = await heavyRun(dir, '32768');
    const fine = await heavyRun(dir, undefined, 'fine.fa');
    assert.equal(chosen.timing.tieringRelaxedAt, undefined, 'LUNA_V8_BUDGET set by the user: kept');
    assert.equal(fine.timing.tieringRelaxedAt, undefined, 'two short CFs: nothing says the fragments are coarse');
    if (process.versions.v8.startsWith('11.')) {
      assert.equal(heavy.timing.tieringRelaxedAt, 0, 'raised before the first CF, by the hint');
      assert.ok(heavy.calls > v8s, `after the heavy program, optimised after ${heavy.calls} calls: V8's default count ${v8s}`);
      assert.equal(chosen.calls, luna, `with LUNA_V8_BUDGET=32768 after ${chosen.calls} calls: luna's ${luna}`);
      assert.equal(fine.calls, luna);
    } else {
      // later V8s count calls: bin/luna lowers nothing, and a heavy program raises the counts
      assert.equal(luna, v8s);
      assert.equal(heavy.timing.tieringRelaxedAt, 0, 'raised before the first CF, by the hint');
      assert.ok(heavy.calls > v8s, `after the heavy program, optimised after ${heavy.calls} calls: V8's default count ${v8s}`);
      assert.equal(chosen.calls, v8s, 'LUNA_V8_BUDGET set: the counts stay');
      assert.equal(fine.calls, v8s);
    }
  });
});
