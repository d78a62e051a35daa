// Shared helpers of the trace tests: temp directories, manifests, and a sequence that drives
// every TraceSink method and returns the events a reader must give back.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TraceEvent, TraceManifest } from '../../src/trace/events.js';
import type { TraceSink } from '../../src/trace/sink.js';

export function tempDir(t: { after(fn: () => void): void }): string {
  const d = mkdtempSync(join(tmpdir(), 'luna-trace-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

export function manifest(nodes: number, threads: number, over: Partial<TraceManifest> = {}): TraceManifest {
  return {
    format: 'luna-ts-trace', version: 1, program: 'test.fa', args: [], nodes, threads,
    codes: ['main', 'init', 'mul', 'sum'], clock: { cpuExact: true, offsets: [] },
    startedAt: new Date(0).toISOString(), versions: { lunaTs: '0.0.0', node: process.version }, files: [],
    ...over,
  };
}

/** Drive every sink method once (times from t0 upwards); returns the expected decoded events. */
export function everyKind(s: TraceSink, node: number, thread: number, t0: number, cfBase = 0): TraceEvent[] {
  const b = { node, thread };
  const ev: TraceEvent[] = [];
  let t = t0;
  const cf = cfBase + 7;
  s.programStart(t); ev.push({ ...b, kind: 'programStart', t });
  t += 10; s.cfCreated(t, cf, -1, 2, '3_1_2', 'mul[1, 2]'); ev.push({ ...b, kind: 'cfCreated', t, cf, parentCf: -1, code: 2, gid: '3_1_2', label: 'mul[1, 2]' });
  t += 10; s.cfCreated(t, cf + 1, cf, 3, '', 'сумма ∑'); ev.push({ ...b, kind: 'cfCreated', t, cf: cf + 1, parentCf: cf, code: 3, gid: '', label: 'сумма ∑' });
  t += 10; s.cfMigrate(t, cf, 2); ev.push({ ...b, kind: 'cfMigrate', t, cf, toNode: 2 });
  t += 10; s.cfReceive(t, cf + 2, 1, 99, '4_0', 1, 'init[0]'); ev.push({ ...b, kind: 'cfReceive', t, cf: cf + 2, fromNode: 1, remoteCf: 99, gid: '4_0', code: 1, label: 'init[0]' });
  t += 10; s.cfReady(t, cf); ev.push({ ...b, kind: 'cfReady', t, cf });
  const dfn = `a[${cfBase}][2]`;
  const df = s.dfName(dfn);
  ev.push({ ...b, kind: 'dfName', t, df, name: dfn });
  if (s.dfName(dfn) !== df) throw new Error('dfName not idempotent');
  s.cfInput(cf, df); ev.push({ ...b, kind: 'cfInput', t, cf, df });
  t += 10; s.cfStart(t, 12345.5, cf); ev.push({ ...b, kind: 'cfStart', t, cpu: 12345.5, cf });
  t += 1000.25; s.cfFinish(t, 13000, cf); ev.push({ ...b, kind: 'cfFinish', t, cpu: 13000, cf });
  t += 10; s.dfComputed(t, df, cf, 8); ev.push({ ...b, kind: 'dfComputed', t, df, producerCf: cf, bytes: 8 });
  t += 10; s.dfSendStart(t, df, 1, 5e9); ev.push({ ...b, kind: 'dfSendStart', t, df, toNode: 1, bytes: 5e9 });
  t += 10; s.dfSendEnd(t, df, 1); ev.push({ ...b, kind: 'dfSendEnd', t, df, toNode: 1 });
  t += 10; s.dfReceive(t, df, 1, 64); ev.push({ ...b, kind: 'dfReceive', t, df, fromNode: 1, bytes: 64 });
  t += 10; s.dfDeleted(t, df); ev.push({ ...b, kind: 'dfDeleted', t, df });
  t += 10; s.sysBusy(t, t + 5); ev.push({ ...b, kind: 'sysBusy', t, end: t + 5 });
  t += 10; s.readyQueue(t, 42); ev.push({ ...b, kind: 'readyQueue', t, value: 42 });
  t += 10; s.liveBytes(t, 2 ** 40); ev.push({ ...b, kind: 'liveBytes', t, value: 2 ** 40 });
  t += 10; s.programFinish(t); ev.push({ ...b, kind: 'programFinish', t });
  return ev;
}

/** Deterministic PRNG (mulberry32) so that "random" cuts are reproducible. */
export function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

export function collect(it: Iterable<TraceEvent>): TraceEvent[] {
  return [...it];
}
