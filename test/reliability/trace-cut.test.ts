// A trace file cut on a record boundary (docs/reliability.md, "Traces"): the reader sees
// nothing wrong in the bytes, but a completed run's node without its programFinish record lost
// the end of its file: damage, exit 3. And `analyze slow --window` with a width far too small for
// the run: bounded windows, and the output says the width used.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
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
  assert.match(text.stdout, new RegExp(`--window 1 ns would make more than ${MAX_WINDOWS} windows: using \\d`));
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
