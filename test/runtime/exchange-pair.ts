// Two lanes' exchanges (exec/exchange.ts) on real ports and feed slots, in one thread: lane 0
// feeds lane 1 when the system thread's requests (on `ctl[0]`) ask it to.
import { MessageChannel } from 'node:worker_threads';
import { Exchange } from '../../src/runtime/exec/exchange.js';
import { FeedSlots, feedSlotsBuffer } from '../../src/runtime/exec/slots.js';
import { flagsLength, runningFlag } from '../../src/runtime/exec/protocol.js';

export function pair(): { flags: Int32Array; x: Exchange[]; ctl: MessageChannel[]; close: () => void } {
  const lanes = 2;
  const flags = new Int32Array(new SharedArrayBuffer(4 * flagsLength(lanes)));
  for (let i = 0; i < lanes; i++) flags[runningFlag(lanes, i)] = -1;
  const buf = feedSlotsBuffer(lanes);
  const peer = new MessageChannel();
  const ctl = [new MessageChannel(), new MessageChannel()];
  const x = [0, 1].map((me) => new Exchange(flags, me, lanes, ctl[me]!.port2, me === 0 ? [null, peer.port1] : [peer.port2, null], new FeedSlots(buf, lanes, me)));
  return { flags, x, ctl, close: () => { peer.port1.close(); peer.port2.close(); for (const c of ctl) { c.port1.close(); c.port2.close(); } } };
}
