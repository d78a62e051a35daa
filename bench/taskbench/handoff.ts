// What a dependent step pays between workers, from a trace: for each task of a Task Bench graph,
// the time from its last input's finish (the latest finish among the tasks it reads, which the
// bench knows from the graph) to its start, and how busy each worker lane was over the span.
// One traced `luna run`, read back through `luna export tables` (the fragments table).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LUNA } from '../common.js';
import { median } from '../median.js';
import { deps, type Graph } from './patterns.js';

export interface Handoffs {
  /** last input's finish → start, µs: median, mean, 90th percentile */
  medianUs: number;
  meanUs: number;
  p90Us: number;
  /** the least busy worker lane, % of the span of the graph's tasks */
  laneBusyPct: number;
  tasks: number;
  /** batches the system thread sent and its CPU time (ms), from `--timing` */
  batches: number;
  systemCpuMs: number;
  /** CFs sent with an input a worker handed over, and with every input through the system thread (`--timing`) */
  handWorker: number;
  handSystem: number;
  /** share of the workers' waits for fed values that ended after a sleep (a wake-up between producer and consumer), % */
  fedSleptPct: number;
  /** sleeping workers woken by the system thread and by workers */
  systemWakes: number;
  workerWakes: number;
  /** CFs the system thread examined in full (a fed CF joins its batch from the task it prepared when it parked) */
  examined: number;
}

/** Split one CSV line (quoted fields may hold commas). */
function fields(line: string): string[] {
  const out: string[] = [];
  let cur = '', q = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (q) { if (c === '"' && line[i + 1] === '"') { cur += '"'; i++; } else if (c === '"') q = false; else cur += c; }
    else if (c === '"') q = true;
    else if (c === ',') { out.push(cur); cur = ''; }
    else cur += c;
  }
  out.push(cur);
  return out;
}

/**
 * Run `file` (generated for graph `g`: `init[x]` at step 0, `task[t][x]` after) traced on 1 node ×
 * `threads` threads with `args`, and measure its hand-offs.
 */
export function measureHandoffs(g: Graph, file: string, threads: number, args: (string | number)[], env: Record<string, string> = {}): Handoffs {
  const dir = mkdtempSync(join(tmpdir(), 'luna-handoff-'));
  try {
    const trace = join(dir, 'trace'), tables = join(dir, 'tables');
    const run = spawnSync(LUNA, ['run', '--threads', String(threads), '--warm-start', '--timing', '--trace', trace, file, ...args.map(String)], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 600_000 });
    if (run.status !== 0) throw new Error(`traced run: ${run.stderr || run.error?.message}`);
    const timing = /timing: (\{.*\})/.exec(run.stderr);
    if (!timing) throw new Error(`traced run: no --timing line in ${run.stderr}`);
    const { batches, systemCpuMs, handWorker = NaN, handSystem = NaN, fedNone = 0, fedSpun = 0, fedSlept = 0, systemWakes = NaN, workerWakes = NaN, examined = NaN } =
      JSON.parse(timing[1]!) as { batches: number; systemCpuMs: number; handWorker?: number; handSystem?: number; fedNone?: number; fedSpun?: number; fedSlept?: number; systemWakes?: number; workerWakes?: number; examined?: number };
    const fedWaits = fedNone + fedSpun + fedSlept;
    const ex = spawnSync(LUNA, ['export', 'tables', trace, '-o', tables], { encoding: 'utf8', timeout: 600_000 });
    if (ex.status !== 0) throw new Error(`luna export tables: ${ex.stderr || ex.error?.message}`);
    const lines = readFileSync(join(tables, 'fragments.csv'), 'utf8').split('\n').filter(Boolean);
    const head = fields(lines[0]!);
    const col = (n: string): number => { const i = head.indexOf(n); if (i < 0) throw new Error(`fragments.csv: no column ${n}`); return i; };
    const [LABEL, IDX, LANE, START, FINISH] = ['label', 'indices', 'lane', 'start', 'finish'].map(col) as [number, number, number, number, number];
    const at = new Map<string, { start: number; finish: number; lane: string }>();
    for (const l of lines.slice(1)) {
      const r = fields(l);
      const label = r[LABEL], idx = JSON.parse(r[IDX]!) as number[];
      const key = label === 'init' ? `0:${idx[0]}` : label === 'task' ? `${idx[0]}:${idx[1]}` : undefined;
      if (key) at.set(key, { start: Number(r[START]), finish: Number(r[FINISH]), lane: r[LANE]! });
    }
    const lat: number[] = [];
    let first = Infinity, last = -Infinity;
    const busy = new Map<string, number>();
    for (const [key, c] of at) {
      first = Math.min(first, c.start);
      last = Math.max(last, c.finish);
      busy.set(c.lane, (busy.get(c.lane) ?? 0) + c.finish - c.start);
      const [t, x] = key.split(':').map(Number) as [number, number];
      if (t === 0) continue;
      let ready = -Infinity;
      for (const d of deps(g, t, x)) ready = Math.max(ready, at.get(`${t - 1}:${d}`)?.finish ?? NaN);
      if (Number.isFinite(ready)) lat.push((c.start - ready) / 1000);
    }
    if (lat.length === 0) throw new Error('no dependent task in the trace');
    lat.sort((a, b) => a - b);
    const span = last - first;
    return {
      medianUs: median(lat), meanUs: lat.reduce((a, b) => a + b, 0) / lat.length, p90Us: lat[Math.floor(lat.length * 0.9)]!,
      laneBusyPct: (100 * Math.min(...busy.values())) / span, tasks: at.size, batches, systemCpuMs,
      handWorker, handSystem, fedSleptPct: fedWaits > 0 ? (100 * fedSlept) / fedWaits : NaN, systemWakes, workerWakes, examined,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
