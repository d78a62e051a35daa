// Scheduling policies for library users: the contract, the shipped policies, the forwarding
// base a new policy extends to change a few decisions, and the composition `luna run` uses.
export type { SchedulingPolicy, PolicyCapabilities, FragmentView, LanesView, FedView, CodeCost, InlineContext, BatchSizing, LoopView, ProfileSample } from './types.js';
export { FragmentSlot } from './types.js';
export { DefaultPolicy, DEFAULT_CAPS, type DefaultPolicyOptions } from './default.js';
export { ForwardingPolicy } from './forward.js';
export { PriorityPolicy } from './priority.js';
export { PlaybackPolicy, type Schedule, type ScheduleEntry, type ReplayStats } from './playback.js';
export { RecordingPolicy } from './record.js';
export { DistributionPolicy, type DistributionStats } from './distribution.js';
export { readDistribution, checkDistribution, writeDistribution, mergeDistributions, unfitFor, DistributionError, DISTRIBUTION_FORMAT, DISTRIBUTION_VERSION, type Distribution, type PredictedLoad } from './distribution-file.js';
export { choosePolicy, type PolicyChoice, type ChosenPolicy } from './select.js';
