// A trace written by hand through the trace writer (the bytes a run produces), in which threads
// wait inside a CF and outside any CF, on two nodes whose clocks differ: shared by the analysis
// tests (the exact W/U/O split) and the report's (W in `luna analyze slow` and on the page).
import { openTraceDir, writeManifest } from '../../src/trace/dir.js';
import { traceFileName, VERSION } from '../../src/trace/format.js';
import type { TraceManifest } from '../../src/trace/manifest.js';
import { WAIT_KINDS } from '../../src/trace/schema.js';
import type { Slou } from '../../src/analysis/slow/types.js';
import { ThreadTraceWriter } from '../../src/trace/writer.js';

/** node 1's clock runs this far ahead of node 0's (the manifest's offset brings it back) */
const AHEAD = 1e6;
const kind = (k: (typeof WAIT_KINDS)[number]): number => WAIT_KINDS.indexOf(k);

/**
 * On node 0's clock: node 0's lane runs `produce` [0, 100) with 60 ns of CPU, 10 of them spent in
 * a request [20, 50) → W 30, U 50, O 20, then starves to the end at 250. Node 1's lane, as rank 1,
 * waits at a barrier [50, 110) while x is produced (to 100) and travels (sent at 100, arrives at
 * 130), then runs `consume` [150, 200) → S 50 + 50 (tail), L 20, O 20, W 60, U 50.
 */
export const WRITTEN: { tWall: number; perThread: Slou[]; W: number } = {
  tWall: 250,
  perThread: [{ S: 150, L: 0, O: 20, W: 30, U: 50 }, { S: 100, L: 20, O: 20, W: 60, U: 50 }],
  W: 90,
};

export function writeWaitingTrace(dir: string): void {
  const sites = [
    { label: 'produce', code: 0, kind: 'call' as const, file: 'w.fa', line: 3, col: 5, spawnNo: 0 },
    { label: 'consume', code: 1, kind: 'call' as const, file: 'w.fa', line: 4, col: 5, spawnNo: 1 },
  ];
  const mf: TraceManifest = {
    format: 'luna-ts-trace', version: VERSION, program: 'w.fa', args: [], nodes: 2, threads: 1, codes: ['produce', 'consume'], sites,
    status: 'completed', clock: { cpuExact: true, offsets: [0, -AHEAD] },
    startedAt: new Date(0).toISOString(), versions: { lunaTs: 'test', node: process.version }, files: [],
  };
  openTraceDir(dir, mf);
  const s0 = ThreadTraceWriter.open(dir, 0, 0), w0 = ThreadTraceWriter.open(dir, 0, 1);
  const s1 = ThreadTraceWriter.open(dir, 1, 0), w1 = ThreadTraceWriter.open(dir, 1, 1);
  const n1 = (t: number): number => t + AHEAD; // node 1 stamps its own clock
  s0.programStart(0); s1.programStart(n1(0));
  s0.cfCreated(0, 1, -1, 0, 'g1', null); s0.cfReady(0, 1);
  w0.cfStart(0, 0, 1, 1);
  w0.wait(20, 50, 10, 1, -1, kind('request'), 'alloc x');
  w0.cfFinish(100, 60, 1, 1);
  const x0 = s0.dfName('x#0');
  s0.dfComputed(100, x0, 1, 8);
  s0.dfSendStart(100, x0, 1, 8);
  s0.dfSendEnd(105, x0, 1);
  s1.cfCreated(n1(0), 7, -1, 1, 'g7', null);
  w1.wait(n1(50), n1(110), 0, -1, 1, kind('barrier'), 'w.fa:9');
  const x1 = s1.dfName('x#0');
  s1.dfReceive(n1(130), x1, 0, 8);
  s1.cfReady(n1(130), 7);
  w1.cfInput(7, w1.dfName('x#0'));
  w1.cfStart(n1(150), 0, 7, 1);
  w1.cfFinish(n1(200), 50, 7, 1);
  s0.programFinish(250, 1); s1.programFinish(n1(250), 1);
  for (const w of [s0, w0, s1, w1]) w.close();
  mf.files = [[0, 0], [0, 1], [1, 0], [1, 1]].map(([node, thread]) => ({ node: node!, thread: thread!, path: traceFileName(node!, thread!) }));
  writeManifest(dir, mf);
}

/**
 * One node, two lanes: lane 1 runs `a` [0, 100), then `p` [100, 150), which makes x; lane 2 runs
 * `first` [0, 10), then idles until `use` [150, 200), which reads x. `p` was ready at 10 (no
 * inputs) but held behind `a` on its lane: of lane 2's 140 ns of S charged to `p`, `p` was ready
 * and not started for 90 and running for 50, never not ready. Lane 1's tail [150, 200) is S no
 * producer ended. `chained`: `p` reads y, which `a` makes, so it is ready only at 100 and the same
 * 140 ns split 90 not ready, 50 running (CHAINED).
 */
export const HELD = { S: 190, charged: 140, notReady: 0, queued: 90, running: 50, unknown: 0 };
export const CHAINED = { ...HELD, notReady: 90, queued: 0 };

export function writeHeldTrace(dir: string, o: { chained?: boolean } = {}): void {
  const labels = ['first', 'a', 'p', 'use'];
  const mf: TraceManifest = {
    format: 'luna-ts-trace', version: VERSION, program: 'held.fa', args: [], nodes: 1, threads: 2, codes: labels,
    sites: labels.map((label, code) => ({ label, code, kind: 'call' as const, file: 'held.fa', line: code + 3, col: 5, spawnNo: code })),
    status: 'completed', clock: { cpuExact: true, offsets: [0] },
    startedAt: new Date(0).toISOString(), versions: { lunaTs: 'test', node: process.version }, files: [],
  };
  openTraceDir(dir, mf);
  const s = ThreadTraceWriter.open(dir, 0, 0), w1 = ThreadTraceWriter.open(dir, 0, 1), w2 = ThreadTraceWriter.open(dir, 0, 2);
  s.programStart(0);
  for (const cf of [1, 2, 3, 4]) s.cfCreated(0, cf, -1, cf - 1, `g${cf}`, null);
  s.cfReady(0, 1); s.cfReady(0, 2);
  if (!o.chained) s.cfReady(10, 3);
  w2.cfStart(0, 0, 1, 2); w2.cfFinish(10, 10, 1, 2);
  w1.cfStart(0, 0, 2, 1); w1.cfFinish(100, 100, 2, 1);
  if (o.chained) {
    s.dfComputed(100, s.dfName('y#0'), 2, 8);
    s.cfReady(100, 3);
    w1.cfInput(3, w1.dfName('y#0'));
  }
  w1.cfStart(100, 100, 3, 1); w1.cfFinish(150, 150, 3, 1);
  const x = s.dfName('x#0');
  s.dfComputed(150, x, 3, 8);
  s.cfReady(150, 4);
  w2.cfInput(4, w2.dfName('x#0'));
  w2.cfStart(150, 10, 4, 2); w2.cfFinish(200, 60, 4, 2);
  s.programFinish(200, 1);
  for (const w of [s, w1, w2]) w.close();
  mf.files = [0, 1, 2].map((thread) => ({ node: 0, thread, path: traceFileName(0, thread) }));
  writeManifest(dir, mf);
}
