// A lane starved of a core: it holds a value fed to it that it has not looked at while it runs
// no CF. A worker spinning for that lane's next value stops spinning then and leaves its core
// (worker.ts fed). Two lanes' exchanges (exchange.ts) on real ports and feed slots: the value one
// hands the other makes the other starved until it looks; a lane running a CF never is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Exchange } from '../../src/runtime/exec/exchange.js';
import { feedsFlag, inboxFlag, runningFlag, starved } from '../../src/runtime/exec/protocol.js';
import { T_REAL, T_STRING, type DfValue } from '../../src/ucode/value.js';
import { pair } from './exchange-pair.js';

for (const [kind, v] of [['a real, through the feed slots', { t: T_REAL, v: 2.5 }], ['a string, as a message', { t: T_STRING, v: 'x' }]] as [string, DfValue][]) {
  test(`a lane handed ${kind} is starved until it looks at it, unless it runs a CF`, async () => {
    const { flags, x, ctl, close } = pair();
    try {
      const [a, b] = x as [Exchange, Exchange];
      assert.equal(starved(flags, 2, 1), false, 'nothing fed yet');
      // lane 0 runs task 0 of its batch 3; the system thread asks it to feed output 0 to lane 1
      const outs: (DfValue | null)[][] = [];
      a.begin(3, outs);
      ctl[0]!.port1.postMessage([3, 0, 0, 1]);
      await new Promise((r) => setTimeout(r, 20)); // the request reaches lane 0's port
      Atomics.add(flags, feedsFlag(2, 0), 1); // as the system thread does after a request
      outs[0] = [v];
      a.ran(3, 0);
      assert.equal(flags[inboxFlag(2, 1)], 1, 'lane 1 was handed the value');
      assert.equal(starved(flags, 2, 1), true, 'handed a value it has not looked at, running no CF');
      flags[runningFlag(2, 1)] = 7;
      assert.equal(starved(flags, 2, 1), false, 'a lane running a CF is on a CPU');
      flags[runningFlag(2, 1)] = -1;
      await new Promise((r) => setTimeout(r, 20)); // a message on the pair's port arrives
      assert.deepEqual(b.take(0, 3, 0, 0), v);
      assert.equal(starved(flags, 2, 1), false, 'it looked');
      assert.equal(starved(flags, 2, 0), false, 'lane 0 was handed nothing');
    } finally { close(); }
  });
}
