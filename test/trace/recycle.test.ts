// A recycling trace model (fragment records reused once they leave the recently-finished ring, as
// the exports read) tells its listeners exactly what a model making a record per CF tells: every
// finished fragment with its name, lane, times and inputs, every transfer, wait, busy span and
// counter; and the exports written from it are byte for byte those written from the other. On a
// generated trace long enough for records to be reused many times, a real run's trace, and
// damaged traces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, readdirSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readModel } from '../../src/trace/read.js';
import { PerfettoProtoWriter } from '../../src/trace/export/perfetto-proto.js';
import { Otf2Collector } from '../../src/trace/export/otf2.js';
import { RecordFile } from '../../src/trace/export/otf2-stream.js';
import { SpmdResolver } from '../../src/trace/model/spmd.js';
import type { Fragment } from '../../src/trace/model/records.js';
import { generatedTrace, tempDir } from './helpers.js';

/** What the model tells, as text, and how many distinct fragment records it handed over. */
function told(dir: string, recycle: boolean): { lines: string[]; records: number; finished: number; warnings: string[]; damage: unknown } {
  const lines: string[] = [];
  const seen = new Set<Fragment>();
  let finished = 0;
  const r = readModel(dir, (m) => m.listen({
    start: (f) => { lines.push(`start ${f.node}:${f.cf} ${f.name} ${f.gid} lane ${f.lane} at ${f.start}`); },
    finish: (f, inputs) => {
      seen.add(f);
      finished++;
      lines.push(`finish ${f.node}:${f.cf} ${f.name} ${f.gid} code ${f.code} lane ${f.lane} slot ${f.slot} ${f.start}-${f.finish} cpu ${f.cpu} created ${f.created} ready ${f.ready} seq ${f.seq} in ${inputs.map((d) => d.name).join(',')}`);
    },
    transfer: (t) => { lines.push(`transfer ${t.df.name} ${t.from}>${t.to} ${t.bytes} ${t.sendStart} ${t.firstSend} ${t.arrive}`); },
    computed: (d, t) => { lines.push(`computed ${d.name} ${t}`); },
    wait: (w) => { lines.push(`wait ${w.node}.${w.thread} slot ${w.slot} in ${w.fragment?.gid ?? '-'} ${w.kind} ${w.resource} ${w.start}-${w.end}`); },
    sysBusy: (n, a, b) => { lines.push(`busy ${n} ${a}-${b}`); },
    counter: (n, k, t, v) => { lines.push(`counter ${n} ${k} ${t} ${v}`); },
    migrate: (n, f, cf, to, t) => { lines.push(`migrate ${n}:${cf} ${f?.gid ?? '-'} > ${to} at ${t}`); },
  }), undefined, { recycle });
  return { lines, records: seen.size, finished, warnings: r.warnings(), damage: r.damage() };
}

/** The Perfetto protobuf and the OTF2 record files written from a model that does or does not recycle. */
function exported(dir: string, out: string, recycle: boolean): Buffer[] {
  const tag = recycle ? 'r' : 'n';
  const files = [`${tag}.pftrace`, `${tag}.events`, `${tag}.defs`].map((f) => join(out, f));
  const fds = files.map((f) => openSync(f, 'w'));
  try {
    const defs = new RecordFile(fds[2]!);
    let w!: PerfettoProtoWriter, c!: Otf2Collector;
    const read = readModel(dir, (m) => {
      w = new PerfettoProtoWriter(fds[0]!, m); m.listen(w); m.use(SpmdResolver).listen(w);
      c = new Otf2Collector(m, defs); m.listen(c);
    }, undefined, { recycle });
    w.flush();
    c.write(new RecordFile(fds[1]!), read.manifest.startedAt);
  } finally {
    for (const fd of fds) closeSync(fd);
  }
  return files.map((f) => readFileSync(f));
}

function same(dir: string, out: string): { records: number; finished: number } {
  const a = told(dir, false), b = told(dir, true);
  assert.equal(b.lines.length, a.lines.length);
  for (let i = 0; i < a.lines.length; i++) if (a.lines[i] !== b.lines[i]) assert.equal(b.lines[i], a.lines[i], `told ${i}`);
  assert.deepEqual(b.warnings, a.warnings);
  assert.deepEqual(b.damage, a.damage);
  assert.equal(b.finished, a.finished);
  assert.equal(a.records, a.finished, 'a model that does not recycle makes a record per CF');
  const x = exported(dir, out, false), y = exported(dir, out, true);
  for (let i = 0; i < x.length; i++) assert.ok(x[i]!.equals(y[i]!), `export file ${i} is identical`);
  return { records: b.records, finished: b.finished };
}

const generated = (t: { after(fn: () => void): void }, events: number): string => generatedTrace(t, events, 5);

test('a recycling model tells what a model of a record per CF tells, with far fewer records, on a long generated trace', (t) => {
  const r = same(generated(t, 150_000), tempDir(t));
  // 150 000 events are ~12 500 CFs: past the 8192 of the recently-finished ring, records come back
  assert.ok(r.finished > 12_000, `${r.finished} fragments`);
  assert.ok(r.records < r.finished * 0.8, `${r.records} records for ${r.finished} fragments`);
});

test('a recycling model tells the same on a real run\'s trace', (t) => {
  const trace = join(tempDir(t), 'run.trace');
  const r = spawnSync(process.execPath, ['bin/luna', 'run', '--nodes', '2', '--threads', '2', '--trace', trace, 'examples/matmul/matmul_cyclic.fa', '32', '4'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  const s = same(trace, tempDir(t));
  assert.ok(s.finished > 0);
});

test('a recycling model tells the same on damaged traces (a cut file, overwritten bytes)', (t) => {
  const dir = generated(t, 120_000);
  const files = readdirSync(dir).filter((f) => f.endsWith('.lt')).sort();
  const cut = join(dir, files[0]!);
  truncateSync(cut, statSync(cut).size - 7);
  const hit = join(dir, files[2]!), b = readFileSync(hit);
  for (let p = b.length >> 1; p < (b.length >> 1) + 48; p++) b[p] = 0x07;
  writeFileSync(hit, b);
  same(dir, tempDir(t));
  assert.ok((told(dir, true).damage as { total: number }).total > 0, 'the damage is reported');
});
