// The fragment runtime as a layer of the cluster: its data channel, its place among the
// participants of the control protocol (idle, live CFs, the CFs that wait and for which DFs),
// its faults, and work stealing between nodes.
import type { Router } from '../transport/router.js';
import type { NodeRuntime, RemoteOps } from '../node/runtime.js';
import type { Control } from './control.js';
import { DataChannel } from './data.js';
import type { ChannelHost, Participant, Wait } from './layer.js';
import { cfWaits, faultText } from './report.js';
import { Stealing } from './stealing.js';

export class FragmentLayer {
  readonly data: DataChannel;

  constructor(private readonly router: Router, private readonly control: Control, host: ChannelHost) {
    this.data = new DataChannel(router, host);
  }

  /** What the node runtime sends other nodes through (none on a node alone). */
  get remote(): RemoteOps | undefined {
    return this.router.size > 1 ? this.data : undefined;
  }

  /** Plug the node runtime in: it was built with `remote`. */
  attach(rt: NodeRuntime): void {
    const control = this.control;
    this.data.attach(rt);
    control.register(new FragmentParticipant(rt));
    // what arrived may make CFs ready: run them now rather than on the next turn of the loop
    this.router.onArrived(() => { if (!control.finished) rt.pumpNow(); });
    rt.onIdle = () => control.wake();
    rt.onFault = (f) => control.fault(faultText(rt, f));
    // every node registers the channel: the others may ask it for work
    if (this.router.size > 1) new Stealing(control, this.router, this.data, rt);
  }
}

class FragmentParticipant implements Participant {
  readonly name = 'fragments';

  constructor(private readonly rt: NodeRuntime) {}

  idle(): boolean { return this.rt.idle(); }
  live(): number { return this.rt.live; }
  waits(): Wait[] { return cfWaits(this.rt); }
  hangSummary(n: number): string { return `${n} CF(s) wait for data fragments that are never produced`; }
}
