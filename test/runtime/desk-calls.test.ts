// Imports the request desk answers itself (exec/desk.ts DeskCall, as a dynamic array's
// global_count): the system thread asks for their CFs and completes them when the answer comes,
// so no worker waits meanwhile. On one node with a single worker thread, a CF whose answer
// another CF gives — queued behind it on the same worker — completes (were it run on the worker,
// the run would hang); a refusal fails the run naming the CF; an answer that never comes is a
// hang report saying the CF waits on the system thread.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Reply, UcodeLayer } from '../../src/runtime/exec/desk.js';
import { intValue } from '../../src/ucode/value.js';
import { fixture, runWithResource, UCODE_API } from '../ucode/fixtures.js';

const PROGRAM = `
import c_gate(string \`g, name \`r) as gate;
import c_open(string \`g, int \`v) as open;
import c_show(value \`r) as show;
sub main()
{
    df r;
    cf a: gate("g", r);
    cf o: open(#OPEN, 41);
    show(r);
}
`;

const UCODES = `
import { context } from ${JSON.stringify(UCODE_API)};
export function c_gate() { throw new Error('c_gate ran on a thread: the desk should have asked for it'); }
export function c_open(g: string, v: number) { context().post('gate.open', { g, v }); }
export function c_show(r: { getValue(): unknown }) { console.log('r = ' + String(r.getValue())); }
`;

/** c_gate CFs wait for gate `g`; the test opens it from c_open's CF (seen by the desk as a post). */
function gates(log: string[]): UcodeLayer {
  return {
    register(desk) {
      const waiting = new Map<string, Reply[]>();
      const opened = new Map<string, number>();
      desk.register('gate.wait', {
        wait: 'test', resource: (p) => `gate ${String(p)}`,
        handle(r, reply) {
          const g = String(r.payload);
          if (g === 'refused') { reply.fail('this gate is walled up'); return; }
          const v = opened.get(g);
          if (v !== undefined) reply.answer(v); else waiting.set(g, [...(waiting.get(g) ?? []), reply]);
        },
      });
      desk.registerCall('c_gate', {
        kind: 'gate.wait',
        payload: (args) => args[0],
        outputs: (v) => [intValue((v as number) + 1)],
      });
      desk.register('gate.open', {
        wait: 'test',
        handle(r, reply) {
          const { g, v } = r.payload as { g: string; v: number };
          log.push(`opened ${g}`);
          opened.set(g, v);
          for (const w of waiting.get(g) ?? []) w.answer(v);
          waiting.delete(g);
          reply.answer();
        },
      });
    },
  };
}

async function run(t: { after(fn: () => void): void }, open: string, gate = '"g"') {
  const dir = fixture(t, {
    'prog.fa': PROGRAM.replace('#OPEN', open).replace('gate("g", r)', `gate(${gate}, r)`),
    'ucodes.ts': UCODES,
  });
  const log: string[] = [];
  const ran = await runWithResource(dir, { nodes: 1, threads: 1, layers: [gates(log)] });
  return { r: ran.results[0]!, log };
}

test('a CF the desk answers holds no worker: the CF that opens its gate runs on the only worker meanwhile', async (t) => {
  const { r, log } = await run(t, '"g"');
  assert.equal(r.ok, true, r.message);
  assert.deepEqual(log, ['opened g']);
  // c_gate never ran as a ucode (it throws), and only c_open and c_show went to the worker or ran inline
  assert.equal(r.stats.inline + r.stats.sent, 2);
});

test('a refused desk call fails the run naming the CF and the refusal', async (t) => {
  const { r } = await run(t, '"g"', '"refused"');
  assert.equal(r.ok, false);
  assert.match(r.message ?? '', /gate\.wait.*gate refused.*walled up/s);
  assert.match(r.message ?? '', /\ba\b/);
});

test('a desk call never answered is a hang report saying the CF waits on its node\'s system thread', async (t) => {
  const { r } = await run(t, '"other"');
  assert.equal(r.ok, false);
  assert.equal(r.kind, 'hang', r.message);
  assert.match(r.message ?? '', /CF a \(ucode c_gate, id [^)]+\) at [^\n]*prog\.fa:\d+:\d+ waits on its node's system thread for the answer to its request 'gate\.wait' \(gate g\), which no handler is working on/);
});
