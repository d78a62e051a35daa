// Recording for trace playback (`luna run --record DIR`): the policy around the run's own
// records, through the profiling callback, each atomic CF this node ran — its global id, its
// lane, and whether the system thread ran it — in the order they finished. It decides nothing.
import { ForwardingPolicy } from './forward.js';
import type { ScheduleEntry } from './playback.js';
import type { ProfileSample, SchedulingPolicy } from './types.js';

export class RecordingPolicy extends ForwardingPolicy {
  readonly order: ScheduleEntry[] = [];

  constructor(inner: SchedulingPolicy) {
    super(inner, { profiles: true });
  }

  override profile(s: ProfileSample): void {
    // what ran inline only because no worker was up yet is not a decision to repeat
    this.order.push([s.cf.gid, s.lane, s.inline && s.workersReady ? 1 : 0]);
    this.inner.profile(s);
  }
}
