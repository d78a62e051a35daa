// A simulator of SPMD programs (the SPMD/PGAS layer's semantics) that writes real trace files:
// every rank runs the same phases — computation, collectives with their synchronisation modes,
// split-phase barriers, lock sections — and the simulator derives each rank's enter and exit
// times from the operation's semantics (an ALLSYNC entry waits for every rank, a MYSYNC
// broadcast for its root, a prefix reduction for the lower ranks, a lock for its holder). Delays
// can be injected exactly where a pattern looks for them (a late rank, a late exit), so the
// pattern engine is checked against inefficiencies of known size, at known call sites and ranks.
import { SPMD_OPS, type SpmdOp } from '../../trace/schema.js';
import type { TraceManifest } from '../../trace/manifest.js';
import { openTraceDir, writeManifest } from '../../trace/dir.js';
import { traceFileName, VERSION } from '../../trace/format.js';
import { ThreadTraceWriter } from '../../trace/writer.js';

export type RankNs = number | ((rank: number) => number);

export type Phase =
  /** local work of each rank */
  | { compute: RankNs }
  /** a collective (or barrier, notify, wait, all_alloc) at `site` */
  | { op: SpmdOp; site: string; root?: number; sync?: { in?: 'nosync' | 'mysync' | 'allsync'; out?: 'nosync' | 'mysync' | 'allsync' }; bytes?: number; exitDelay?: RankNs }
  /** ranks (all, or `ranks`) take lock `lock` in the order they ask, hold it `hold`, release it */
  | { lock: number; hold: RankNs; site: string; ranks?: number[] };

export interface SpmdSimOptions {
  ranks: number;
  /** nodes the ranks are spread over (block placement; default 1) */
  nodes?: number;
  /** the program: every rank runs these phases in turn (any iterable: a generator for long runs) */
  phases: Iterable<Phase>;
  /** cost of one operation once it may proceed (ns; default 2 000) */
  opCost?: number;
  /** deterministic jitter added to every computation, up to this many ns (default 0) */
  jitter?: number;
  seed?: number;
}

const MODE = { nosync: 0, mysync: 1, allsync: 2 } as const;
const at = (v: RankNs | undefined, r: number): number => (v === undefined ? 0 : typeof v === 'number' ? v : v(r));

/**
 * Simulate and write the trace into `dir` as it goes (each rank's records in its own thread file,
 * in its time order; memory does not grow with the program); returns the manifest and the
 * records written.
 */
export function simulateSpmd(dir: string, o: SpmdSimOptions): { manifest: TraceManifest; end: number; records: number } {
  const R = o.ranks, N = Math.max(1, o.nodes ?? 1), per = Math.ceil(R / N), c = o.opCost ?? 2000;
  let x = (o.seed ?? 1) >>> 0 || 1;
  const rnd = (): number => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x / 2 ** 32; };
  const manifest: TraceManifest = {
    format: 'luna-ts-trace', version: VERSION, program: 'spmd-sim.ts', args: [], nodes: N, threads: per, ranks: R,
    codes: [], clock: { cpuExact: true, offsets: [] }, startedAt: new Date(0).toISOString(), versions: { lunaTs: 'sim', node: process.version }, files: [],
  };
  openTraceDir(dir, manifest);
  const sys: ThreadTraceWriter[] = [], w: ThreadTraceWriter[] = [];
  for (let n = 0; n < N; n++) {
    sys.push(ThreadTraceWriter.open(dir, n, 0));
    sys[n]!.programStart(0);
    manifest.files.push({ node: n, thread: 0, path: traceFileName(n, 0) });
    for (let r = n * per; r < Math.min(R, (n + 1) * per); r++) {
      const th = r - n * per + 1;
      w.push(ThreadTraceWriter.open(dir, n, th));
      manifest.files.push({ node: n, thread: th, path: traceFileName(n, th) });
    }
  }
  const OPS = Object.fromEntries(SPMD_OPS.map((name, i) => [name, i])) as Record<SpmdOp, number>;
  const now = new Float64Array(R).fill(1000);
  const enter = new Float64Array(R), exit = new Float64Array(R);
  let seq = 0, lastNotify = -Infinity;
  for (const ph of o.phases) {
    if ('compute' in ph) {
      for (let r = 0; r < R; r++) now[r] += at(ph.compute, r) + (o.jitter ? Math.floor(rnd() * o.jitter) : 0);
      continue;
    }
    if ('lock' in ph) {
      const who = ph.ranks ?? Array.from({ length: R }, (_, r) => r);
      const order = [...who].sort((a, b) => now[a]! - now[b]! || a - b);
      let free = -Infinity;
      for (const r of order) {
        const e = now[r]!, wr = w[r]!;
        // the next holder gets the lock a handoff after the release (never at the same instant)
        const got = Math.max(e + c, free + c);
        wr.spmdEnter(e, r, OPS.lock, wr.siteName(ph.site)); wr.spmdAlock(got, r, ph.lock); wr.spmdExit(got, r, OPS.lock);
        const rel = got + at(ph.hold, r);
        wr.spmdEnter(rel, r, OPS.unlock, wr.siteName(`${ph.site} (unlock)`)); wr.spmdRlock(rel, r, ph.lock); wr.spmdExit(rel + c, r, OPS.unlock);
        free = rel;
        now[r] = rel + c;
      }
      continue;
    }
    const op = ph.op, sIn = MODE[ph.sync?.in ?? 'nosync'], sOut = MODE[ph.sync?.out ?? 'nosync'], root = ph.root ?? (op === 'all_alloc' ? 0 : -1);
    let maxEnter = -Infinity;
    for (let r = 0; r < R; r++) { enter[r] = now[r]!; if (enter[r]! > maxEnter) maxEnter = enter[r]!; }
    let low = -Infinity;
    for (let r = 0; r < R; r++) {
      let go = enter[r]!;
      if (op === 'barrier' || sIn === MODE.allsync) go = maxEnter;
      else if (op === 'notify') lastNotify = Math.max(lastNotify, enter[r]!);
      else if (op === 'wait') go = Math.max(enter[r]!, lastNotify);
      else if (op === 'all_alloc') go = Math.max(enter[r]!, enter[root]!);
      else if (sIn === MODE.mysync) {
        if ((op === 'broadcast' || op === 'scatter') && root >= 0) go = Math.max(enter[r]!, enter[root]!);
        else if ((op === 'gather' || op === 'reduce') && root >= 0) go = r === root ? maxEnter : enter[r]!;
        else if (op === 'prefix_reduce') { low = Math.max(low, enter[r]!); go = low; }
        else go = maxEnter;
      }
      exit[r] = go + c;
    }
    if (sOut === MODE.allsync || (sOut === MODE.mysync && (op === 'gather_all' || op === 'exchange'))) exit.fill(Math.max(...exit));
    const bytes = ph.bytes ?? 0, code = OPS[op];
    for (let r = 0; r < R; r++) {
      exit[r] += at(ph.exitDelay, r);
      const wr = w[r]!;
      wr.spmdEnter(enter[r]!, r, code, wr.siteName(ph.site));
      wr.spmdCExit(exit[r]!, r, code, seq, root, sIn + 4 * sOut, r === root ? bytes * (R - 1) : 0, r === root ? 0 : bytes);
      now[r] = exit[r]!;
    }
    if (op === 'wait') lastNotify = -Infinity;
    seq++;
  }
  let end = -Infinity;
  for (let r = 0; r < R; r++) end = Math.max(end, now[r]! + c);
  let records = 0;
  for (const x of w) { records += x.records; x.close(); }
  for (const s of sys) { s.programFinish(end, 1); records += s.records; s.close(); }
  manifest.status = 'completed';
  writeManifest(dir, manifest);
  return { manifest, end, records };
}
