// `luna balance TRACE`: one profile-based balancing step (seed 004) — read the trace, run the
// strategy, write the distribution file the next `luna run --distribution` applies, print what
// Charm++'s +LBDebug prints (loads before and predicted after, fragments moved, the strategy's
// time), and with --plot the quantized load plots as SVG. Exit 0; 2 for a bad command line or
// a bad file to merge; trace errors as the other trace commands.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DurationError, parseDuration } from '../core/duration.js';
import { DistributionError, mergeDistributions, readDistribution, writeDistribution, type Distribution } from '../runtime/policy/distribution-file.js';
import { notATraceDir, traceErrorExit } from './trace-errors.js';
import { progressBar } from './progress.js';

export interface BalanceCliOptions {
  quantum?: string;
  strategy: string;
  output: string;
  merge: string[];
  nodes?: number;
  lanes?: number;
  comm: boolean;
  host: boolean;
  guard: boolean;
  errorBar: boolean;
  search: boolean;
  groups: boolean;
  dfs: string;
  weights?: string;
  typical: boolean;
  tolerance?: string;
  contention?: string;
  calibrate?: boolean;
  plot?: string;
  json?: boolean;
}

const say = (s: string): void => { process.stderr.write(`luna: ${s}\n`); };

export async function balanceCommand(trace: string, o: BalanceCliOptions): Promise<number> {
  const { STRATEGIES, balance, distributionOf, formatBalance, readProfile, stepPlots } = await import('../analysis/balance/index.js');
  if (!(STRATEGIES as readonly string[]).includes(o.strategy)) { say(`error: --strategy must be one of ${STRATEGIES.join(', ')}, got ${JSON.stringify(o.strategy)}`); return 2; }
  let quantum: number | 'auto' = 'auto';
  if (o.quantum !== undefined && o.quantum !== 'auto') {
    try { quantum = parseDuration(o.quantum); } catch (e) {
      if (e instanceof DurationError) { say(`error: --quantum: ${e.message} (or auto)`); return 2; }
      throw e;
    }
  }
  if (o.dfs !== 'follow' && o.dfs !== 'keep') { say(`error: --dfs must be follow or keep, got ${JSON.stringify(o.dfs)}`); return 2; }
  if (o.weights !== undefined && o.weights !== 'wall' && o.weights !== 'cpu') { say(`error: --weights must be wall or cpu, got ${JSON.stringify(o.weights)}`); return 2; }
  const tolerance = o.tolerance === undefined ? undefined : Number(o.tolerance);
  if (tolerance !== undefined && !(tolerance >= 1)) { say(`error: --tolerance must be a number ≥ 1, got ${JSON.stringify(o.tolerance)}`); return 2; }
  const contention = o.contention === undefined ? undefined : Number(o.contention);
  if (contention !== undefined && !(contention >= 1 && contention < 100)) { say(`error: --contention must be a number from 1 (cores that do not slow each other) up, got ${JSON.stringify(o.contention)}`); return 2; }
  // the files to merge are checked before the trace is read
  const earlier: { d: Distribution; path: string }[] = [];
  try {
    for (const path of o.merge) earlier.push({ d: readDistribution(path), path });
  } catch (e) {
    if (e instanceof DistributionError) { say(`error: ${e.message}`); return 2; }
    throw e;
  }
  const bad = notATraceDir(trace);
  if (bad !== undefined) return bad;
  const bar = progressBar();
  let profile;
  try {
    bar.phase('reading the trace', 1);
    profile = readProfile(trace);
  } catch (e) {
    bar.stop();
    return traceErrorExit(e);
  }
  bar.stop();
  for (const w of profile.warnings) say(`warning: ${trace}: ${w}`);
  if (profile.n === 0) { say(`error: ${trace} holds no executed fragment: nothing to balance`); return 1; }
  if (/distribution/.test(profile.policy) && earlier.length === 0) say(`warning: ${trace} is a run that applied a distribution (policy "${profile.policy}"): give that file with --merge, or the new one forgets its placements`);
  const r = balance(profile, { strategy: o.strategy as (typeof STRATEGIES)[number], quantum, nodes: o.nodes, lanes: o.lanes, comm: o.comm, guard: o.guard, errorBar: o.errorBar, host: o.host, search: o.search ? undefined : false, groups: o.groups ? undefined : false, dfs: o.dfs, tolerance, contention, calibrate: o.calibrate, weights: o.weights as 'wall' | 'cpu' | undefined, typical: o.typical });
  for (const w of r.warnings) say(`warning: ${w}`);
  let dist = distributionOf(profile, r, [trace]);
  try {
    if (earlier.length > 0) dist = mergeDistributions(earlier, dist);
  } catch (e) {
    if (e instanceof DistributionError) { say(`error: ${e.message}`); return 2; }
    throw e;
  }
  writeDistribution(o.output, dist);
  const plots: string[] = [];
  if (o.plot) {
    const { commonYMax, loadChartSvg } = await import('../report/load-chart.js');
    mkdirSync(o.plot, { recursive: true });
    const ps = stepPlots(profile, r);
    const yMax = commonYMax(ps);
    ['before.svg', 'after.svg'].forEach((name, k) => {
      const file = join(o.plot!, name);
      writeFileSync(file, loadChartSvg({ ...ps[k]!, yMax }));
      plots.push(file);
    });
  }
  if (o.json) {
    const pr = r.predicted;
    const json = {
      trace, strategy: r.strategy, weights: r.weights, typical: r.typical, quantumNs: r.quantumNs, sweep: r.sweep, sweepCfs: r.sweepCfs, nodes: r.nodes, lanes: r.lanes,
      fragments: profile.n, moved: r.moved, searched: r.searched, pulled: r.pulled, grouped: r.grouped, movedFraction: r.moved / profile.n, dfs: profile.dfs, dfsPlaced: r.dfsPlaced,
      decision: r.decision, reason: r.reason, modelError: r.modelError, requiredGain: r.required, before: r.before, after: r.after,
      predicted: { currentNs: pr.current.makespan, nextNs: pr.next.makespan, currentPerNodeNs: Array.from(pr.current.busy), nextPerNodeNs: Array.from(pr.next.busy) },
      bound: r.bound, transfer: r.transfer, host: r.host ? { ...r.host, hostOf: Array.from(r.host.hostOf), cores: Array.from(r.host.cores) } : undefined, timeMs: r.timeMs, output: o.output, plots,
    };
    process.stdout.write(JSON.stringify(json, null, 2) + '\n');
  } else {
    process.stdout.write(`luna balance ${trace}: ${profile.program} ${profile.args.join(' ')} (${profile.nodes} node(s) × ${profile.threads} thread(s), ${profile.n.toLocaleString('en')} fragments)\n`);
    process.stdout.write(formatBalance(r, profile.n, profile.dfs));
    process.stdout.write(`  wrote      ${o.output} (${Object.keys(dist.cfs).length.toLocaleString('en')} CF and ${Object.keys(dist.dfs).length.toLocaleString('en')} DF entries${earlier.length ? `, merged with ${earlier.map((e) => e.path).join(', ')}` : ''})${plots.length ? `; plots ${plots.join(', ')}` : ''}\n`);
  }
  return 0;
}
