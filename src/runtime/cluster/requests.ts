// The node's request desk (exec/desk.ts) as a participant of the control protocol. A ucode
// waiting for an answer is work left (live); the node is busy while a handler works on an answer
// by itself (a timer, a file). A request whose handler is not working on it waits for something
// else of the run — a message on a counted channel, another CF's release: if nothing else can
// happen, the run hangs and the report names the CF, its request and the resource.
import type { RequestDesk } from '../exec/desk.js';
import type { Participant, Wait } from './layer.js';

export class RequestParticipant implements Participant {
  readonly name = 'requests';

  constructor(private readonly desk: RequestDesk) {}

  idle(): boolean { return !this.desk.busy(); }
  live(): number { return this.desk.waiting; }

  waits(): Wait[] {
    const host = this.desk.host;
    return this.desk.outstanding().map((o) => {
      const who = host?.identify(o.cf);
      const what = o.resource === o.kind ? `'${o.kind}'` : `'${o.kind}' (${o.resource})`;
      const state = o.busy ? 'which its handler is still working on' : 'which no handler is working on';
      return {
        text: `${who?.text ?? `CF number ${o.cf}`} waits ${o.lane < 0 ? 'on its node\'s system thread' : `on worker thread ${o.lane + 1}`} for the answer to its request ${what}, ${state}`,
        ...(who?.origin ? { origin: who.origin } : {}),
      };
    });
  }

  hangSummary(n: number): string { return `${n} CF(s) wait for answers to their requests that never come`; }
}
