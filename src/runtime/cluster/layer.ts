// What a layer of the runtime plugs into a node with, besides its channel (transport/router.ts):
// a Participant of the control protocol, which decides the end of the run and reports hangs by
// asking every participant of every node — the fragment runtime (fragments.ts) is one; the
// dynamic array and the SPMD layer are others. See docs/runtime.md, "Participants and channels".
import type { Origin } from '../../lang/source.js';
import type { TraceSink } from '../../trace/schema.js';
import type { Router } from '../transport/router.js';
import type { RequestDesk } from '../exec/desk.js';
import type { Control } from './control.js';

/** One thing that waits, as the hang report names it. */
export interface Wait {
  /** what waits for what, in words, naming the node when the run has several ("CF x[3] on node 1 waits for y[3]") */
  text: string;
  /** the source position it waits at, when there is one (the report is ordered by it) */
  origin?: Origin;
}

export interface Participant {
  /** one word for the layer, the same on every node (it keys the participant's waits in hang reports) */
  readonly name: string;
  /**
   * Nothing this layer can do on this node by itself now: no work queued or running, nothing it
   * is about to send. A layer that was busy and becomes idle calls Control.wake().
   */
  idle(): boolean;
  /**
   * Units of work still to finish here (live CFs, a rearrangement in progress, ranks that have
   * not returned). The run ends only when every participant of every node has none; idle with
   * some left and no message in flight is a hang.
   */
  live(): number;
  /** What waits here and for what (asked only once the run hangs). */
  waits(): Wait[];
  /** The hang report's summary of `n` waits of this layer ("3 CF(s) wait for data fragments that are never produced"). */
  hangSummary(n: number): string;
}

/** What a channel's owner gets from the node that hosts it. */
export interface ChannelHost {
  /** the run's clock (ns) */
  now(): number;
  /** this thread's trace sink (absent: not tracing) */
  trace?: TraceSink;
}

/** What a node offers a layer that joins it: channels, the control protocol, the request desk. */
export interface LayerNode { router: Router; control: Control; host: ChannelHost; desk: RequestDesk }

/**
 * A layer with a side across nodes (the dynamic array): the run calls join once per node, after
 * the fragment layer, before the program starts. A layer object may serve several nodes of one
 * process (tests): it keeps what it makes per node.
 */
export interface ClusterLayer { join(n: LayerNode): void }
