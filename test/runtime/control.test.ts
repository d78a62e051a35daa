// The control protocol over participants, on in-process nodes (harness.ts): the run ends only
// when every participant of every node is idle with nothing live and no message in flight; a
// participant idle with work left is a hang whose report names its waits, merged with the
// fragments'; faults, aborts and lost nodes stop every node; clocks are measured over the mesh.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { CHANNEL } from '../../src/runtime/cluster/channels.js';
import type { Control } from '../../src/runtime/cluster/control.js';
import type { Participant, Wait } from '../../src/runtime/cluster/layer.js';
import { runInProcess, type HarnessNode } from './harness.js';

const SAY = `
import c_say(string) as say;
sub main() { for i = 0..3 cf s[i]: say("s" + i) @ { locator_cyclic: i; }; }`;

/** A layer of the test: busy (not idle, one unit live) until finish(), or parked (idle, live) with a reason. */
class TestLayer implements Participant {
  readonly name = 'test layer';
  busy = true;
  parked: Wait | null = null;
  /** whether the run ended on this node while this layer still had work */
  endedBusy = false;
  /** (tests that send once) */
  sent = false;

  constructor(private readonly control: Control) {
    void control.done.then(() => { this.endedBusy = this.busy; });
  }

  finish(): void {
    this.busy = false;
    this.parked = null;
    this.control.wake();
  }

  idle(): boolean { return !this.busy || this.parked !== null; }
  live(): number { return this.busy ? 1 : 0; }
  waits(): Wait[] { return this.parked ? [this.parked] : []; }
  hangSummary(n: number): string { return `${n} rank(s) of the test layer wait at barriers nobody else reaches`; }
}

/** Each node's TestLayer, registered before the program starts. */
function layers(each: (l: TestLayer, n: HarnessNode) => void): { all: TestLayer[]; join: (n: HarnessNode) => void } {
  const all: TestLayer[] = [];
  return {
    all,
    join: (n) => {
      const l = new TestLayer(n.control);
      n.control.register(l);
      all[n.rank] = l;
      each(l, n);
    },
  };
}

const SIZES = [1, 2, 3];

describe('participants', () => {
  for (const nodes of SIZES) {
    test(`a participant busy without fragments or messages keeps the run alive until it finishes (${nodes} node(s))`, async () => {
      const said: string[] = [];
      // busy on the last node until a while after the last CF ran, sending nothing
      const t = layers((l, n) => { if (n.rank < nodes - 1) l.busy = false; });
      const say = (s: string): void => {
        said.push(s);
        if (said.length === 4) setTimeout(() => t.all[nodes - 1]!.finish(), 20);
      };
      const r = await runInProcess(SAY, { c_say: say }, { nodes, join: t.join });
      assert.equal(r.ok, true, r.message);
      assert.deepEqual(said.sort(), ['s0', 's1', 's2', 's3']);
      assert.deepEqual(t.all.map((l) => l.endedBusy), t.all.map(() => false), 'the run ended while a participant had work');
    });

    test(`a participant that never finishes is a hang naming its reason, node and position (${nodes} node(s))`, async () => {
      const t = layers((l, n) => {
        l.parked = { text: `rank ${n.rank} at barrier b.ts:40${nodes > 1 ? ` on node ${n.rank}` : ''}`, origin: { file: 'b.ts', line: 40, col: 3 } };
      });
      const r = await runInProcess(SAY, { c_say: () => {} }, { nodes, join: t.join });
      assert.equal(r.kind, 'hang', r.message);
      const report = r.message ?? '';
      assert.match(report, new RegExp(`^the program hangs: nothing can run while ${nodes} rank\\(s\\) of the test layer wait at barriers nobody else reaches\\n`));
      // one merged report: every node's wait once, in node order (same position)
      const listed = report.split('\n').slice(1).map((l) => l.trim());
      assert.deepEqual(listed, Array.from({ length: nodes }, (_, k) => `rank ${k} at barrier b.ts:40${nodes > 1 ? ` on node ${k}` : ''}`));
      for (const n of r.nodes) assert.equal(n.result?.ok, false);
    });

    test(`a hang lists the waiting CFs and the participants' waits together, by source position (${nodes} node(s))`, async () => {
      const t = layers((l) => { l.parked = { text: 'a wait without a position' }; });
      const r = await runInProcess(`
import c_show(value) as show;
sub main() { df x; cf w: show(x); }`, { c_show: () => {} }, { nodes, join: t.join });
      assert.equal(r.kind, 'hang', r.message);
      const [head, ...items] = (r.message ?? '').split('\n');
      assert.equal(head, `the program hangs: nothing can run while 1 CF(s) wait for data fragments that are never produced and ${nodes} rank(s) of the test layer wait at barriers nobody else reaches`);
      assert.match(items[0]!, new RegExp(`^ {2}CF w \\(ucode c_show, id 0\\) at test\\.fa:3:20 ${nodes > 1 ? 'on node 0 waits for x \\(owned by node 0, never posted\\)' : 'waits for x'}$`));
      assert.deepEqual(items.slice(1), Array.from({ length: nodes }, () => '  a wait without a position'));
    });

    test(`a counted message in flight is not an end: the receiver's work counts once it arrives (${nodes} node(s))`, async () => {
      // Each node's layer sends node 0 a counted message as soon as the fragments are done and
      // is idle with its unit live meanwhile: were the message not counted, that would be a hang.
      let got = 0;
      const t = layers((l, n) => {
        const ch = n.router.channel(100, 'test', () => { got++; if (got === nodes) for (const x of t.all) x.finish(); }, { counted: () => true });
        l.parked = { text: 'waiting for the message' };
        n.rt.onIdle = () => {
          if (n.rt.live === 0 && !l.sent) { l.sent = true; ch.send(0, 1, new Uint8Array(0)); }
          n.control.wake();
        };
      });
      const r = await runInProcess(SAY, { c_say: () => {} }, { nodes, join: t.join });
      assert.equal(r.ok, true, r.message);
      assert.equal(got, nodes);
    });

    test(`a counted message held in flight across waves is not an end: the run waits for it (${nodes} node(s))`, async () => {
      // The last node sends itself a counted message once its fragments are done, over a link
      // held for a while: every node idle, nothing live, the waves' counters unchanged, but
      // Σsent ≠ Σreceived (the probes and replies flow on the other links).
      const last = nodes - 1;
      let receivedBeforeEnd = false;
      let release = (): void => {};
      const t = layers((l, n) => {
        l.busy = false;
        const ch = n.router.channel(100, 'test', () => { receivedBeforeEnd = !n.control.finished; }, { counted: () => true });
        if (n.rank !== last) return;
        n.rt.onIdle = () => {
          if (n.rt.live === 0 && !l.sent) { l.sent = true; ch.send(last, 1, new Uint8Array(0)); setTimeout(release, 20); }
          n.control.wake();
        };
      });
      const r = await runInProcess(SAY, { c_say: () => {} }, { nodes, join: t.join, mesh: (m) => { m.hold(last, last); release = () => m.release(last, last); } });
      assert.equal(r.ok, true, r.message);
      assert.equal(receivedBeforeEnd, true, 'the run ended with a counted message in flight');
    });

    test(`a fault raised by a participant on the last node stops every node with its message (${nodes} node(s))`, async () => {
      const t = layers((l, n) => { if (n.rank === nodes - 1) setTimeout(() => n.control.fault(`test layer broke on node ${n.rank}`), 5); });
      const r = await runInProcess(SAY, { c_say: () => {} }, { nodes, join: t.join });
      assert.equal(r.kind, 'fault');
      assert.equal(r.message, `test layer broke on node ${nodes - 1}`);
      for (const n of r.nodes) assert.equal(n.result?.kind, 'fault');
    });
  }

  test('two participants of one name on a node are refused', async () => {
    await assert.rejects(runInProcess(SAY, { c_say: () => {} }, {
      join: (n) => { n.control.register(new TestLayer(n.control)); n.control.register(new TestLayer(n.control)); },
    }), /a participant named test layer is registered already/);
  });
});

describe('lost nodes and clocks', () => {
  test('a node lost mid-run: node 0 stops the run naming it; every node ends, only node 0 and the lost one saying why', async () => {
    let lose = (): void => {};
    const t = layers((l, n) => { if (n.rank === 1) setTimeout(() => lose(), 5); });
    const r = await runInProcess(SAY, { c_say: () => {} }, { nodes: 3, join: t.join, mesh: (m) => { lose = () => m.lose(1, 'killed by the test'); } });
    assert.equal(r.kind, 'lost');
    assert.equal(r.message, 'node 1 was lost (killed by the test); stopping the run');
    // node 2 lost node 1 too, as every peer of a killed process does, and waits for node 0's
    // verdict (a launcher such as mpirun must not hear from it first): node 0's abort ends it
    assert.deepEqual(r.nodes.map((n) => n.result?.kind), ['lost', 'lost', 'fault']);
    // node 1 lost node 0: it says so itself
    assert.equal(r.nodes[1]!.result?.message, 'node 0 was lost (killed by the test); stopping the run');
    assert.equal(r.nodes[2]!.result?.message, undefined);
  });

  test('a malformed control message is a fault naming the node that received it', async () => {
    let send = (): void => {};
    const t = layers((_l, n) => { if (n.rank === 1) setTimeout(() => send(), 5); });
    const r = await runInProcess(SAY, { c_say: () => {} }, {
      nodes: 2, join: t.join,
      // tag 99 on the control channel, from node 1 to node 0, straight through the mesh
      mesh: (m) => { send = () => m.endpoints[1]!.send(0, ((CHANNEL.control << 16) | 99) >>> 0, new Uint8Array(0)); },
    });
    assert.equal(r.kind, 'fault');
    assert.match(r.message ?? '', /^internal error: Error: unknown control message 99 from node 1\n[\s\S]*\n {2}on node 0$/);
  });

  test('clock offsets: nodes on rank 0\'s host share its clock (offset 0), and every node says where it runs', async () => {
    let measured: Promise<number[]> | undefined;
    let hosts: { host: string }[] = [];
    // the layers keep the run alive until the clocks are measured (runNode measures them before the start)
    const t = layers((l, n) => {
      if (n.rank > 0) return;
      measured = n.control.measureClocks();
      hosts = n.control.hosts;
      void measured.then(() => { for (const x of t.all) x.finish(); });
    });
    const r = await runInProcess(SAY, { c_say: () => {} }, { nodes: 3, join: t.join });
    assert.equal(r.ok, true, r.message);
    assert.deepEqual(await measured, [0, 0, 0]);
    assert.deepEqual(hosts.map((h) => h.host), [hostname(), hostname(), hostname()]);
  });
});

test('rank 0 probes for termination only after a quiet moment: not while counted messages flow, at once after', async (t) => {
  const { MemoryMesh } = await import('../../src/runtime/transport/memory.js');
  const { Router } = await import('../../src/runtime/transport/router.js');
  const { Control: ControlClass } = await import('../../src/runtime/cluster/control.js');
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const mesh = new MemoryMesh(2);
  const routers = mesh.endpoints.map((e) => new Router(e));
  const controls = routers.map((r) => new ControlClass(r, () => 0));
  const idle: Participant = { name: 'idle', idle: () => true, live: () => 0, waits: () => [], hangSummary: (n) => `${n}` };
  for (const c of controls) c.register(idle);
  const c0 = controls[0]!;
  c0.wake();
  // a message every millisecond or so (a fine-grained exchange): no wave
  for (let i = 0; i < 20; i++) {
    if (i % 2 === 0) routers[0]!.received++; else routers[0]!.sent++;
    routers[1]![i % 2 === 0 ? 'sent' : 'received']++;
    t.mock.timers.tick(1);
  }
  assert.equal(c0.waves, 0, 'no wave while rank 0 sends and receives work');
  // quiet: the next tick probes, and the run ends
  t.mock.timers.tick(1);
  assert.equal(c0.waves, 1);
  for (let k = 0; k < 200 && !c0.finished; k++) { await new Promise((r) => setImmediate(r)); t.mock.timers.tick(20); }
  assert.equal(c0.finished, true, 'the run ended');
  assert.deepEqual(await c0.done, { ok: true });
  assert.ok(c0.waves <= 3, `${c0.waves} waves to see the end`);
});
