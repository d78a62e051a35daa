// Scheduling policies through the CLI, with real worker threads and node processes: trace
// playback (--record, --replay) and critical-path priorities (--priorities-from).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeRun, lines, luna, sorted } from './helpers.js';

const HEAT = 'examples/heat1d/heat1d.fa';
const CYCLIC = 'examples/seed004/seed004_cyclic.fa';

function temp(t: { after(fn: () => void): void }): string {
  const d = mkdtempSync(join(tmpdir(), 'luna-playback-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

test('--record then --replay on 2 nodes × 2 threads: the same output, every fragment known', async (t) => {
  const dir = temp(t);
  const rec = join(dir, 'sched');
  const args = ['--nodes', '2', '--threads', '2'];
  const a = await luna(['run', ...args, '--record', rec, CYCLIC, '8', '3', '5']);
  assert.equal(a.status, 0, describeRun(a));
  const index = JSON.parse(readFileSync(join(rec, 'schedule.json'), 'utf8')) as { nodes: number; args: string[] };
  assert.equal(index.nodes, 2);
  assert.deepEqual(index.args, ['8', '3', '5']);
  const parts = [0, 1].map((n) => JSON.parse(readFileSync(join(rec, `node${n}.json`), 'utf8')) as { order: [string, number, number][] });
  assert.ok(parts.every((p) => p.order.length > 0), 'locator_cyclic spreads fragments: both nodes recorded some');
  const b = await luna(['run', ...args, '--replay', rec, CYCLIC, '8', '3', '5']);
  assert.equal(b.status, 0, describeRun(b));
  assert.deepEqual(sorted(lines(b.stdout)), sorted(lines(a.stdout)));
  assert.doesNotMatch(b.stderr, /replay/, 'nothing to say: the record knew every fragment');
});

test('--replay of a schedule recorded with other arguments completes and says where it stopped applying', async (t) => {
  const dir = temp(t);
  const rec = join(dir, 'sched');
  const a = await luna(['run', '--threads', '2', '--record', rec, HEAT, '16', '3', '0.0001', '20']);
  assert.equal(a.status, 0, describeRun(a));
  const b = await luna(['run', '--threads', '2', '--replay', rec, HEAT, '16', '3', '0.0001', '30']);
  assert.equal(b.status, 0, describeRun(b));
  assert.match(b.stdout, /heat1d: OK \(n=16, 3 blocks, 30 iterations/);
  assert.match(b.stderr, /was recorded with arguments 16 3 0\.0001 20/);
  assert.match(b.stderr, /fragment\(s\) followed the recorded schedule; it stopped applying at CF \w+ \(id [\d_]+\) at .*heat1d\.fa:\d+:\d+/);
});

test('a bad schedule is refused with the file and the entry at fault', async (t) => {
  const dir = temp(t);
  const missing = await luna(['run', '--replay', join(dir, 'nothing'), HEAT, '16', '3', '0.0001', '5']);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /no such schedule directory/);
  const rec = join(dir, 'sched');
  const a = await luna(['run', '--threads', '1', '--record', rec, HEAT, '16', '3', '0.0001', '5']);
  assert.equal(a.status, 0, describeRun(a));
  const part = JSON.parse(readFileSync(join(rec, 'node0.json'), 'utf8')) as { order: unknown[] };
  part.order[2] = ['0_1', -4, 0];
  writeFileSync(join(rec, 'node0.json'), JSON.stringify(part));
  const bad = await luna(['run', '--replay', rec, HEAT, '16', '3', '0.0001', '5']);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /node0\.json: order\[2\] is \["0_1",-4,0\], expected \[global id, lane ≥ 0, inline 0 or 1\]/);
  assert.doesNotMatch(bad.stderr, /\n\s+at /, 'no stack trace');
  writeFileSync(join(rec, 'node0.json'), '{"format": "luna-ts-sched');
  const cut = await luna(['run', '--replay', rec, HEAT, '16', '3', '0.0001', '5']);
  assert.equal(cut.status, 1);
  assert.match(cut.stderr, /node0\.json: not valid JSON/);
});

test('--priorities-from a trace: the same result; a directory that is not a trace is refused clearly', async (t) => {
  const dir = temp(t);
  const trace = join(dir, 'run.trace');
  const args = ['bench/programs/critical/critical.fa', '20', '20', '0'];
  const a = await luna(['run', '--threads', '2', '--trace', trace, ...args]);
  assert.equal(a.status, 0, describeRun(a));
  const b = await luna(['run', '--threads', '2', '--priorities-from', trace, ...args]);
  assert.equal(b.status, 0, describeRun(b));
  assert.equal(b.stderr, '');
  const notTrace = await luna(['run', '--threads', '2', '--priorities-from', dir, ...args]);
  assert.equal(notTrace.status, 1, describeRun(notTrace));
  assert.match(notTrace.stderr, /luna: error: .*(manifest|trace)/);
  assert.doesNotMatch(notTrace.stderr, /\n\s+at /, 'no stack trace');
});
