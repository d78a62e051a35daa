// Who a wait waits for, read from a node's board. The ranks say it when they park, and the node
// says it again when it reports a hang: a barrier sleeps on one word that moves only once the
// phase completes, so a rank parked there never sees later arrivals, and only the report's own
// reading of the board is current.
import { ARRIVE, DONE, STATE } from './board.js';

/** The board as one node sees it: every rank's counters (other nodes' mirrored). */
export interface BoardView {
  readonly threads: number;
  readonly nodes: number;
  readonly node: number;
  readonly perNode: number;
  /** every rank's own barrier arrival is known here (the host segment), not only whole nodes' */
  readonly everyRank?: boolean;
  word(rank: number, word: number): number;
}

/** "rank 3", "ranks 1, 2 (rank 2 has returned from the program)" … */
export function missing(v: BoardView, arrived: (t: number) => boolean): string {
  const late: number[] = [];
  for (let t = 0; t < v.threads; t++) if (!arrived(t)) late.push(t);
  const gone = late.filter((t) => Math.floor(t / v.perNode) === v.node && v.word(t, STATE) === DONE);
  const list = late.length === 1 ? `rank ${late[0]}` : `ranks ${late.slice(0, 16).join(', ')}${late.length > 16 ? ', …' : ''}`;
  return `${list}${gone.length ? ` (${gone.length === 1 ? `rank ${gone[0]} has` : `ranks ${gone.join(', ')} have`} returned from the program)` : ''}`;
}

/**
 * Who a barrier of phase p waits for: this node's late ranks by name; another node's ranks are
 * known only together (its node tells once all of them arrived), so such a node is named instead —
 * unless every rank's arrival is on the host segment, where each is named.
 */
export function barrierMissing(v: BoardView, p: number): string {
  if (v.everyRank) return missing(v, (t) => v.word(t, ARRIVE) >= p);
  const parts: string[] = [];
  const first = v.node * v.perNode;
  let localLate = false;
  for (let t = first; t < first + v.perNode; t++) if (v.word(t, ARRIVE) < p) localLate = true;
  if (localLate) parts.push(missing(v, (t) => Math.floor(t / v.perNode) !== v.node || v.word(t, ARRIVE) >= p));
  const nodes: number[] = [];
  for (let n = 0; n < v.nodes; n++) if (n !== v.node && v.word(n * v.perNode, ARRIVE) < p) nodes.push(n);
  if (nodes.length > 0) parts.push(`${nodes.length === 1 ? 'a rank' : 'ranks'} of node${nodes.length === 1 ? '' : 's'} ${nodes.join(', ')} (its hang lines name them)`);
  return parts.join(' and ');
}
