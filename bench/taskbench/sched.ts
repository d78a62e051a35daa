// Where a worker lane's time goes by the kernel's scheduler, over a traced run's span: on its CPU,
// asleep, or runnable and kept off its CPU — and by whom (the system thread, the other worker,
// V8's and libuv's helper threads, other processes). Read from `perf script` of
// `perf record -k mono -e sched:sched_switch -e sched:sched_wakeup -a` around a `luna run --trace`
// whose run origin was set (LUNA_TRACE_ORIGIN = CLOCK_MONOTONIC ns), so that the trace's times and
// perf's share a clock. The hand-off accounting (handoff.ts) says which step waited; this says
// what the waiting lane's thread was doing meanwhile.
//
//   node dist/bench/taskbench/sched.js <perf script output> <fragments.csv> <origin ns>
import { readFileSync } from 'node:fs';
import { csvRows } from './handoff.js';

/** What a lane's thread was doing: on its CPU, asleep, or runnable while another thread held its CPU. */
export type Holder = 'system' | 'other worker' | 'helper' | 'other process';
export type State = 'running' | 'sleeping' | `lost to ${Holder}`;

interface Switch { t: number; kind: 'switch'; prev: number; prevRunnable: boolean; next: number; cpu: number }
interface Wakeup { t: number; kind: 'wakeup'; woken: number; targetCpu: number }
type Event = Switch | Wakeup;

export interface PerfSched {
  events: Event[];
  /** thread id → its process id */
  tgid: Map<number, number>;
  /** command name → the first process seen under it (a process `exec`s node under its launcher's name) */
  named: Map<string, number>;
}

// `perf script -F comm,pid,tid,cpu,time,event,trace`: "comm pid/tid [cpu] secs: event: k=v …"
const LINE = /^\s*(.+?)\s+(\d+)\/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s+(.*)$/;

export function parsePerfScript(text: string): PerfSched {
  const events: Event[] = [];
  const tgid = new Map<number, number>(), named = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (!m) continue;
    const [, comm, pid, tid, cpu, secs, event, rest] = m as unknown as [string, string, string, string, string, string, string, string];
    tgid.set(Number(tid), Number(pid));
    if (!named.has(comm)) named.set(comm, Number(pid));
    const kv = new Map([...rest.matchAll(/(\w+)=(\S+)/g)].map((x) => [x[1]!, x[2]!]));
    // µs resolution in perf's text: kept as ns
    const t = Math.round(Number(secs) * 1e9);
    if (event === 'sched:sched_switch') {
      events.push({ t, kind: 'switch', prev: Number(kv.get('prev_pid')), prevRunnable: (kv.get('prev_state') ?? '').startsWith('R'), next: Number(kv.get('next_pid')), cpu: Number(cpu) });
    } else if (event === 'sched:sched_wakeup') {
      events.push({ t, kind: 'wakeup', woken: Number(kv.get('pid')), targetCpu: Number(kv.get('target_cpu')) });
    }
  }
  events.sort((a, b) => a.t - b.t);
  return { events, tgid, named };
}

/** A thread's state changes: from `t` on it runs, sleeps, or waits (preempted, or woken) while `by` holds its CPU. */
interface Change { t: number; state: 'running' | 'sleeping' | 'preempted' | 'woken'; by: number }

/** Each thread's state changes, and its intervals on a CPU. */
export function timelines(events: readonly Event[]): { changes: Map<number, Change[]>; onCpu: Map<number, [number, number][]> } {
  const changes = new Map<number, Change[]>(), onCpu = new Map<number, [number, number][]>();
  const current = new Map<number, { tid: number; since: number }>();
  const add = (tid: number, c: Change): void => { let a = changes.get(tid); if (!a) changes.set(tid, (a = [])); a.push(c); };
  for (const e of events) {
    if (e.kind === 'switch') {
      const cur = current.get(e.cpu);
      if (cur && cur.tid === e.prev) { let a = onCpu.get(e.prev); if (!a) onCpu.set(e.prev, (a = [])); a.push([cur.since, e.t]); }
      current.set(e.cpu, { tid: e.next, since: e.t });
      add(e.prev, e.prevRunnable ? { t: e.t, state: 'preempted', by: e.next } : { t: e.t, state: 'sleeping', by: -1 });
      add(e.next, { t: e.t, state: 'running', by: -1 });
    } else {
      // woken: it waits for its CPU, held by whichever thread runs there now
      add(e.woken, { t: e.t, state: 'woken', by: current.get(e.targetCpu)?.tid ?? -1 });
    }
  }
  return { changes, onCpu };
}

/** Time on a CPU of thread `tid` within [from, to). */
export function cpuWithin(onCpu: Map<number, [number, number][]>, tid: number, from: number, to: number): number {
  let s = 0;
  for (const [a, b] of onCpu.get(tid) ?? []) s += Math.max(0, Math.min(b, to) - Math.max(a, from));
  return s;
}

/**
 * Thread `tid`'s time in [from, to) by state (ns), `holder` naming who held its CPU while it
 * waited (preempted, or woken and not yet on a CPU). A wake-up ends only a sleep.
 */
export function statesWithin(changes: readonly Change[], from: number, to: number, holder: (tid: number) => Holder): Map<State, number> {
  const out = new Map<State, number>();
  const put = (s: State, ns: number): void => { if (ns > 0) out.set(s, (out.get(s) ?? 0) + ns); };
  const name = (c: Change): State => (c.state === 'running' || c.state === 'sleeping' ? c.state : `lost to ${holder(c.by)}`);
  // before its first change a thread was off its CPU if that change puts it on (asleep, as far as perf shows), else on it
  let i = 0, state: State = changes[0]?.state === 'running' ? 'sleeping' : 'running', asleep = state === 'sleeping';
  // the state at `from`: the changes before it
  for (; i < changes.length && changes[i]!.t <= from; i++) {
    const c = changes[i]!;
    if (c.state === 'woken' && !asleep) continue;
    state = name(c);
    asleep = c.state === 'sleeping';
  }
  let since = from;
  for (; i < changes.length && changes[i]!.t < to; i++) {
    const c = changes[i]!;
    if (c.state === 'woken' && !asleep) continue;
    put(state, c.t - since);
    state = name(c);
    asleep = c.state === 'sleeping';
    since = c.t;
  }
  put(state, to - since);
  return out;
}

/** The span (ms), each lane's share of it by state, and the CPU (% of the span, over both CPUs) of the system thread, of luna's other threads (V8's, libuv's) and of other processes. */
export interface SchedSplit { spanMs: number; lanes: LaneSched[]; systemCpuPct: number; helpersCpuPct: number; othersCpuPct: number }

export interface LaneSched {
  lane: string;
  tid: number;
  /** % of the span by state */
  pct: Record<string, number>;
}

/**
 * Each worker lane's span by state: `tasks` are the trace's (lane, start, finish, on the trace's
 * clock), `origin` the run's origin on CLOCK_MONOTONIC. The luna process is the one first seen
 * under `processName` (its launcher's name before it ran node); its main thread is the system
 * thread; each lane's thread is the one of that process on a CPU at most of its tasks' middles.
 */
export function laneSched(perf: PerfSched, tasks: readonly { lane: string; start: number; finish: number }[], origin: number, processName = 'luna'): SchedSplit {
  const { changes, onCpu } = timelines(perf.events);
  // the luna process: the one first seen under its launcher's name, else the one whose threads run the tasks
  const luna = perf.named.get(processName) ?? runningTasks(perf, onCpu, tasks, origin);
  if (luna === undefined) throw new Error(`perf script: no thread named ${processName}, and no process on a CPU at the tasks' middles`);
  const first = tasks.reduce((m, t) => Math.min(m, t.start), Infinity) + origin, last = tasks.reduce((m, t) => Math.max(m, t.finish), -Infinity) + origin;
  const span = last - first;
  const byLane = new Map<string, { start: number; finish: number }[]>();
  for (const t of tasks) { let a = byLane.get(t.lane); if (!a) byLane.set(t.lane, (a = [])); a.push({ start: t.start + origin, finish: t.finish + origin }); }
  const ours = [...perf.tgid].filter(([tid, p]) => p === luna && tid !== luna).map(([tid]) => tid);
  const laneTid = new Map<string, number>();
  for (const [lane, ts] of byLane) {
    let best = -1, votes = 0;
    for (const tid of ours) {
      const iv = onCpu.get(tid) ?? [];
      const n = ts.slice(0, 200).filter((t) => { const mid = (t.start + t.finish) / 2; return iv.some(([a, b]) => a <= mid && mid < b); }).length;
      if (n > votes) { votes = n; best = tid; }
    }
    if (best >= 0) laneTid.set(lane, best);
  }
  const workers = new Set(laneTid.values());
  const holder = (tid: number): Holder => (tid === luna ? 'system' : workers.has(tid) ? 'other worker' : perf.tgid.get(tid) === luna ? 'helper' : 'other process');
  const lanes: LaneSched[] = [];
  for (const [lane, tid] of [...laneTid].sort()) {
    const s = statesWithin(changes.get(tid) ?? [], first, last, holder);
    lanes.push({ lane, tid, pct: Object.fromEntries([...s].map(([k, v]) => [k, (100 * v) / span])) });
  }
  const helpers = ours.filter((t) => !workers.has(t)).reduce((a, t) => a + cpuWithin(onCpu, t, first, last), 0);
  const others = [...onCpu.keys()].filter((t) => t !== 0 && perf.tgid.get(t) !== luna).reduce((a, t) => a + cpuWithin(onCpu, t, first, last), 0);
  return { spanMs: span / 1e6, lanes, systemCpuPct: (100 * cpuWithin(onCpu, luna, first, last)) / span, helpersCpuPct: (100 * helpers) / span, othersCpuPct: (100 * others) / span };
}

/** The process whose threads are most often on a CPU at the middle of a task (undefined: none). */
function runningTasks(perf: PerfSched, onCpu: Map<number, [number, number][]>, tasks: readonly { start: number; finish: number }[], origin: number): number | undefined {
  const votes = new Map<number, number>();
  for (const t of tasks.slice(0, 200)) {
    const mid = (t.start + t.finish) / 2 + origin;
    for (const [tid, iv] of onCpu) if (tid !== 0 && iv.some(([a, b]) => a <= mid && mid < b)) votes.set(perf.tgid.get(tid)!, (votes.get(perf.tgid.get(tid)!) ?? 0) + 1);
  }
  let best: number | undefined, n = 0;
  for (const [pid, v] of votes) if (v > n) { n = v; best = pid; }
  return best;
}

/** fragments.csv (luna export tables): each fragment's lane, start and finish. */
export function tasksOf(csv: string): { lane: string; start: number; finish: number }[] {
  return csvRows(csv).map((c) => ({ lane: c.lane!, start: Number(c.start), finish: Number(c.finish) }));
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const [perfFile, fragments, origin] = process.argv.slice(2);
  if (!perfFile || !fragments || !origin) {
    process.stderr.write('usage: node dist/bench/taskbench/sched.js <perf script output> <fragments.csv> <origin ns>\n');
    process.exit(2);
  }
  const r = laneSched(parsePerfScript(readFileSync(perfFile, 'utf8')), tasksOf(readFileSync(fragments, 'utf8')), Number(origin));
  process.stdout.write(`span ${r.spanMs.toFixed(1)} ms; on a CPU: the system thread ${r.systemCpuPct.toFixed(1)} % of it, luna's helper threads ${r.helpersCpuPct.toFixed(1)} %, other processes ${r.othersCpuPct.toFixed(1)} %\n`);
  for (const l of r.lanes) process.stdout.write(`lane ${l.lane} (thread ${l.tid}): ${Object.entries(l.pct).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(1)} %`).join(', ')}\n`);
}
