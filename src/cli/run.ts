// `luna run`: load, check, run on 1..N nodes (local processes, or ranks of mpirun/srun), print
// faults and hangs; exit 0 / 1 (2 for a bad command line). Only rank 0 reports, so messages are
// not repeated.
import { FileError, reason } from '../core/files.js';
import { resolve } from 'node:path';
import { loadProgram } from '../program/load.js';
import { ArgsError, parseMainArgs } from '../program/args.js';
import { defaultThreads, runNode, type RunResult } from '../runtime/run.js';
import { finishOrphanTrace, finishRunTrace, startRunTrace } from '../runtime/tracing.js';
import { cpuClockWarningOnce, newRunOrigin } from '../trace/clock.js';
import type { TraceManifest } from '../trace/manifest.js';
import { choosePolicy, type ChosenPolicy } from '../runtime/policy/select.js';
import { DefaultPolicy } from '../runtime/policy/default.js';
import type { Distribution } from '../runtime/policy/distribution-file.js';
import type { Schedule } from '../runtime/policy/playback.js';
import { readSchedule, ScheduleError, writeSchedule } from '../runtime/schedule.js';
import { TraceFormatError } from '../trace/format.js';
import { DurationError, parseDuration } from '../core/duration.js';
import { bootEarly } from '../runtime/exec/pool.js';
import { relaxTiering } from '../core/tiering.js';
import { tuned, tuningErrors } from '../runtime/tuning.js';
import { lowerBackgroundOnLanes, niceWhileAhead } from '../runtime/exec/priority.js';
import type { CompiledProgram } from '../program/compile.js';
import { version } from './version.js';
import { peakRssKB } from '../core/peak-rss.js';
import { detectLaunch, ranksOnThisHost } from '../runtime/launch/env.js';
import { bindingNote, nodeCpus } from '../runtime/launch/binding.js';
import { cpuSet } from '../core/cpus.js';
import type { StartedNode } from '../runtime/launch/cluster.js';
import { catchInterrupts, type Interrupts } from '../runtime/launch/interrupt.js';
import { exitClosedStdio, exitHard, launcherGone, parentGone, stdioWritten } from '../core/exit.js';
import { dynamicArrays } from '../runtime/dda/index.js';
import type { LaunchInfo } from '../runtime/launch/env.js';
import { heartbeatMsFromEnv, MIN_HEARTBEAT_MS } from '../runtime/transport/heartbeat.js';
import { noteFragmentsRun } from './work.js';
import { programCacheDir } from './program-cache.js';

export interface RunCliOptions {
  threads?: number;
  nodes?: number;
  define: Record<string, string>;
  ucodes?: string;
  cxxflags?: string;
  trace?: string;
  quiet?: boolean;
  bind?: string;
  prioritiesFrom?: string;
  record?: string;
  replay?: string;
  distribution?: string;
  heartbeat?: string;
  timing?: boolean;
  /** false: --no-cache */
  cache?: boolean;
  warmStart?: boolean;
  cfTimeout?: string;
}

// What only some runs use (priorities from a trace, a distribution file, several nodes) is
// imported when asked for: a plain run does not load the trace reader, the schema validator
// (zod, ten modules), or the network (they cost start-up time and memory).

/** How a schedule or a distribution differs from this run (it applies what matches). */
function differences(made: { program: string; args: string[]; nodes: number }, run: { file: string; args: string[]; nodes: number }): string[] {
  return [
    resolve(made.program) !== resolve(run.file) ? `program ${made.program}` : '',
    made.args.join(' ') !== run.args.join(' ') ? `arguments ${made.args.join(' ') || '(none)'}` : '',
    made.nodes !== run.nodes ? `${made.nodes} node(s)` : '',
  ].filter(Boolean);
}

/**
 * The scheduling policy of this node from the files the run was given (a schedule to replay,
 * priorities from a trace, a distribution), composed by runtime/policy/select.ts.
 */
async function policyOf(o: RunCliOptions, run: { file: string; args: string[]; nodes: number; program: CompiledProgram }, rank: number, say: (t: string) => void): Promise<ChosenPolicy> {
  let schedule: Schedule | undefined, priorities: ReadonlyMap<string, number> | undefined, distribution: Distribution | undefined;
  if (o.replay) {
    schedule = readSchedule(o.replay);
    const differs = differences(schedule, run);
    if (differs.length > 0 && !o.quiet) say(`luna: replay: ${o.replay} was recorded with ${differs.join(', ')}: what it does not know is scheduled normally`);
  } else if (o.prioritiesFrom) {
    const t = (await import('../analysis/graph/priorities.js')).prioritiesFromTrace(o.prioritiesFrom);
    for (const w of t.warnings) say(`luna: warning: ${o.prioritiesFrom}: ${w}`);
    if (t.cfs === 0) say(`luna: warning: ${o.prioritiesFrom} holds no executed fragment: priorities come from the program's rules only`);
    priorities = t.priorities;
  }
  if (o.distribution) {
    const { DistributionError, readDistribution, unfitFor } = await import('../runtime/policy/distribution-file.js');
    distribution = readDistribution(o.distribution);
    const unfit = unfitFor(distribution, run.nodes, o.distribution);
    if (unfit) throw new DistributionError(unfit);
    const differs = differences(distribution, run);
    if (differs.length > 0 && !o.quiet) say(`luna: distribution: ${o.distribution} was made for ${differs.join(', ')}: what matches this run applies, the rest is placed normally`);
    if (distribution.decision === 'keep' && !o.quiet) say(`luna: distribution: ${o.distribution} keeps the current placement${distribution.reason ? ` (${distribution.reason})` : ''}`);
  }
  return choosePolicy({ program: run.program, rank, priorities, schedule, distribution, record: !!o.record });
}

/**
 * How much V8's background threads (the optimising compiler's and the garbage collector's) are
 * lowered in priority once worker lanes run fragments (see exec/priority.ts); `LUNA_V8_NICE`
 * sets it, 0 leaves them. Measured under load only (11–15 on 2 cores, alternated; quiet figures
 * are still due): a Task Bench stencil_1d 1×2 of 1 000 steps at 2^11 iterations (`--warm-start`,
 * medians of 8) took 1 399 ms at 0, 991 at 5, 798 at 10 and 831 at 19 (another series, 0 against
 * 10: 1 287 → 863; at 2^10 iterations, medians of 6 at load 15, 2 821 → 1 268 ms, the ranges
 * 2 272–3 492 and 647–1 747 apart); the time a 70 µs chain's lane waited, ready to run, while those threads ran
 * 70–105 ms at 0, 17–50 at 10, 4–17 at 19 (4 runs each, scheduler counts). The price is the
 * system thread's code optimised later (its CPU in the stencil 59 → 65 ms at 10, 71 at 19), so
 * 10 rather than 19. Runs whose fragments all run on the system thread keep V8's threads as they
 * are: lowered from the start, a chain of 20 000 empty C++ fragments cost the system thread 83 →
 * 136 ms.
 */
const BACKGROUND_NICE = 10;
/**
 * How far the system thread is lowered while every worker lane has a batch in flight, where it
 * may get its priority back (exec/priority.ts niceWhileAhead; `LUNA_SYSTEM_NICE=N`). 0: not
 * adopted. Task Bench stencil_1d 1×2, C++ kernels, 1 000 steps, 10 against 0 alternated under
 * load 9–15 (docs/benchmarks.md, "Where a lane's time goes at METG sizes"): the lanes' time
 * kept off their CPU by the system thread 5.0 → 1.1 % of the span at 2^16 iterations (5 pairs,
 * perf sched) and its CPU 79 → 42 ms, but the runs' times moved with the load either way
 * (8 pairs untraced: medians 512 → 408 ms; 5 pairs traced: 319 → 468 ms). A quiet measurement is owed.
 */
const SYSTEM_NICE_AHEAD = 0;

export async function runCommand(file: string, args: string[], o: RunCliOptions): Promise<number> {
  const launch = detectLaunch();
  const say = (text: string): void => { if (launch.rank === 0) process.stderr.write(text.endsWith('\n') ? text : text + '\n'); };
  // the environment's numeric settings, all of them, before anything starts
  const badTuning = tuningErrors();
  if (badTuning.length > 0) { for (const m of badTuning) say(`luna: error: ${m}`); return 2; }
  // before any worker thread starts: the threads there are now are Node's and V8's own
  lowerBackgroundOnLanes(tuned('LUNA_V8_NICE') ?? BACKGROUND_NICE);
  niceWhileAhead(tuned('LUNA_SYSTEM_NICE') ?? SYSTEM_NICE_AHEAD);
  // a program that marks a CF heavy boots its workers while it compiles (the default policy's
  // rule, which every policy forwards; the pool adopts them, see bootEarly): on several nodes too,
  // where a node spawned after node 0 had loaded otherwise began to boot its workers only once it
  // had compiled the program too (the PIC's node 1 ran its first CF 170–196 ms into the run,
  // node 0 at 19–27 ms)
  const nodes = launch.launcher === 'local' ? o.nodes ?? 1 : launch.size;
  let bootedEarly = false;
  const onHeavy = (ucodes: string | undefined): void => {
    const cores = nodeCpus(launch, ranksOnThisHost(launch, nodes), cpuSet());
    const rule = new DefaultPolicy(), lanes = o.threads ?? cores;
    if (rule.bootWorkers({ meanNs: 0, minNs: Infinity, samples: 0, lastNs: 0, recentNs: 0 }, 0, nodes, true)) { bootEarly(lanes, cores, rule.bootAtOnce(cores, lanes, true), ucodes); bootedEarly = true; }
    // and raises V8's tiering budget before it compiles (the same rule's): the compiler's own
    // functions were otherwise optimised on V8's helper threads beside the booting workers and
    // into the run. The PIC at the seed's parameters, 1 × 2: raised from the process's start, 6
    // alternated pairs, medians, compileMs 273 → 232, programMs 703 → 648, the process's CPU 2.12
    // → 1.92 s; raised here, 3 pairs, compileMs 285–397 → 222–282 (the runs within the noise)
    if (rule.relaxTiering(true, 0, 0) === true) relaxTiering();
  };
  const cache = programCacheDir(o.cache !== false);
  if ('error' in cache) { say(`luna: error: ${cache.error}`); return 2; }
  const loaded = await loadProgram(file, { defines: o.define, ucodes: o.ucodes?.split(',').filter(Boolean), cxxflags: o.cxxflags, onHeavy, programCache: cache.dir });
  if (!loaded.program) { say(loaded.text); return 1; }
  if (loaded.diagnostics.length > 0 && !o.quiet) say(loaded.text);
  try {
    parseMainArgs(loaded.program.main, args);
  } catch (e) {
    if (e instanceof ArgsError) { say(`luna: error: ${e.message}`); return 2; }
    throw e;
  }
  // nodes on one host share its cores (`--nodes 2` on 8 cores runs 4 worker threads per node),
  // unless a launcher bound each rank to CPUs of its own
  const cpus = cpuSet();
  const cores = nodeCpus(launch, ranksOnThisHost(launch, nodes), cpus);
  const threads = o.threads ?? cores;
  const note = bindingNote(launch, cpus, threads);
  if (note && !o.quiet) say(note);
  let heartbeatMs: number | undefined;
  if (o.heartbeat !== undefined) {
    try { heartbeatMs = o.heartbeat === 'off' ? 0 : Math.round(parseDuration(o.heartbeat) / 1e6); } catch (e) {
      if (e instanceof DurationError) { say(`luna: error: --heartbeat: ${e.message} (or off)`); return 2; }
      throw e;
    }
    if (o.heartbeat !== 'off' && !(heartbeatMs >= MIN_HEARTBEAT_MS)) {
      say(`luna: error: --heartbeat: ${o.heartbeat} is shorter than ${MIN_HEARTBEAT_MS}ms, the shortest timeout a node can keep (or off)`);
      return 2;
    }
  }
  try { heartbeatMsFromEnv(); } catch (e) { say(`luna: error: ${(e as Error).message}`); return 2; }
  let cfTimeoutNs: number | undefined;
  if (o.cfTimeout !== undefined) {
    try { cfTimeoutNs = parseDuration(o.cfTimeout); } catch (e) {
      if (e instanceof DurationError) { say(`luna: error: --cf-timeout: ${e.message}`); return 2; }
      throw e;
    }
  }
  if (o.prioritiesFrom !== undefined) {
    const bad = (await import('./trace-errors.js')).notATraceDir(o.prioritiesFrom, say);
    if (bad !== undefined) return bad;
  }
  let chosen: ChosenPolicy;
  try {
    chosen = await policyOf(o, { file, args, nodes, program: loaded.program }, launch.rank, say);
  } catch (e) {
    // a file that cannot be applied is a bad command line: nothing ran
    if (o.distribution !== undefined && e instanceof (await import('../runtime/policy/distribution-file.js')).DistributionError) { say(`luna: error: ${e.message}`); return 2; }
    if (e instanceof ScheduleError || e instanceof TraceFormatError || (e as NodeJS.ErrnoException).code !== undefined) { say(`luna: error: ${(e as Error).message}`); return 1; }
    throw e;
  }
  const policy = chosen.policy;
  // from here on a signal ends the run in order (trace flushed, manifest `interrupted`)
  const stop = catchInterrupts();
  const compiled = { frontEndMs: +(loaded.frontEnd?.ms ?? 0).toFixed(3), compileMs: +(loaded.compileMs ?? 0).toFixed(3), programCache: loaded.frontEnd?.cache };
  const p: Prepared = { launch, say, nodes, threads, cores, heartbeatMs, cfTimeoutNs, chosen, program: loaded.program, bundle: loaded.bundle, compiled, stop, stuck: false, bootedEarly };
  let code = 1;
  try {
    code = await runCaught(file, args, o, p);
  } finally {
    stop.finish();
  }
  // a worker stuck in a C++ ucode (or still booting when the run failed) would keep process.exit
  // waiting for it for ever; what the ucodes printed leaves first
  if (p.stuck) { await stdioWritten(); exitHard(code); }
  // its launcher is gone, and with it the stdio Node would restore on exit (exitClosedStdio);
  // what it wrote leaves first, unless the pipe is gone too
  if ((stop.why !== undefined && stop.why.signal === undefined) || parentGone()) {
    launcherGone();
    await Promise.race([stdioWritten(), new Promise((r) => setTimeout(r, 1000).unref())]);
    exitClosedStdio(code);
  }
  return code;
}

interface Prepared {
  launch: LaunchInfo;
  say: (t: string) => void;
  nodes: number;
  threads: number;
  cores: number;
  heartbeatMs: number | undefined;
  cfTimeoutNs: number | undefined;
  chosen: Awaited<ReturnType<typeof choosePolicy>>;
  program: CompiledProgram;
  bundle: Awaited<ReturnType<typeof loadProgram>>['bundle'];
  /** the front end's and the compiler's ms, and what the compiled-program cache did (for --timing) */
  compiled: { frontEndMs: number; compileMs: number; programCache?: string };
  stop: Interrupts;
  /** set when the run left a worker thread stuck in native code */
  stuck: boolean;
  /** the workers began to boot while the program compiled (a CF marked heavy) */
  bootedEarly: boolean;
}

/** The run itself, once its options are checked; `p.stop` says when it is to stop. */
async function runCaught(file: string, args: string[], o: RunCliOptions, p: Prepared): Promise<number> {
  const { launch, say, nodes, threads, cores, heartbeatMs, cfTimeoutNs, chosen, stop } = p;
  const policy = chosen.policy;
  const loaded = { program: p.program, bundle: p.bundle };
  let traceOrigin: string | undefined;
  let manifest: TraceManifest | undefined;
  if (o.trace) {
    // One clock origin for the run: the launcher's, inherited by local nodes; under mpirun/srun
    // every rank uses the raw host-wide monotonic clock (origin 0).
    traceOrigin = process.env.LUNA_TRACE_ORIGIN ?? (launch.launcher === 'local' ? String(newRunOrigin()) : '0');
    process.env.LUNA_TRACE_ORIGIN = traceOrigin;
    if (launch.rank === 0) {
      try {
        manifest = startRunTrace(o.trace, loaded.program, { program: file, args, nodes, threads, policy: policy.name, version: version(), launcher: launch.launcher === 'luna' ? 'local' : launch.launcher });
      } catch (e) {
        say(`luna: error: ${e instanceof FileError ? e.message : `cannot open trace directory ${o.trace}: ${reason(e)}`}`);
        return 1;
      }
      const warn = cpuClockWarningOnce();
      if (warn && !o.quiet) say(warn);
    }
  }
  // the dynamic arrays' layer, for programs whose ucodes hold blocks or may wait (docs/dda.md)
  const layers = loaded.program.imports.some((m) => m.waits) ? [dynamicArrays()] : [];
  const base = { program: loaded.program, bundle: loaded.bundle, args, threads, cores, traceDir: o.trace, traceOrigin, policy, cfTimeoutNs, warmStart: o.warmStart, interrupt: stop.signal, layers };
  const finishTrace = (res: RunResult, rank: number): void => {
    noteFragmentsRun(res.stats.inline + res.stats.sent);
    if (o.timing && rank === 0) {
      const { inlineNs, ...where } = res.stats;
      const ms = (ns: number): number => +(ns / 1e6).toFixed(3);
      process.stderr.write(`luna: timing: ${JSON.stringify({ programMs: ms(res.wallNs), systemCpuMs: ms(res.systemCpuNs), inlineUcodeMs: ms(inlineNs), ...(o.warmStart ? { bootWaitMs: ms(res.bootWaitNs) } : {}), ...(res.startGcNs >= 0 ? { startGcMs: ms(res.startGcNs) } : {}), nodes, threads, ...where, workers: res.workersStarted, maxRssKB: peakRssKB(), ...p.compiled })}\n`);
    }
    if (manifest && o.trace) {
      finishRunTrace(o.trace, manifest, { status: res.status, message: res.message, offsets: res.clockOffsets, machines: res.machines, signal: stop.why?.signal });
      if (!o.quiet) process.stderr.write(`luna: trace written to ${o.trace} (luna analyze slow ${o.trace}; luna report ${o.trace})\n`);
    }
    if (chosen.recorder && o.record && res.ok) writeSchedule(o.record, rank, { program: file, args, nodes, threads }, chosen.recorder.order);
    const ds = chosen.distribution;
    if (ds && !o.quiet) {
      const { cfs } = ds.size;
      process.stderr.write(`luna: distribution${nodes > 1 ? ` (node ${rank})` : ''}: ${ds.stats.placed} of the ${ds.stats.ran} fragment(s) run here were placed by ${o.distribution}${nodes === 1 && cfs > ds.stats.placed ? `; ${cfs - ds.stats.placed} of its ${cfs} entries named no fragment of this run` : ` (it names ${cfs})`}\n`);
    }
    const rs = chosen.replay?.stats;
    if (rs && rs.unknown > 0 && !o.quiet) {
      const f = rs.firstUnknown!;
      process.stderr.write(`luna: replay${nodes > 1 ? ` (node ${rank})` : ''}: ${rs.replayed} fragment(s) followed the recorded schedule; it stopped applying at CF ${f.label} (id ${f.gid}) at ${f.at}: ${rs.unknown} fragment(s) it does not know were scheduled normally\n`);
    }
  };

  if (launch.launcher === 'local' && nodes === 1) {
    const res = await runNode(base);
    p.stuck = res.stuckThreads > 0;
    finishTrace(res, 0);
    return report(res, o.trace);
  }
  // workers boot while the nodes connect (see bootEarly) if the policy wants them from the start
  if (!p.bootedEarly && loaded.program.imports.length > 0 && policy.bootWorkers({ meanNs: 0, minNs: Infinity, samples: 0, lastNs: 0, recentNs: 0 }, 0, nodes, loaded.program.hasHeavy)) bootEarly(threads, cores, undefined, loaded.bundle?.file);
  let started: StartedNode;
  try {
    const { startNode } = await import('../runtime/launch/cluster.js');
    // (loaded here, as the mesh is: a one-node run evaluates the same modules as before)
    const { receivedPayload } = await import('../runtime/cluster/data.js');
    started = await startNode({
      nodes: o.nodes, bind: o.bind, heartbeatMs, allocPayload: receivedPayload,
      signal: stop.signal, onLauncherGone: (what) => stop.launcherGone(what),
    });
  } catch (e) {
    if (stop.why) say(`luna: ${stop.why.message} while the nodes were connecting`);
    else say(`luna: error: cannot connect the nodes: ${e instanceof Error ? e.message : String(e)}`);
    if (manifest && o.trace) finishRunTrace(o.trace, manifest, { status: stop.why ? 'interrupted' : 'failed', message: stop.why?.message, signal: stop.why?.signal });
    return 1;
  }
  const { transport, children } = started;
  const res = await runNode({ ...base, transport });
  p.stuck = res.stuckThreads > 0;
  if (children) {
    // failed or interrupted nodes flush their traces before they exit (a worker stuck in a
    // ucode costs them INTERRUPT_GRACE_MS, a worker that does not stop 2 s)
    const timeout = new Promise<void>((r) => setTimeout(r, res.ok ? 5000 : 4000).unref());
    await Promise.race([children.exited(), timeout]);
    children.killAll();
  }
  finishTrace(res, transport.rank);
  if (transport.rank !== 0) {
    // the launching process is gone: no one else will finish the trace or say why it stopped
    // (its links may close before its IPC channel does: a lost node 0 may be that)
    const why = stop.why ?? (res.kind === 'lost' ? await stop.stopped(PARENT_GONE_WAIT_MS) : undefined);
    const orphan = launch.launcher === 'luna' && why !== undefined && why.signal === undefined;
    if (orphan) {
      const text = `node ${transport.rank}: ${why.message}`;
      if (o.trace) finishOrphanTrace(o.trace, text);
      process.stderr.write(`luna: ${text}${o.trace ? ` (its trace in ${o.trace} holds the run up to then)` : ''}\n`);
    } else if (res.message && res.kind !== 'interrupted') process.stderr.write(`luna: error: node ${transport.rank}: ${res.message}\n`);
    return res.ok ? 0 : 1;
  }
  return report(res, o.trace);
}

/** How long a spawned node that lost node 0 waits to learn that its launcher is gone. */
const PARENT_GONE_WAIT_MS = 1000;

function report(res: RunResult, trace: string | undefined): number {
  if (res.ok) return 0;
  if (res.kind === 'interrupted') process.stderr.write(`luna: ${res.message ?? 'interrupted'}${trace ? ` (the trace in ${trace} holds the run up to then)` : ''}\n`);
  else if (res.message) process.stderr.write(`luna: error: ${res.message}\n`);
  return 1;
}
