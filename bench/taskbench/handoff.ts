// What a dependent step pays between workers, from a trace: for each task of a Task Bench graph,
// the time from its last input's finish (the latest finish among the tasks it reads, which the
// bench knows from the graph) to its start, and how busy each worker lane was over the span.
// One traced `luna run`, read back through `luna export tables` (the fragments table).
// The least busy lane's idle time is split by cause (LaneIdle): a share a loaded machine moves
// less than the busy share itself, since its preemptions show up as their own term.
import { parse } from 'csv-parse/sync';
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
  /**
   * The same, split by which input finished last (see HandoffSplit): one the task's own lane made
   * (its previous task ended last, the partner's value was already there) or one another lane made
   * (the lane waited for it)
   */
  own: HandoffClass;
  partner: HandoffClass;
  /** the least busy worker lane, % of the span of the graph's tasks */
  laneBusyPct: number;
  /** where that lane's idle time went, % of the span (they add up to 100 − laneBusyPct) */
  idle: LaneIdle;
  /** that lane's time inside its tasks without their thread on a CPU (wall − thread CPU), % of the span: busy, but not computing */
  preemptedPct: number;
  tasks: number;
  /** the tasks' median thread CPU (the kernel's size, µs) and the span of the graph's tasks (ms) */
  taskCpuUs: number;
  spanMs: number;
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

/**
 * A lane's idle time over the span, by cause, % of the span. Between two of its tasks the lane
 * first waits for the input another lane makes (until that input's finish), then for the
 * runtime (the input's finish → its start: `handoff`). The first wait, o.finish − p.finish for
 * the other lane's task o and the lane's own previous task p, is split exactly into o starting
 * later than p (`otherLate`: a hand-off or preemption earlier on o's lane), o's kernel taking
 * more thread CPU than p's (`otherCpu`: the kernel's own jitter), and o's thread off its CPU
 * longer than p's inside the tasks (`otherPreempted`: other threads on the cores — other
 * processes, the system thread, V8's helpers). `edges`: before the lane's first task and after
 * its last (start-up, and the tail where one lane has nothing left).
 */
export interface LaneIdle { edgesPct: number; otherLatePct: number; otherCpuPct: number; otherPreemptedPct: number; handoffPct: number }

/** A task as the trace shows it: lane, start, finish and thread CPU (ns). */
interface Ran { start: number; finish: number; cpu: number; lane: string }

/** Last input → start of one class of dependent tasks: how many, median and 90th percentile (µs; NaN when none). */
export interface HandoffClass { n: number; medianUs: number; p90Us: number }

/**
 * Last input → start of every dependent task (µs, sorted), and split by whose input finished last:
 * `own`, the task's own lane made it (its previous task ended last, so the path is that lane's
 * own return, bookkeeping and start, with the partner's value already there), or `partner`, another
 * lane made it (the lane waited for it: the partner's hand-out, then this lane's wake or spin and
 * start). A tie goes to `own`: the lane's own finish is as late as any. `inputsOf(task)` are the
 * tasks whose outputs it reads; tasks without any are not dependent and not counted.
 */
export function handoffSplit<R extends Ran>(tasks: Iterable<R>, inputsOf: (r: R) => readonly Ran[]): { all: number[]; own: HandoffClass; partner: HandoffClass } {
  const all: number[] = [], own: number[] = [], partner: number[] = [];
  for (const c of tasks) {
    let last: Ran | undefined;
    for (const d of inputsOf(c)) if (last === undefined || d.finish > last.finish || (d.finish === last.finish && d.lane === c.lane)) last = d;
    if (last === undefined) continue;
    const us = (c.start - last.finish) / 1000;
    all.push(us);
    (last.lane === c.lane ? own : partner).push(us);
  }
  return { all: all.sort((a, b) => a - b), own: classOf(own), partner: classOf(partner) };
}

/** How many, median and 90th percentile of `a` (µs), sorted in place. */
function classOf(a: number[]): HandoffClass {
  a.sort((x, y) => x - y);
  return { n: a.length, medianUs: a.length > 0 ? median(a) : NaN, p90Us: a.length > 0 ? a[Math.floor(a.length * 0.9)]! : NaN };
}

/**
 * The idle split (LaneIdle) of one lane over the span [first, last]: `mine` are its tasks in
 * start order, `inputsOf(task)` the tasks whose outputs that task reads.
 */
export function laneIdle(mine: readonly Ran[], inputsOf: (r: Ran) => readonly Ran[], first: number, last: number): LaneIdle {
  const span = last - first;
  const pct = (ns: number): number => (100 * ns) / span;
  let late = 0, cpu = 0, pre = 0, hand = 0;
  for (let i = 1; i < mine.length; i++) {
    const a = mine[i]!, p = mine[i - 1]!;
    let o: Ran | undefined;
    for (const d of inputsOf(a)) if (o === undefined || d.finish > o.finish) o = d;
    const ready = o === undefined ? p.finish : Math.max(o.finish, p.finish);
    hand += a.start - ready;
    if (o === undefined || o.finish <= p.finish) continue;
    late += o.start - p.start;
    cpu += o.cpu - p.cpu;
    pre += o.finish - o.start - o.cpu - (p.finish - p.start - p.cpu);
  }
  const edges = mine.length === 0 ? span : mine[0]!.start - first + (last - mine[mine.length - 1]!.finish);
  return { edgesPct: pct(edges), otherLatePct: pct(late), otherCpuPct: pct(cpu), otherPreemptedPct: pct(pre), handoffPct: pct(hand) };
}

/** The rows of a table `luna export tables` wrote, by column name (csv-parse: quoted fields may hold commas). */
export function csvRows(text: string): Record<string, string>[] {
  return parse(text, { columns: true, skip_empty_lines: true }) as Record<string, string>[];
}

/** A task of the graph as the trace shows it, with its step and column. */
type Task = Ran & { t: number; x: number };

/** The graph's tasks in the rows of fragments.csv (`init[x]` at step 0, `task[t][x]` after), by `step:column`. */
export function tasksOf(rows: readonly Record<string, string>[]): Map<string, Task> {
  const at = new Map<string, Task>();
  for (const r of rows) {
    const label = r.label, idx = JSON.parse(r.indices!) as number[];
    const key = label === 'init' ? `0:${idx[0]}` : label === 'task' ? `${idx[0]}:${idx[1]}` : undefined;
    if (key) at.set(key, { start: Number(r.start), finish: Number(r.finish), cpu: Number(r.cpu_ns), lane: r.lane!, t: label === 'init' ? 0 : idx[0]!, x: label === 'init' ? idx[0]! : idx[1]! });
  }
  return at;
}

/** The tasks `c` reads that the trace holds. */
function inputsIn(g: Graph, at: Map<string, Task>, c: Task): Task[] {
  return c.t === 0 ? [] : deps(g, c.t, c.x).map((d) => at.get(`${c.t - 1}:${d}`)).filter((d): d is Task => d !== undefined);
}

/** handoffSplit over the graph's tasks (`tasksOf`); a task with an input missing from the trace has no readable last input and is not counted. */
export function graphHandoffs(g: Graph, at: Map<string, Task>): ReturnType<typeof handoffSplit> {
  return handoffSplit(at.values(), (c) => {
    const ins = inputsIn(g, at, c);
    return ins.length === deps(g, c.t, c.x).length ? ins : [];
  });
}

/**
 * Run `file` (generated for graph `g`: `init[x]` at step 0, `task[t][x]` after) traced on 1 node ×
 * `threads` threads with `args` (`flags`: options of `luna run`, such as the C++ kernel's compiler
 * flags), and measure its hand-offs.
 */
export function measureHandoffs(g: Graph, file: string, threads: number, args: (string | number)[], env: Record<string, string> = {}, flags: string[] = []): Handoffs {
  const dir = mkdtempSync(join(tmpdir(), 'luna-handoff-'));
  try {
    const trace = join(dir, 'trace'), tables = join(dir, 'tables');
    const run = spawnSync(LUNA, ['run', '--threads', String(threads), '--warm-start', '--timing', '--trace', trace, ...flags, file, ...args.map(String)], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 600_000 });
    if (run.status !== 0) throw new Error(`traced run: ${run.stderr || run.error?.message}`);
    const timing = /timing: (\{.*\})/.exec(run.stderr);
    if (!timing) throw new Error(`traced run: no --timing line in ${run.stderr}`);
    const { batches, systemCpuMs, handWorker = NaN, handSystem = NaN, fedNone = 0, fedSpun = 0, fedSlept = 0, systemWakes = NaN, workerWakes = NaN, examined = NaN } =
      JSON.parse(timing[1]!) as { batches: number; systemCpuMs: number; handWorker?: number; handSystem?: number; fedNone?: number; fedSpun?: number; fedSlept?: number; systemWakes?: number; workerWakes?: number; examined?: number };
    const fedWaits = fedNone + fedSpun + fedSlept;
    const ex = spawnSync(LUNA, ['export', 'tables', trace, '-o', tables], { encoding: 'utf8', timeout: 600_000 });
    if (ex.status !== 0) throw new Error(`luna export tables: ${ex.stderr || ex.error?.message}`);
    const rows = csvRows(readFileSync(join(tables, 'fragments.csv'), 'utf8'));
    for (const n of ['label', 'indices', 'lane', 'start', 'finish', 'cpu_ns']) if (rows.length > 0 && !(n in rows[0]!)) throw new Error(`fragments.csv: no column ${n}`);
    const at = tasksOf(rows);
    let first = Infinity, last = -Infinity;
    const busy = new Map<string, number>();
    for (const c of at.values()) {
      first = Math.min(first, c.start);
      last = Math.max(last, c.finish);
      busy.set(c.lane, (busy.get(c.lane) ?? 0) + c.finish - c.start);
    }
    const inputsOf = (c: Ran): Ran[] => inputsIn(g, at, c as Task);
    const { all: lat, own, partner } = graphHandoffs(g, at);
    if (lat.length === 0) throw new Error('no dependent task in the trace');
    const every = classOf(lat);
    const span = last - first;
    // the least busy lane: its tasks in order, each with the tasks it reads
    let least = '';
    for (const [lane, b] of busy) if (least === '' || b < busy.get(least)!) least = lane;
    const mine = [...at.values()].filter((c) => c.lane === least).sort((a, b) => a.start - b.start);
    const inTasks = mine.reduce((s, c) => s + c.finish - c.start - c.cpu, 0);
    return {
      medianUs: every.medianUs, meanUs: lat.reduce((a, b) => a + b, 0) / lat.length, p90Us: every.p90Us, own, partner,
      laneBusyPct: (100 * busy.get(least)!) / span, idle: laneIdle(mine, inputsOf, first, last), preemptedPct: (100 * inTasks) / span, tasks: at.size,
      taskCpuUs: median([...at.values()].map((c) => c.cpu / 1000)), spanMs: span / 1e6, batches, systemCpuMs,
      handWorker, handSystem, fedSleptPct: fedWaits > 0 ? (100 * fedSlept) / fedWaits : NaN, systemWakes, workerWakes, examined,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
