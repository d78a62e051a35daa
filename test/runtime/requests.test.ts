// The request desk as a participant of the control protocol, on in-process nodes (harness.ts,
// whose lanes simulate a worker's request port): a CF waiting for an answer its handler works
// on keeps the run alive; one waiting for another CF that is still to run is no hang; one whose
// request nobody works on is a hang whose report names the CF, its node, the request and the
// resource, beside the CFs that wait for its outputs.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Reply, UcodeLayer } from '../../src/runtime/exec/desk.js';
import { runInProcess, type HarnessRun } from './harness.js';

/** `ask(key)` waits for the desk before it runs; `open(key)` too (answered at once). */
const program = (at: number): string => `
import c_ask(string \`kind, string \`key, name \`r) as ask : WAITS;
import c_open(string \`key, value \`after) as open : WAITS;
import c_make(name \`x) as make;
import c_use(value \`r) as use;
sub main() {
  df r, x, y;
  cf a: ask(#KIND, "g", r) @ { locator_cyclic: ${at}; };
  cf u: use(r) @ { locator_cyclic: ${at}; };
  cf m: make(x) @ { locator_cyclic: ${at}; };
  cf o: open("g", x) @ { locator_cyclic: ${at}; };
}`;

/** Handlers on each node: a timer (busy while it runs), a gate opened by another CF, a request nobody answers. */
function gates(log: string[]): UcodeLayer {
  return {
    register(desk) {
      const timers = new Set<NodeJS.Timeout>();
      const closed: Reply[] = [];
      let open = false;
      desk.register('test.later', {
        wait: 'test',
        handle(_r, reply) {
          const t = setTimeout(() => { timers.delete(t); log.push('answered later'); reply.answer(); }, 30);
          timers.add(t);
        },
        busy: () => timers.size > 0,
      });
      desk.register('gate.wait', {
        wait: 'test', resource: (p) => `gate ${String(p)}`,
        handle(_r, reply) { if (open) reply.answer(); else closed.push(reply); },
      });
      desk.register('gate.open', {
        wait: 'test',
        handle(_r, reply) {
          open = true;
          log.push('opened');
          for (const w of closed.splice(0)) w.answer();
          reply.answer();
        },
      });
      desk.register('test.never', { wait: 'test', resource: () => 'the void', handle() { /* never answers */ } });
    },
  };
}

async function run(kind: string, nodes: number, opens: boolean): Promise<HarnessRun & { log: string[] }> {
  const log: string[] = [];
  const src = program(nodes - 1).replace('#KIND', JSON.stringify(kind));
  const ucodes = {
    c_ask: (_k: string, _key: string, r: { setInt(v: number): void }) => { log.push('ask ran'); r.setInt(1); },
    c_open: () => { log.push('open ran'); },
    c_make: (x: { setInt(v: number): void }) => { x.setInt(1); },
    c_use: () => { log.push('use ran'); },
  };
  const asks = (symbol: string, args: unknown[]): { kind: string; payload?: unknown } | undefined => {
    if (symbol === 'c_ask') return { kind: String(args[0]), payload: String(args[1]) };
    if (symbol === 'c_open' && opens) return { kind: 'gate.open', payload: String(args[0]) };
    return undefined;
  };
  return { ...await runInProcess(src, ucodes, { nodes, lanes: 2, layers: [gates(log)], asks }), log };
}

describe('the request desk as a participant', () => {
  for (const nodes of [1, 2]) {
    test(`a request its handler works on (a timer) keeps the run alive until answered (${nodes} node(s))`, async () => {
      const r = await run('test.later', nodes, true);
      assert.equal(r.ok, true, r.message);
      const log = r.log;
      assert.ok(log.indexOf('answered later') >= 0 && log.indexOf('answered later') < log.indexOf('ask ran'), log.join(', '));
      assert.ok(log.includes('use ran'));
    });

    test(`a request answered by a CF still to run is no hang (${nodes} node(s))`, async () => {
      const r = await run('gate.wait', nodes, true);
      assert.equal(r.ok, true, r.message);
      const log = r.log;
      assert.ok(log.indexOf('opened') < log.indexOf('ask ran'), log.join(', '));
      assert.ok(log.includes('use ran'));
    });

    test(`a request nobody works on is a hang naming the CF, its node, the request and the resource (${nodes} node(s))`, async () => {
      const r = await run('gate.wait', nodes, false);
      assert.equal(r.ok, false);
      assert.equal(r.kind, 'hang', r.message);
      const on = nodes > 1 ? ` on node ${nodes - 1}` : '';
      const lines = r.message!.split('\n');
      assert.match(lines[0]!, /^the program hangs: nothing can run while 1 CF\(s\) wait for data fragments that are never produced and 1 CF\(s\) wait for answers to their requests that never come$/);
      assert.ok(lines.some((l) => new RegExp(`^  CF a \\(ucode c_ask, id [^)]+\\) at test\\.fa:8:\\d+${on} waits on worker thread 1 for the answer to its request 'gate\\.wait' \\(gate g\\), which no handler is working on$`).test(l)), r.message);
      assert.ok(lines.some((l) => /^ {2}CF u \(ucode c_use, id [^)]+\) at test\.fa:9:\d+.* waits for r/.test(l)), r.message);
    });
  }

  test('a request whose handler never answers nor works is a hang at once, not a silent wait', async () => {
    const r = await run('test.never', 1, true);
    assert.equal(r.kind, 'hang', r.message);
    assert.match(r.message!, /waits on worker thread 1 for the answer to its request 'test\.never' \(the void\), which no handler is working on/);
  });
});
