// The policy of a run, composed by delegation from what the run was given: the default, under
// priorities (the program's rules or a table from a trace), a replayed schedule, a distribution,
// and a recorder around all of it — each wrapping the one before, so any combination holds.
// Files are read by the caller (the command line, a library user): this only composes.
import type { CompiledProgram } from '../../program/compile.js';
import { DefaultPolicy, type DefaultPolicyOptions } from './default.js';
import type { Distribution } from './distribution-file.js';
import { DistributionPolicy } from './distribution.js';
import { PlaybackPolicy, type Schedule } from './playback.js';
import { PriorityPolicy } from './priority.js';
import { RecordingPolicy } from './record.js';
import type { SchedulingPolicy } from './types.js';

export interface PolicyChoice {
  program: CompiledProgram;
  /** this node's rank (a replayed schedule plans per node) */
  rank: number;
  /** priorities by CF global id (critical path from a trace) */
  priorities?: ReadonlyMap<string, number>;
  /** a recorded schedule to replay */
  schedule?: Schedule;
  /** a distribution to apply */
  distribution?: Distribution;
  /** record the schedule of this run */
  record?: boolean;
  /** the default policy's options (inline, spread loops) */
  base?: DefaultPolicyOptions;
}

export interface ChosenPolicy {
  policy: SchedulingPolicy;
  /** the parts that report back after the run */
  recorder?: RecordingPolicy;
  replay?: PlaybackPolicy;
  distribution?: DistributionPolicy;
}

export function choosePolicy(c: PolicyChoice): ChosenPolicy {
  let policy: SchedulingPolicy = new DefaultPolicy(c.base);
  // a replay orders ready CFs by its record: priorities would only change its batches
  if (!c.schedule && (c.priorities || c.program.hasPriority)) policy = new PriorityPolicy(policy, c.priorities);
  const out: Omit<ChosenPolicy, 'policy'> = {};
  if (c.schedule) policy = out.replay = new PlaybackPolicy(c.schedule, c.rank, policy);
  // outside a replay: the file's placement wins over the record's
  if (c.distribution) policy = out.distribution = new DistributionPolicy(c.distribution, policy);
  if (c.record) policy = out.recorder = new RecordingPolicy(policy);
  return { policy, ...out };
}
