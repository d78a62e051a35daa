// A trace file cut on a record boundary (docs/reliability.md, "Traces"): the reader sees
// nothing wrong in the bytes, but a completed run's node without its programFinish record lost
// the end of its file: damage, exit 3. And `analyze slow --window` with a width far too small for
// the run: bounded windows, and the output says the width used.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readThreadFile } from '../../src/trace/reader.js';
import { TraceDamage } from '../../src/trace/damage.js';
import { MAX_WINDOWS } from '../../src/analysis/slow/accum.js';
import { explain, inTempDir, luna } from '../cli/helpers.js';

const SPREAD = join(new URL('../../../', import.meta.url).pathname, 'test/trace/programs/spread/spread.fa');

/** Kinds of the records of a thread file, and whether the reader found damage in its bytes. */
function records(path: string): { kinds: string[]; damaged: boolean } {
  const damage = new TraceDamage();
  const f = readThreadFile(path, { damage });
  const kinds = [...f.events].map((e) => e.kind);
  return { kinds, damaged: damage.total > 0 };
}

test('node 0\'s system-thread file cut on a record boundary before programFinish is damage (exit 3)', () => inTempDir('luna-cut-', async (dir) => {
  const t = join(dir, 'T');
  const made = await luna(['run', '--nodes', '2', '--threads', '1', '--trace', t, SPREAD, '6'], dir);
  assert.equal(made.status, 0, explain(made));
  assert.match(readFileSync(join(t, 'manifest.json'), 'utf8'), /"status": "completed"/);
  const file = join(t, 'node0.thread0.lt');
  const whole = readFileSync(file);
  assert.ok(records(file).kinds.includes('programFinish'));
  // the longest cut that the reader takes as clean and that loses programFinish
  let cut = -1;
  for (let n = whole.length - 1; n > 32 && cut < 0; n--) {
    truncateSync(file, n);
    const r = records(file);
    if (!r.damaged && !r.kinds.includes('programFinish')) cut = n;
    writeFileSync(file, whole);
  }
  assert.ok(cut > 0, 'no record boundary found before programFinish');
  const c = join(dir, 'C');
  cpSync(t, c, { recursive: true });
  truncateSync(join(c, 'node0.thread0.lt'), cut);
  const r = await luna(['analyze', 'slow', '--json', c], dir);
  assert.equal(r.status, 3, explain(r));
  const damage = (JSON.parse(r.stdout) as { damage: { total: number; counts: Record<string, number>; examples: { file?: string; detail: string }[] } }).damage;
  assert.ok(damage.total > 0);
  assert.ok(damage.counts.truncated! >= 1, JSON.stringify(damage));
  assert.ok(damage.examples.some((e) => e.file === 'node0.thread0.lt' && /no programFinish record though the manifest says the run completed/.test(e.detail)), JSON.stringify(damage));
  assert.match(r.stderr, /trace damage in .*truncated/);
  // the whole trace is clean
  const clean = await luna(['analyze', 'slow', t], dir);
  assert.equal(clean.status, 0, explain(clean));
}));

test('analyze slow --window far too small for the run: at most the bound of windows, the width used said', () => inTempDir('luna-cut-', async (dir) => {
  const t = join(dir, 'T');
  const made = await luna(['run', '--threads', '2', '--trace', t, SPREAD, '200'], dir);
  assert.equal(made.status, 0, explain(made));
  const text = await luna(['analyze', 'slow', '--window', '1ns', t], dir);
  assert.equal(text.status, 0, explain(text));
  assert.match(text.stdout, new RegExp(`windows of 1 ns would be more than ${MAX_WINDOWS}: using \\d`));
  const json = await luna(['analyze', 'slow', '--window', '1ns', '--json', t], dir);
  assert.equal(json.status, 0, explain(json));
  const s = (JSON.parse(json.stdout) as { series: { windowNs: number; requestedNs?: number; explicit: boolean; points: unknown[] } }).series;
  assert.equal(s.requestedNs, 1);
  assert.ok(s.explicit && s.windowNs > 1 && s.points.length <= MAX_WINDOWS && s.points.length > MAX_WINDOWS / 2, JSON.stringify({ ...s, points: s.points.length }));
  // a width the run fits keeps its value and says nothing
  const fits = await luna(['analyze', 'slow', '--window', '1s', '--json', t], dir);
  const f = (JSON.parse(fits.stdout) as { series: { windowNs: number; requestedNs?: number } }).series;
  assert.equal(f.windowNs, 1e9);
  assert.equal(f.requestedNs, undefined);
}));

test('an empty trace (every file its header) prints no NaN: text, JSON and report', () => inTempDir('luna-cut-', async (dir) => {
  const t = join(dir, 'T');
  const made = await luna(['run', '--threads', '2', '--trace', t, SPREAD, '6'], dir);
  assert.equal(made.status, 0, explain(made));
  for (const f of readdirSync(t).filter((x) => x.endsWith('.lt'))) truncateSync(join(t, f), 32);
  const text = await luna(['analyze', 'slow', t], dir);
  assert.ok(text.status === 0 || text.status === 3, explain(text));
  assert.doesNotMatch(text.stdout + text.stderr, /NaN|Infinity/, explain(text));
  const json = await luna(['analyze', 'slow', '--json', t], dir);
  const r = JSON.parse(json.stdout) as { tWall: unknown; tTotal: unknown };
  assert.equal(r.tWall, 0);
  assert.equal(r.tTotal, 0);
  const out = join(dir, 'r.html');
  const report = await luna(['report', t, '-o', out], dir);
  assert.ok(report.status === 0 || report.status === 3, explain(report));
  // the page's own text, without the chart library's code
  const page = readFileSync(out, 'utf8').replace(/<script[\s\S]*?<\/script>/g, '');
  assert.doesNotMatch(page, /NaN|Infinity/);
}));

test('the manifest\'s machines and cores are validated (exit 2, the field named)', () => inTempDir('luna-cut-', async (dir) => {
  const t = join(dir, 'T');
  const made = await luna(['run', '--threads', '1', '--trace', t, SPREAD, '6'], dir);
  assert.equal(made.status, 0, explain(made));
  const manifest = JSON.parse(readFileSync(join(t, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['cores0', { cores: 0 }, /field "cores": expected at least 1, got 0/],
    ['machineCores', { machines: [{ host: 'h', cores: -3, nodes: [0] }] }, /field "machines\[0\]\.cores": expected at least 1, got -3/],
    ['beyond', { machines: [{ host: 'h', cores: 2, nodes: [0, 5] }] }, /field "machines\[0\]\.nodes": node 5, but field "nodes" says 1 node\(s\)/],
    ['twice', { machines: [{ host: 'a', cores: 2, nodes: [0] }, { host: 'b', cores: 2, nodes: [0] }] }, /field "machines\[1\]\.nodes": node 0 is also on machines\[0\]/],
    ['type', { machines: 'h' }, /field "machines": expected array/],
  ];
  for (const [name, change, message] of cases) {
    const d = join(dir, name);
    cpSync(t, d, { recursive: true });
    writeFileSync(join(d, 'manifest.json'), JSON.stringify({ ...manifest, ...change }));
    const r = await luna(['analyze', 'slow', d], dir);
    assert.equal(r.status, 2, explain(r));
    assert.match(r.stderr, message, explain(r));
  }
}));
