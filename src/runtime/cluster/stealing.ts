// Work stealing of stealable CFs, on its own channel: an idle node asks another (policy
// `stealVictim`) for work; a node with more ready stealable CFs than its workers need
// (`giveAway`) migrates some to it over the data channel, else it says no and the thief backs
// off. LuNA's own mechanism: the control protocol only tells it when the node is idle.
import type { Channel, Router } from '../transport/router.js';
import type { NodeRuntime } from '../node/runtime.js';
import { CHANNEL } from './channels.js';
import type { Control } from './control.js';
import type { DataChannel } from './data.js';

const STEAL_REQ = 1, STEAL_NONE = 2;

export class Stealing {
  private readonly ch: Channel;
  private stealing = false;
  private stealAttempt = 0;
  private stealBackoff = 1;

  constructor(private readonly control: Control, router: Router, private readonly data: DataChannel, private readonly rt: NodeRuntime) {
    this.ch = router.channel(CHANNEL.steal, 'work stealing', (from, tag) => this.receive(from, tag));
    data.onCfArrived = () => { this.stealBackoff = 1; this.stealing = false; this.stealAttempt = 0; };
    control.onIdle(() => { if (rt.program.hasStealable) this.trySteal(); });
  }

  private receive(from: number, tag: number): void {
    if (this.control.finished) return;
    try {
      switch (tag) {
        case STEAL_REQ: this.giveWork(from); break;
        case STEAL_NONE: this.stealRefused(); break;
        default: throw new Error(`unknown work stealing message ${tag} from node ${from}`);
      }
    } catch (e) { this.rt.fail(e); }
  }

  private trySteal(): void {
    if (this.stealing || this.rt.size < 2) return;
    this.stealing = true;
    const victim = this.rt.policy.stealVictim(this.rt.self, this.rt.size, this.stealAttempt++);
    this.ch.send(victim, STEAL_REQ, new Uint8Array(0));
  }

  private giveWork(thief: number): void {
    const cfs = this.rt.takeStealable(thief);
    if (cfs.length === 0) { this.ch.send(thief, STEAL_NONE, new Uint8Array(0)); return; }
    for (const cf of cfs) this.data.migrate(cf, thief);
  }

  private stealRefused(): void {
    this.stealing = false;
    // Back off so that idle nodes do not flood busy ones; the next idle moment retries.
    const wait = this.stealBackoff;
    this.stealBackoff = Math.min(50, this.stealBackoff * 2);
    setTimeout(() => { if (!this.control.finished && this.control.nodeIdle()) this.control.wake(); }, wait);
  }
}
