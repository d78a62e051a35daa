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
  phases: Phase[];
  /** cost of one operation once it may proceed (ns; default 2 000) */
  opCost?: number;
  /** deterministic jitter added to every computation, up to this many ns (default 0) */
  jitter?: number;
  seed?: number;
}

interface Rec { t: number; k: 'E' | 'X' | 'C' | 'A' | 'R'; op?: number; site?: string; seq?: number; root?: number; sync?: number; sent?: number; recv?: number; lock?: number }

const MODE = { nosync: 0, mysync: 1, allsync: 2 } as const;
const at = (v: RankNs | undefined, r: number): number => (v === undefined ? 0 : typeof v === 'number' ? v : v(r));

/** Simulate and write the trace into `dir`; returns its manifest and the run's end. */
export function simulateSpmd(dir: string, o: SpmdSimOptions): { manifest: TraceManifest; end: number } {
  const R = o.ranks, N = Math.max(1, o.nodes ?? 1), per = Math.ceil(R / N), c = o.opCost ?? 2000;
  let x = (o.seed ?? 1) >>> 0 || 1;
  const rnd = (): number => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x / 2 ** 32; };
  const now = new Float64Array(R).fill(1000);
  const recs: Rec[][] = Array.from({ length: R }, () => []);
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
        const e = now[r]!;
        // the next holder gets the lock a handoff after the release (never at the same instant)
        const got = Math.max(e + c, free + c);
        recs[r]!.push({ t: e, k: 'E', op: SPMD_OPS.indexOf('lock'), site: ph.site }, { t: got, k: 'A', lock: ph.lock }, { t: got, k: 'X', op: SPMD_OPS.indexOf('lock') });
        const rel = got + at(ph.hold, r);
        recs[r]!.push({ t: rel, k: 'E', op: SPMD_OPS.indexOf('unlock'), site: `${ph.site} (unlock)` }, { t: rel, k: 'R', lock: ph.lock }, { t: rel + c, k: 'X', op: SPMD_OPS.indexOf('unlock') });
        free = rel;
        now[r] = rel + c;
      }
      continue;
    }
    const op = ph.op, sIn = MODE[ph.sync?.in ?? 'nosync'], sOut = MODE[ph.sync?.out ?? 'nosync'], root = ph.root ?? (op === 'all_alloc' ? 0 : -1);
    const enter = Float64Array.from(now);
    const maxEnter = Math.max(...enter);
    const exit = new Float64Array(R);
    for (let r = 0; r < R; r++) {
      let go = enter[r]!;
      if (op === 'barrier' || sIn === MODE.allsync) go = maxEnter;
      else if (op === 'notify') lastNotify = Math.max(lastNotify, enter[r]!);
      else if (op === 'wait') go = Math.max(enter[r]!, lastNotify);
      else if (op === 'all_alloc') go = Math.max(enter[r]!, enter[root]!);
      else if (sIn === MODE.mysync) {
        if ((op === 'broadcast' || op === 'scatter') && root >= 0) go = Math.max(enter[r]!, enter[root]!);
        else if ((op === 'gather' || op === 'reduce') && root >= 0) go = r === root ? maxEnter : enter[r]!;
        else if (op === 'prefix_reduce') { for (let q = 0; q <= r; q++) go = Math.max(go, enter[q]!); }
        else go = maxEnter;
      }
      exit[r] = go + c;
    }
    if (sOut === MODE.allsync || (sOut === MODE.mysync && (op === 'gather_all' || op === 'exchange'))) exit.fill(Math.max(...exit));
    for (let r = 0; r < R; r++) exit[r] += at(ph.exitDelay, r);
    const bytes = ph.bytes ?? 0;
    for (let r = 0; r < R; r++) {
      recs[r]!.push({ t: enter[r]!, k: 'E', op: SPMD_OPS.indexOf(op), site: ph.site });
      recs[r]!.push({ t: exit[r]!, k: 'C', op: SPMD_OPS.indexOf(op), seq, root, sync: sIn + 4 * sOut, sent: r === root ? bytes * (R - 1) : 0, recv: r === root ? 0 : bytes });
      now[r] = exit[r]!;
    }
    if (op === 'wait') lastNotify = -Infinity;
    seq++;
  }
  const end = Math.max(...now) + c;
  const manifest: TraceManifest = {
    format: 'luna-ts-trace', version: VERSION, program: 'spmd-sim.ts', args: [], nodes: N, threads: per, ranks: R,
    codes: [], clock: { cpuExact: true, offsets: [] }, startedAt: new Date(0).toISOString(), versions: { lunaTs: 'sim', node: process.version }, files: [],
  };
  openTraceDir(dir, manifest);
  for (let n = 0; n < N; n++) {
    const sys = ThreadTraceWriter.open(dir, n, 0);
    sys.programStart(0);
    manifest.files.push({ node: n, thread: 0, path: traceFileName(n, 0) });
    for (let r = n * per; r < Math.min(R, (n + 1) * per); r++) {
      const th = r - n * per + 1;
      const w = ThreadTraceWriter.open(dir, n, th);
      manifest.files.push({ node: n, thread: th, path: traceFileName(n, th) });
      for (const e of recs[r]!) {
        switch (e.k) {
          case 'E': w.spmdEnter(e.t, r, e.op!, w.siteName(e.site!)); break;
          case 'X': w.spmdExit(e.t, r, e.op!); break;
          case 'C': w.spmdCExit(e.t, r, e.op!, e.seq!, e.root!, e.sync!, e.sent!, e.recv!); break;
          case 'A': w.spmdAlock(e.t, r, e.lock!); break;
          case 'R': w.spmdRlock(e.t, r, e.lock!); break;
        }
      }
      w.close();
    }
    sys.programFinish(end, 1);
    sys.close();
  }
  manifest.status = 'completed';
  writeManifest(dir, manifest);
  return { manifest, end };
}
