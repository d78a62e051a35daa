// Several lanes: a CF woken by the value it waited for is examined before the CFs spawned
// meanwhile, and a tiny one runs before more is examined. A loop written as a recursion that
// passes a DF down expands eagerly (`if k < n` waits for nothing); without this its expansion
// ran ~4 levels per step ahead of the steps, and every step was parked and woken again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runInProcess } from './harness.js';
import type { NodeRuntime } from '../../src/runtime/node/runtime.js';
import { DefaultPolicy } from '../../src/runtime/policy/default.js';
import { ForwardingPolicy } from '../../src/runtime/policy/forward.js';
import type { CodeCost, FragmentView, InlineContext } from '../../src/runtime/policy/types.js';

// The order under test is that of tiny codes. The steps are tiny, but a step descheduled on a
// loaded machine measures long and would go to a lane, late: the policy sees them as measured
// tiny whatever the clock says (its recent calls too, which the rule for codes that became long
// reads), so the test checks the order, not the machine's load.
class TinyCodes extends ForwardingPolicy {
  override runInline(cost: CodeCost, now: InlineContext, cf: FragmentView): boolean {
    return super.runInline({ ...cost, meanNs: Math.min(cost.meanNs, 1), minNs: Math.min(cost.minNs, 1), lastNs: Math.min(cost.lastNs, 1), recentNs: Math.min(cost.recentNs, 1) }, now, cf);
  }
}

const PROGRAM = `import c_init(name \`x) as init;
import c_step(value \`a, name \`b) as step;
import c_show(value \`a) as show;
sub loop(int n, int k, name prev)
{
    df cur;
    cf s: step(prev, cur);
    if k < n
        loop(n, k + 1, cur);
    if k == n
        show(cur);
}
sub main(int n)
{
    df x;
    init(x);
    loop(n, 0, x);
}
`;

type In = { getInt(): number };
type Out = { setInt(v: number): void };

async function recurse(lanes: number, n: number): Promise<{ out: number[]; peakLive: number; peakWaiting: number }> {
  let rt: NodeRuntime | undefined;
  const out: number[] = [];
  let peakLive = 0, peakWaiting = 0;
  const ucodes = {
    c_init: (x: Out) => x.setInt(0),
    c_step: (a: In, b: Out) => {
      peakLive = Math.max(peakLive, rt!.st.live);
      peakWaiting = Math.max(peakWaiting, rt!.st.waiting.size);
      b.setInt(a.getInt() + 1);
    },
    c_show: (a: In) => { out.push(a.getInt()); },
  };
  const r = await runInProcess(PROGRAM, ucodes, { lanes, inline: true, policy: new TinyCodes(new DefaultPolicy()), args: [String(n)], observe: (x) => { rt = x; } });
  assert.equal(r.ok, true, r.message);
  return { out, peakLive, peakWaiting };
}

test('with 2 lanes an eager recursion keeps its steps up with its expansion', async () => {
  const n = 4000;
  const two = await recurse(2, n);
  assert.deepEqual(two.out, [n + 1]);
  // the steps run as the levels appear: a few hundred levels live at once, not thousands (2 934
  // live CFs before). Where the pump's time slices end moves the peak: 104–312 parked CFs over
  // runs of one build, so the bound sits between that and the old behaviour.
  assert.ok(two.peakLive < n / 5, `peak live CFs ${two.peakLive}`);
  assert.ok(two.peakWaiting < n / 5, `peak parked CFs ${two.peakWaiting}`);
});

test('one lane (FIFO order) computes the same', async () => {
  const one = await recurse(1, 500);
  assert.deepEqual(one.out, [501]);
});
