// Recommendations in the seeds' terms (000 §2.3, 003 §3.2), each grounded in this run's numbers:
// S → parallelism degree / fragmentation, distribution of CFs, critical-path priorities, balancing;
// L → distribution of DFs relative to CFs, finer fragmentation to overlap transfers, replication;
// O → fragmentation too fine, runtime implementation, pre-emption;
// W → the shared resources fragments or ranks waited for (dynamic-array descriptors, locks,
//     barriers, collectives): which, and who waited.
// Facts of the run come first whatever the dominant loss: an oversubscribed machine (it distorts
// every other figure), nodes and worker threads that ran nothing. Advice names options and rules
// only through features.ts, so it never recommends something the tool does not offer.

import { OPTION, RULE, q } from './features.js';
import { fewerRanks, isClusterLauncher, widenBinding } from '../../core/launchers.js';
import { bytes, dur, pct, share } from './fmt.js';
import type { MachineRow, SlowReport } from './types.js';

const NOTABLE = 10; // percent of T_total worth a recommendation

export const FINDING_KINDS = [
  'run-ended', 'summary', 'oversubscribed', 'bound', 'idle-nodes', 'idle-threads',
  'sequential', 'held-ready', 'uneven-nodes', 'order', 'tail',
  'latency', 'overhead', 'fine-grained', 'preemption',
  'coverage', 'litvinov', 'waiting', 'late-start', 'unspent',
] as const;
export type FindingKind = typeof FINDING_KINDS[number];

/** One recommendation: what it is about, its words, and the report fields that back it. */
export interface Finding {
  kind: FindingKind;
  /** the SLOW factor it explains, if any */
  factor?: 'S' | 'L' | 'O' | 'W';
  text: string;
  /** paths of the report's fields that hold the evidence (e.g. `placement.idleNodes`) */
  evidence: string[];
}

/** The recommendations as text, most important first. */
export function interpretSlow(r: SlowReport): string[] {
  return interpretFindings(r).map((f) => f.text);
}

export function interpretFindings(r: SlowReport): Finding[] {
  const ended = runEnded(r);
  if (r.tTotal <= 0) return [...ended, { kind: 'summary', text: 'The trace holds no run time: nothing to analyze.', evidence: ['tWall'] }];
  const out: Finding[] = [...ended];
  const { p } = r;
  const factors = (['S', 'L', 'O', 'W'] as const).map((f) => [f, p[f]] as const).sort((a, b) => b[1] - a[1]);
  out.push({
    kind: 'summary',
    text: `Useful work P_U = ${pct(p.U)} of T_total = ${dur(r.tTotal)} (${dur(r.tWall)} × ${r.cores} worker ${plural(r.cores, 'thread')}); ` +
      `the dominant loss is ${name(factors[0][0])} (P_${factors[0][0]} = ${pct(factors[0][1])}).`,
    evidence: ['p', 't', 'tTotal'],
  });
  const g = grain(r, factors[0][0]);
  out.push(...oversubscribed(r));
  out.push(...bound(r));
  out.push(...idleNodes(r));
  out.push(...idleThreads(r, g));
  out.push(...lateStart(r));
  for (const [f, v] of factors) {
    if (v < NOTABLE && f !== factors[0][0]) continue;
    if (v <= 0) continue;
    if (f === 'S') out.push(...starvation(r, g));
    else if (f === 'L') out.push(...latency(r, g));
    else if (f === 'W') out.push(...waiting(r));
    else out.push(...overhead(r, g));
  }
  if (r.coverage < 0.99) {
    out.push({ kind: 'coverage', text: `Coverage is only ${pct(100 * r.coverage)}: the trace is incomplete (${r.warnings.join('; ') || 'no warnings'}); figures are lower bounds.`, evidence: ['coverage', 'warnings'] });
  }
  const lit = r.models.litvinov2017, kir = r.models.kireev2024;
  if (lit && kir && kir.S > 0) {
    const moved = kir.S - lit.S;
    if (moved > 0.05 * kir.S) {
      out.push({
        kind: 'litvinov', factor: 'S',
        text: `Under litvinov2017, ${share(moved / kir.S)} of S (${dur(moved)}) is pre-emption that delayed the producers: ` +
          `fewer worker threads than CPUs (${q(OPTION.threads)}) would leave the system threads a CPU and shorten those chains.`,
        evidence: ['models.kireev2024.S', 'models.litvinov2017.S'],
      });
    }
  }
  out.push(...unspent(r));
  return out;
}

/** DFs held to the end because their req_count was never reached: memory, not time, but silent otherwise. */
function unspent(r: SlowReport): Finding[] {
  const u = r.unspent;
  if (!u || u.dfs === 0) return [];
  const named = u.largest.slice(0, 3).map((x) => `${x.df}${r.nodes > 1 ? ` on node ${x.node}` : ''} (${bytes(x.bytes)}, ${x.left} ${plural(x.left, 'read')} short)`);
  return [{
    kind: 'unspent',
    text: `${u.dfs} ${plural(u.dfs, 'DF')} (${bytes(u.bytes)}) stayed in memory to the end of the run: ${u.dfs === 1 ? 'its' : 'their'} req_count was never reached — ` +
      `${named.join(', ')}${u.dfs > named.length ? ` and ${u.dfs - named.length} more` : ''}. A req_count above the number of CFs that read a DF keeps its value from its post ` +
      'to the end, and its memory is never reused: set it to the number of reads.',
    evidence: ['unspent'],
  }];
}

const ENDED: Record<string, string> = {
  failed: 'failed', hung: 'hung', lost: 'lost a node', interrupted: 'was interrupted',
};

/** How a run that did not complete ended, in one line (the first line of the analysis). */
export function runEndLine(r: SlowReport): string | undefined {
  const { status, message } = r.run;
  if (r.run.complete) return undefined;
  const first = message?.split('\n')[0]?.trim();
  const how = ENDED[status]
    ? `The run ${ENDED[status]} after ${dur(r.tWall)}${first ? ` (${first})` : ''}`
    : `The trace has no end: the run was killed, or was still running, ${dur(r.tWall)} after its start`;
  return `${how}: every figure covers only the part of the run before it; fragments that never ran are not in them.`;
}

function runEnded(r: SlowReport): Finding[] {
  const line = runEndLine(r);
  if (!line) return [];
  const fix = r.run.status === 'hung' ? ' Make it complete first (the hang report names what waited for what); judge its performance then.'
    : r.run.status === 'failed' ? ' Make it complete first; judge its performance then.' : '';
  return [{ kind: 'run-ended', text: line + fix, evidence: ['run'] }];
}

/**
 * Which way the fragment size may be advised in this run. Starvation and latency want finer
 * fragments (more CFs ready at once, transfers overlapping computation), overhead per CF wants
 * larger ones; when both apply, the factor that loses more decides and the other findings keep
 * quiet about the size — one list never says both.
 */
interface Grain { finer: boolean; coarser: boolean; why: string }

function notable(r: SlowReport, f: 'S' | 'L' | 'O', dominant: string): boolean {
  return r.p[f] > 0 && (r.p[f] >= NOTABLE || f === dominant);
}

function grain(r: SlowReport, dominant: string): Grain {
  const coarse = notable(r, 'O', dominant) && !cpuContention(r) && fineGrained(r) !== null;
  const fineFactor = (['S', 'L'] as const).filter((f) => notable(r, f, dominant)).sort((a, b) => r.p[b] - r.p[a])[0];
  if (!coarse || !fineFactor) return { finer: true, coarser: coarse, why: '' };
  return r.p.O >= r.p[fineFactor]
    ? { finer: false, coarser: true, why: `overhead per CF dominates (P_O = ${pct(r.p.O)} against P_${fineFactor} = ${pct(r.p[fineFactor])})` }
    : { finer: true, coarser: false, why: `${name(fineFactor)} dominates (P_${fineFactor} = ${pct(r.p[fineFactor])} against P_O = ${pct(r.p.O)})` };
}

/** `--threads k`, with what a replay of the run's graph predicts of it; empty when it predicts a loss. */
function fewerThreads(r: SlowReport, k: number): string {
  const opt = q(`${OPTION.threads} ${k}`);
  const pr = r.predictions;
  if (!pr) return `${opt} (not predicted: ${r.predictionsSkipped})`;
  const x = pr.threads.find((t) => t.threads === k);
  if (!x || !(pr.baselineNs > 0)) return '';
  // fewer workers are worth suggesting when the replay loses (almost) nothing by them
  if (x.ns > 1.02 * pr.baselineNs) return '';
  return `${opt} (simulating this run's graph predicts ${dur(x.ns)} with ${k} against ${dur(pr.baselineNs)} with ${r.threads}: as fast, with CPUs to spare)`;
}

/** The run's graph replayed in critical-path order gains at least this share of its makespan. */
const ORDER_GAIN = 0.05;

function name(f: 'S' | 'L' | 'O' | 'W'): string {
  return f === 'S' ? 'starvation' : f === 'L' ? 'latency' : f === 'W' ? 'waiting for shared resources' : 'runtime overhead';
}

/** W: which resources were waited for, and by whom. */
function waiting(r: SlowReport): Finding[] {
  const b = r.blame.waiting;
  if (b.total <= 0) return [];
  const top = b.byResource.slice(0, 3).map((c) => `${c.key} (${share(c.share)})`).join(', ');
  const who = b.byWaiter.slice(0, 3).map((c) => `${c.label ?? c.key} ${dur(c.ns)}`).join(', ');
  return [{
    kind: 'waiting', factor: 'W',
    text: `Waiting for shared resources costs P_W = ${pct(r.p.W)}: ${b.waits} ${plural(b.waits, 'wait')} for ${top}; the longest waiters: ${who}. ` +
      'A resource held long by one fragment or rank makes the others wait: hold it for less time, split it, or give the waiters other work meanwhile.',
    evidence: ['p.W', 'blame.waiting.byResource', 'blame.waiting.byWaiter'],
  }];
}

/** "1", "1 and 2", "1, 2 and 3", "1, 2, …, and 12 more" */
function list(xs: readonly (string | number)[], max = 8): string {
  const s = xs.slice(0, max).map(String);
  if (xs.length > max) return `${s.join(', ')} and ${xs.length - max} more`;
  return s.length <= 1 ? s.join('') : `${s.slice(0, -1).join(', ')} and ${s[s.length - 1]}`;
}

const plural = (n: number, one: string, many = `${one}s`): string => (n === 1 ? one : many);

function oversubscribedMachines(r: SlowReport): MachineRow[] {
  return r.machines.filter((m) => m.oversubscription > 1 && m.nodes.length > 0);
}

/** The machine's CPUs per node on it, the largest --threads that does not oversubscribe it. */
function fittingThreads(m: MachineRow): number {
  return Math.max(1, Math.floor(m.cores / Math.max(1, m.nodes.length)));
}

function oversubscribed(r: SlowReport): Finding[] {
  return oversubscribedMachines(r).map((m) => {
    const where = m.host ? `Machine ${q(m.host)}` : 'The machine';
    const nn = m.nodes.length;
    const o = r.overhead;
    // under a cluster launcher the ranks per machine are its to choose, not --nodes'
    const cluster = isClusterLauncher(r.launcher);
    const fewer = cluster ? fewerRanks(r.launcher, m.cores) ?? 'the launcher\'s option for ranks per machine' : q(`${OPTION.nodes} ${m.cores}`);
    const fix = nn > m.cores
      ? `Run at most ${m.cores} ${plural(m.cores, 'node')} there (${fewer} with ${q(`${OPTION.threads} 1`)}), or spread the nodes over more machines`
      : `Run with ${q(`${OPTION.threads} ${fittingThreads(m)}`)} so that ${nn} ${plural(nn, 'node')} × threads ≤ ${m.cores} CPUs, or spread the nodes over more machines`;
    return {
      kind: 'oversubscribed' as const, factor: 'O' as const,
      text: `${where} ran ${nn} ${plural(nn, 'node')} × ${r.threads} worker ${plural(r.threads, 'thread')} = ${m.workers} workers ` +
        `(and ${nn} system ${plural(nn, 'thread')}) on ${m.cores} ${plural(m.cores, 'CPU')}: oversubscribed ${m.oversubscription.toFixed(1)}×. ` +
        `At most ${m.cores} threads run at a time, so workers lose their CPU while running CFs (pre-emption ${dur(o.preempt)}) and the runtime ` +
        `starts ready CFs late (ready→start ${dur(o.startDelay)}): that is the machine's limit, not the program's fragmentation. ` +
        `${fix}, then analyse again.`,
      evidence: ['machines', 'overhead.preempt', 'overhead.startDelay'],
    };
  });
}

/**
 * Nodes a launcher (or taskset, a cgroup) bound to fewer CPUs than their machine has, where the
 * node's worker threads and its system thread cannot all run: one CPU (they take turns at every
 * hand-off), or more workers than CPUs. The runtime says the same at start-up (launch/binding.ts).
 */
function boundNodes(r: SlowReport): { m: MachineRow; node: number; cpus: number }[] {
  const out: { m: MachineRow; node: number; cpus: number }[] = [];
  for (const m of r.machines) {
    m.nodes.forEach((node, i) => {
      const cpus = m.nodeCpus[i] ?? m.cores;
      if (cpus < m.cpus && (cpus === 1 || r.threads > cpus)) out.push({ m, node, cpus });
    });
  }
  return out;
}

function bound(r: SlowReport): Finding[] {
  const b = boundNodes(r);
  if (b.length === 0) return [];
  const cpus = Math.min(...b.map((x) => x.cpus));
  const host = b[0]!.m.host, all = b.every((x) => x.m === b[0]!.m);
  const who = r.launcher === 'mpirun' ? 'by mpirun' : r.launcher === 'srun' ? 'by srun' : r.launcher === 'local' ? '(taskset or a cgroup)' : 'by the launcher';
  const nodes = b.map((x) => x.node);
  const o = r.overhead;
  const want = r.threads + 1;
  const fix = widenBinding(r.launcher, want)
    ?? (isClusterLauncher(r.launcher) || r.launcher === 'unknown' ? 'give each rank more CPUs through its launcher' : `run on more CPUs, or with ${q(`${OPTION.threads} 1`)}`);
  return [{
    kind: 'bound', factor: 'O',
    text: `${plural(nodes.length, 'Node')} ${list(nodes)} ${nodes.length > 1 ? 'were each' : 'was'} bound ${who} to ${cpus === 1 ? 'one CPU' : `${cpus} CPUs`}` +
      `${all && host ? ` of machine ${q(host)}'s ${b[0]!.m.cpus}` : ''}: ${nodes.length > 1 ? 'each' : 'it'} ran ${r.threads} worker ${plural(r.threads, 'thread')} and its system thread there, ` +
      `taking turns at every hand-off between them (pre-emption ${dur(o.preempt)}, ready→start ${dur(o.startDelay)}): that binding, not the program, sets the pace. ` +
      `To give each node ${want} CPUs, ${fix}; then analyse again.`,
    evidence: ['machines', 'launcher', 'overhead.preempt', 'overhead.startDelay'],
  }];
}

/** The label with enough CFs to spread over the nodes that does most of the useful work. */
function heaviestLabel(r: SlowReport): { label: string; cfs: number; share: number } | null {
  const rows = r.perLabel.filter((x) => x.label !== 'main' && x.U > 0 && x.cfs >= r.nodes).sort((a, b) => b.U - a.U);
  const top = rows[0];
  return top && r.t.U > 0 ? { label: top.label, cfs: top.cfs, share: top.U / r.t.U } : null;
}

function idleNodes(r: SlowReport): Finding[] {
  const idle = r.placement.idleNodes;
  if (idle.length === 0 || r.nodes < 2) return [];
  const busy = r.placement.perNode.map((c, n) => [n, c] as const).filter(([, c]) => c > 0);
  const ranOn = busy.length === 1
    ? `all ${busy[0]![1]} CFs ran on node ${busy[0]![0]}`
    : `the CFs ran on ${plural(busy.length, 'node')} ${list(busy.map(([n, c]) => `${n} (${c})`))}`;
  const lost = idle.length * r.tWall * r.threads;
  const top = heaviestLabel(r);
  const where = top ? ` (here ${q(top.label)}: ${top.cfs} CFs, ${share(top.share)} of the useful work)` : '';
  // a map rule for the family that label produces, with one binder per index of that family
  const fam = top ? r.produces.find((x) => x.label === top.label)?.family : undefined;
  const rule = fam ? `${q(mapRule(RULE.locatorCyclic, fam, r))} (an expression of its indices)` : `${q(`${RULE.locatorCyclic} X[i] => i;`)} (one binder per index of X)`;
  return [{
    kind: 'idle-nodes', factor: 'S',
    text: `${plural(idle.length, 'Node')} ${list(idle)} ran no fragment: ${ranOn}; ${plural(idle.length, 'its', 'their')} ` +
      `${idle.length * r.threads} worker ${plural(idle.length * r.threads, 'thread')} starved the whole run (${dur(lost)}, ${share(r.tTotal > 0 ? lost / r.tTotal : 0)} of T_total). ` +
      `A CF without a placement rule runs on node 0 (docs/language.md §8.5). Spread the CFs that do the work${where} over the nodes with ` +
      `${q(`${RULE.locatorCyclic}: e;`)} on their statements (e.g. their block index), keep the DFs they produce beside them with a map rule ` +
      `${rule}, or mark independent CFs ${q(RULE.stealable)} so that idle nodes take them.`,
    evidence: ['placement.idleNodes', 'placement.perNode', 'perNode', 'perLabel', 'produces', 'families'],
  }];
}

/** Worker threads of the nodes that ran CFs (capped by the machines' CPUs when known). */
function usableWorkers(r: SlowReport): number {
  const used = r.placement.perNode.map((c) => c > 0);
  let w = used.filter(Boolean).length * r.threads;
  const covered = new Set(r.machines.flatMap((m) => m.nodes));
  if (r.machines.length > 0 && used.every((u, n) => !u || covered.has(n))) {
    // a node bound to fewer CPUs than threads runs at most that many at once
    w = r.machines.reduce((a, m) => a + Math.min(m.cores, m.nodes.reduce((b, n, i) => b + (used[n] ? Math.min(r.threads, m.nodeCpus[i] ?? r.threads) : 0), 0)), 0);
  }
  return Math.max(1, w);
}

function pathText(r: SlowReport): string {
  return r.criticalPath.byLabel.slice(0, 2).map((c) => `${q(c.key)} ${share(c.share)}`).join(', ');
}

function idleThreads(r: SlowReport, g: Grain): Finding[] {
  const idle = r.placement.idleThreads;
  if (idle.length === 0) return [];
  const cp = r.criticalPath;
  const workers = usableWorkers(r);
  const ns = idle.length * r.tWall;
  const names = list(idle.map((x) => `${x.node}.${x.thread}`));
  const head = `Worker ${plural(idle.length, 'thread')} ${names} ran no fragment (${dur(ns)}, ${share(r.t.S > 0 ? ns / r.t.S : 0)} of S)`;
  const path = pathText(r);
  // as many threads as the busiest node kept busy
  let fewer = 1;
  r.placement.perNode.forEach((c, n) => { if (c > 0) fewer = Math.max(fewer, r.threads - idle.filter((x) => x.node === n).length); });
  const alt = fewer < r.threads ? fewerThreads(r, fewer) : '';
  // a short run whose working lanes got their first CF late: the idle ones were still booting
  const startup = r.placement.startupNs;
  if (startup > 0.3 * r.tWall) {
    return [{
      kind: 'idle-threads', factor: 'S',
      text: `${head}: the run lasted ${dur(r.tWall)} and the workers that did run started their first fragment only up to ${dur(startup)} after its start ` +
        `(worker threads booting, ucodes loading): the idle ones were most likely still starting when the work ran out — start-up, not the program or its batching. ` +
        `${q(OPTION.warmStart)} starts the program once every worker thread has booted (for measurements), and a run with more work spreads it over all of them.`,
      evidence: ['placement.idleThreads', 'placement.startupNs', 'overhead.startup'],
    }];
  }
  // (not when the producers the workers starved for were mostly ready and held elsewhere: then
  // the graph's parallelism is not what kept these threads idle, the handing out is)
  if (cp.length > 0 && cp.parallelism < workers - idle.length + 0.5 && !heldReady(r)) {
    const split = g.finer ? 'Split the work on that path into more independent fragments' : `The fragments should not be split up: ${g.why}`;
    return [{
      kind: 'idle-threads', factor: 'S',
      text: `${head}: the program has less parallelism than threads — its execution graph offers ${cp.parallelism.toFixed(1)}-way parallelism ` +
        `(T_U / critical path) for ${workers} worker threads, the critical path is ${dur(cp.length)} = ${share(cp.ofWall)} of T_wall` +
        `${path ? `, made of ${path}` : ''}. ${split}${alt ? `, or run with ${alt}` : ''}.`,
      evidence: ['placement.idleThreads', 'placement.perThread', 'criticalPath', ...(alt ? ['predictions'] : [])],
    }];
  }
  return [{
    kind: 'idle-threads', factor: 'S',
    text: `${head}, although the execution graph offers ${cp.parallelism.toFixed(1)}-way parallelism for ${workers} worker threads and the workers were up ` +
      `(the last started its first fragment ${dur(startup)} into the run): the runtime handed the CFs to the other workers in batches and chains. ` +
      `With few, short CFs that is all there is to hand out${g.finer ? ' — more CFs spread over all workers' : ''}${alt ? `; or run with ${alt}` : ''}.`,
    evidence: ['placement.idleThreads', 'placement.perThread', 'placement.startupNs', 'criticalPath.parallelism', ...(alt ? ['predictions'] : [])],
  }];
}

/**
 * A share of T_wall at which a one-node run's last worker thread getting its first fragment is
 * worth a word: the PIC seed (C++, 1 × 2) started its second lane 490 ms into a 3.96 s run
 * (12 %) while its first cloud part ran on the system thread, and 6 ms in (0.3 %) with its
 * cloud parts marked heavy (docs/pic.md, "Heavy fragments never run inline").
 */
const LATE_START = 0.05;

/** One node, every worker thread ran, but the last began late: the workers booted late. */
function lateStart(r: SlowReport): Finding[] {
  const startup = r.placement.startupNs;
  if (r.nodes !== 1 || r.threads < 2 || r.placement.idleThreads.length > 0 || r.tWall <= 0 || startup < LATE_START * r.tWall) return [];
  return [{
    kind: 'late-start', factor: 'S',
    text: `The last worker thread started its first fragment ${dur(startup)} into the run (${share(startup / r.tWall)} of T_wall): on one node the ` +
      `workers boot only once the first fragments show they are long, and meanwhile those run on the system thread, one at a time. ` +
      `If the program's first fragments run long, mark them ${q(RULE.heavy)}: every worker then boots as the program loads, and those fragments never run on the system thread.`,
    evidence: ['placement.startupNs', 'placement.perThread'],
  }];
}

/**
 * S charged to producers is read as the program's own seriality only when those producers were
 * mostly not ready yet. When they were mostly ready and not started (held in another lane's fed
 * batch or queue), the idle is the runtime's placement and order of ready CFs, not the graph:
 * the PIC on 1 × 2 (C++ kernels, seed's size) had 80–95 % of its S charged to producers and 57–76 %
 * of that "queued", 0–16 ms "not ready" (docs/slow.md, "Measured: the PIC on 1 × 2").
 * HELD_CHARGED: the charged part must be at least this share of S for its split to speak for S.
 * HELD_QUEUED: "queued" must be more than this share of the charged part (a majority), and more
 * than "not ready".
 */
const HELD_CHARGED = 0.25;
const HELD_QUEUED = 0.5;

/** The split of the S charged to producers when "ready and not started" dominates it; null otherwise. */
export function heldReady(r: SlowReport): { charged: number; queued: number; notReady: number; running: number } | null {
  const b = r.blame.starvation, ps = b.byProducerState;
  if (!ps || !(r.t.S > 0) || !(b.total > 0)) return null;
  if (b.total < HELD_CHARGED * r.t.S) return null;
  if (ps.queued <= HELD_QUEUED * b.total || ps.queued <= ps.notReady) return null;
  return { charged: b.total, queued: ps.queued, notReady: ps.notReady, running: ps.running };
}

function heldFinding(r: SlowReport, h: NonNullable<ReturnType<typeof heldReady>>, who: string): Finding {
  const cp = r.criticalPath;
  const graph = cp.length > 0 ? ` The graph itself offers ${cp.parallelism.toFixed(1)}-way parallelism (T_U / critical path).` : '';
  return {
    kind: 'held-ready', factor: 'S',
    text: `S = ${pct(r.p.S)}${who}. Of the ${dur(h.charged)} charged to producers, the producer was ready and not started for ` +
      `${dur(h.queued)} (${share(h.queued / h.charged)}), running for ${dur(h.running)}, and ${h.notReady > 0 ? `not ready for only ${dur(h.notReady)}` : 'never short of its inputs'}: ` +
      `the CFs the idle workers waited for were ready but held in another lane's batch or queue. That is scheduling and placement, ` +
      `not too little parallelism in the program, and more worker threads would not help.${graph} ` +
      `Start the producers earlier: smaller fed batches (the runtime's bounds LUNA_FED_RUN_MS and LUNA_FED_BATCH_MB), ` +
      `critical-path order (${q(`luna run ${OPTION.prioritiesFrom} TRACE`)}, or a ${q(`${RULE.priority}: e;`)} rule on the producers)` +
      // a distribution places CFs on nodes, not on the lanes of one node
      (r.nodes > 1 ? `, or another placement of the producers over the nodes (${q(OPTION.distribution)} with a distribution file).` : '.'),
    evidence: ['blame.starvation.byProducerState', 'blame.starvation', 'criticalPath'],
  };
}

function starvation(r: SlowReport, g: Grain): Finding[] {
  const out: Finding[] = [];
  const cp = r.criticalPath, S = r.t.S;
  const top = r.blame.starvation.byLabel[0];
  const who = top && r.blame.starvation.total > 0
    ? `; ${share(top.ns / S)} of it waiting on ${q(top.key)} producers` : '';
  const path = pathText(r);
  const workers = usableWorkers(r);
  const hasIdleNodes = r.placement.idleNodes.length > 0 && r.nodes > 1;
  const held = heldReady(r);
  // producers mostly ready and not started: the idle is scheduling, so never "too sequential"
  if (held) out.push(heldFinding(r, held, who));
  if (!held && r.placement.idleThreads.length === 0 && cp.length > 0 && cp.parallelism < 0.9 * workers) {
    const k = Math.max(1, Math.ceil(cp.parallelism));
    const alt = k < r.threads ? fewerThreads(r, k) : '';
    const split = g.finer
      ? `split the data on that path${top ? ` (what ${q(top.key)} produces)` : ''} into more fragments so more CFs are ready at once`
      : `not by smaller fragments, though: ${g.why}`;
    out.push({
      kind: 'sequential', factor: 'S',
      text: `S = ${pct(r.p.S)}${who}. The execution graph offers only ${cp.parallelism.toFixed(1)}-way parallelism ` +
        `(T_U / critical path) for ${workers} worker threads${hasIdleNodes ? ' on the nodes that ran CFs' : ''}; the critical path is ${dur(cp.length)} = ${share(cp.ofWall)} of T_wall` +
        `${path ? `, made of ${path}` : ''}. The algorithm is too sequential at this fragmentation: ${split}${alt ? `; or run fewer worker threads, ${alt}` : ''}.`,
      evidence: ['criticalPath', 'blame.starvation', ...(alt ? ['predictions'] : [])],
    });
  } else if (!hasIdleNodes && r.placement.idleThreads.length === 0) {
    const nodeS = r.perNode.map((n) => n.S);
    const hi = nodeS.indexOf(Math.max(...nodeS)), lo = nodeS.indexOf(Math.min(...nodeS));
    const perNode = r.tWall * r.threads;
    if (r.nodes > 1 && perNode > 0 && (nodeS[hi] - nodeS[lo]) / perNode > 0.2) {
      out.push({
        kind: 'uneven-nodes', factor: 'S',
        text: `S = ${pct(r.p.S)}${who}, unevenly: node ${hi} starves ${share(nodeS[hi] / perNode)} of its time, node ${lo} only ` +
          `${share(nodeS[lo] / perNode)}. Ready CFs pile up on some nodes while others idle: change the distribution of CFs ` +
          `(${q(`${RULE.locatorCyclic}: e;`)} with another expression) or mark them ${q(RULE.stealable)} so that idle nodes take them.`,
        evidence: ['perNode', 'placement.perNode'],
      });
    } else if (cp.length > 0 && !r.predictions) {
      out.push(order(r, who, path, workers));
    }
  }
  // critical-path order, wherever simulating the run's graph in that order is predicted to gain
  const pr = r.predictions;
  if (pr && pr.baselineNs > 0 && 1 - pr.criticalOrderNs / pr.baselineNs >= ORDER_GAIN && !hasIdleNodes && !out.some((f) => f.kind === 'uneven-nodes')) {
    out.push(order(r, who, path, workers));
  }
  // the tail of workers that did run CFs; those that ran none are their own finding
  const tail = S > 0 ? Math.max(0, r.starvationTail - r.placement.idleNs) / S : 0;
  if (tail > 0.5) {
    out.push({
      kind: 'tail', factor: 'S',
      text: `${share(tail)} of S is the tail after workers' last CFs: the run ends unevenly — the last phase is too coarse or badly balanced` +
        `${g.finer ? ' (split its work into more, smaller CFs).' : ` (balance it without smaller CFs: ${g.why}).`}`,
      evidence: ['starvationTail', 'placement.idleNs'],
    });
  }
  return out;
}

/** Critical-path order: `--priorities-from`, with what simulating the run's graph in that order predicts. */
function order(r: SlowReport, who: string, path: string, workers: number): Finding {
  const cp = r.criticalPath, pr = r.predictions;
  const why = pr
    ? `simulating this run's graph in that order predicts ${dur(pr.criticalOrderNs)} against ${dur(pr.baselineNs)} in the run's order (${share(1 - pr.criticalOrderNs / pr.baselineNs)} shorter)`
    : `not predicted: ${r.predictionsSkipped}`;
  return {
    kind: 'order', factor: 'S',
    text: `S = ${pct(r.p.S)}${who}; the graph offers ${cp.parallelism.toFixed(1)}-way parallelism for ${workers} worker threads, ` +
      `but the CFs on the critical path (${path || 'see the path'}) were not chosen first. Run them first: ${q(`luna run ${OPTION.prioritiesFrom} TRACE`)} ` +
      `takes their order from this trace (${why}), or give them a ${q(`${RULE.priority}: e;`)} rule.`,
    evidence: ['criticalPath', 'blame.starvation', 'predictions'],
  };
}

/** `locator_cyclic X[i][j] => i;`: a map rule with as many binders as the family has indices (LUNA-E018 otherwise). */
function mapRule(rule: string, family: string, r: SlowReport, rhs?: string): string {
  const n = r.families.find((f) => f.family === family)?.indices ?? 1;
  const binders = ['i', 'j', 'k', 'l', 'm', 'p', 'q'].slice(0, n);
  const pattern = `${family}${binders.map((b) => `[${b}]`).join('')}`;
  return `${rule} ${pattern} => ${rhs ?? (binders[0] ?? '1')};`;
}

function latency(r: SlowReport, g: Grain): Finding[] {
  const b = r.blame.latency, L = r.t.L;
  const pair = b.byNodePair[0], df = b.byDfBase[0];
  const parts: string[] = [];
  if (pair) parts.push(`${share(pair.ns / L)} of it on transfers node ${pair.from} → ${pair.to}`);
  if (df) parts.push(`${share(df.ns / L)} waiting for DFs ${q(df.key)}`);
  const place = df ? `and ${q(mapRule(RULE.locatorCyclic, df.key, r))} (an expression of its indices) so the DF lives there` : 'and a map rule for the DF so it lives there';
  const replicate = df ? q(mapRule(RULE.locatorReplicating, df.key, r, 'all')) : q(RULE.locatorReplicating);
  return [{
    kind: 'latency', factor: 'L',
    text: `L = ${pct(r.p.L)}${parts.length ? ` (${parts.join(', ')})` : ''}: CFs waited for inputs computed on other nodes. ` +
      `Place the producers and consumers${df ? ` of ${q(df.key)}` : ''} on the same node (the same ${q(`${RULE.locatorCyclic}: e;`)} on both, ` +
      `${place})${g.finer ? ', fragment finer so transfers overlap with computation' : ''}, ` +
      `or replicate DFs read on many nodes (${replicate}).${g.finer ? '' : ` Not finer fragments: ${g.why}.`}`,
    evidence: ['blame.latency', 'families'],
  }];
}

/** Runtime time between CFs per CF (start-up and pre-emption left out), when it is large against their work; null otherwise. */
function fineGrained(r: SlowReport): number | null {
  const o = r.overhead;
  // the start-up is paid once per run, and pre-emption is CPU contention (its own finding):
  // neither says the CFs are too small
  const runtimePerCf = r.cfs > 0 ? Math.max(0, o.sendDelay + o.startDelay - (o.startup ?? 0)) / r.cfs : 0;
  return runtimePerCf > 0.25 * r.meanCfNs ? runtimePerCf : null;
}

/** An oversubscribed machine or a binding too narrow: CPU contention, not the fragment size. */
function cpuContention(r: SlowReport): boolean {
  return oversubscribedMachines(r).length > 0 || boundNodes(r).length > 0;
}

function overhead(r: SlowReport, g: Grain): Finding[] {
  const o = r.overhead, O = r.t.O;
  const startup = o.startup ?? 0;
  const perCf = r.cfs > 0 ? Math.max(0, O - startup) / r.cfs : 0;
  const parts = [
    ['pre-emption of running CFs', o.preempt],
    ['ready-to-start delay', o.startDelay],
    ['computed-to-sent delay', o.sendDelay],
    ['extra system cores', o.systemCores],
  ] as const;
  const main = [...parts].sort((a, b) => b[1] - a[1])[0];
  const over = cpuContention(r);
  const fine = fineGrained(r);
  const out: Finding[] = [{
    kind: 'overhead', factor: 'O',
    text: `O = ${pct(r.p.O)}, ${dur(perCf)} of overhead per CF against ${dur(r.meanCfNs)} of useful work per CF; ` +
      `largest part: ${main[0]} (${share(O > 0 ? main[1] / O : 0)}).` +
      (main[0] === 'ready-to-start delay' && o.startDelay > 0 ? ` Of that delay ${share(o.startDelaySystemBusy / o.startDelay)} passed while the node's system thread was busy ` +
        `with other work (examining and booking other CFs held the ready one back), the rest in the hand-off itself (the result's way to the system thread, the dispatch, a worker waking up).` : '') +
      (r.floor ? ` With a runtime that cost nothing, this graph would take ${dur(r.floor.ns)} on these workers (${share(r.floor.ofWall)} of T_wall): ` +
        `the rest of the span is the runtime's and the machine's, not the fragmentation's.` : '') +
      (O > 0 && startup > 0.2 * O ? ` ${share(startup / O)} of O (${dur(startup)}) is the start-up before each worker's first CF ` +
        `(worker threads booting, ucodes loading, the first CFs being created): paid once per run, it weighs less the more work a run does.` : '') +
      (over ? ` Much of it comes from the ${oversubscribedMachines(r).length > 0 ? 'oversubscription' : 'binding'} above: judge the fragment size once it is gone.` : '') +
      (!over && fine !== null && !g.coarser ? ` The runtime spends ${dur(fine)} between CFs for ${dur(r.meanCfNs)} of work in each, but the CFs should not be made larger: ${g.why}.` : ''),
    evidence: ['overhead', 'cfs', 'meanCfNs', ...(r.floor ? ['floor'] : [])],
  }];
  if (over) return out;
  if (fine !== null && g.coarser) {
    out.push({
      kind: 'fine-grained', factor: 'O',
      text: `The fragmentation is too fine for this runtime: it spends ${dur(fine)} between CFs for ${dur(r.meanCfNs)} of work in each; ` +
        `make CFs larger (fewer fragments, ~${dur(Math.max(fine * 10, r.meanCfNs))} or more each)${g.why ? ` — ${g.why}` : ''}.`,
      evidence: ['overhead.sendDelay', 'overhead.startDelay', 'overhead.startup', 'meanCfNs'],
    });
  }
  if (main[0] === 'pre-emption of running CFs' && O > 0 && main[1] / O > 0.5) {
    const m = r.machines.find((x) => x.nodes.length > 0);
    const k = m ? Math.max(1, fittingThreads(m) - 1) : Math.max(1, r.threads - 1);
    const lead = `Most overhead is running CFs losing their CPU (${dur(o.preempt)} of wall time beyond their CPU time)`;
    // fewer workers cannot beat the run when its useful work alone, spread over them, takes longer
    const bound = r.t.U / (k * Math.max(1, r.nodes));
    out.push({
      kind: 'preemption', factor: 'O',
      text: k < r.threads && bound >= r.tWall
        ? `${lead}, to the system threads or other processes. Fewer worker threads would not pay here: on ${k} a node the CFs' useful work alone ` +
          `takes at least ${dur(bound)}, against this run's ${dur(r.tWall)}. What shortens the run is less work for each node's system thread` +
          `${g.coarser ? ' (fewer, larger CFs)' : ''}, or a CPU of its own for it (a machine with more CPUs than worker threads).`
        : k < r.threads
        ? `${lead}, to the system threads or other processes: leave a CPU to the runtime (${q(`${OPTION.threads} ${k}`)}) so CFs run undisturbed ` +
          `(on ${k} a node the CFs' useful work alone takes at least ${dur(bound)}, against this run's ${dur(r.tWall)}).`
        : `${lead}, although the workers fit the machine's CPUs: other processes, or the nodes' system threads, took them. ` +
          `Run on a quieter machine, or with fewer nodes per machine (${isClusterLauncher(r.launcher) ? (fewerRanks(r.launcher, Math.max(1, r.nodes - 1)) ?? 'the launcher\'s option for ranks per machine') : q(OPTION.nodes)}) so the system threads have CPUs of their own.`,
      evidence: ['overhead.preempt', 'machines'],
    });
  }
  return out;
}
