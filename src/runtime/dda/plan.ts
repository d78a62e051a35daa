// The new distribution of a dynamic array (seed 002 §2.3): from the element counts of the
// current nodes and the list of future nodes, the migration tasks. Pure.
//
// 1. Each future node's share: the total divided equally, the remainder on the last future
//    node (the seed's rule); with weights (measured node speeds), shares in proportion.
// 2. Surplus of current nodes (all of a node that is not a future one) and deficits of future
//    nodes, both sorted by decreasing amount.
// 3. Each surplus, in order, fills the first deficit not yet full, as much as it can.
// Beyond the seed: `neighbours` moves elements only between adjacent nodes in rank order (seed
// 002 Fig. 1.1 b on a line): across each edge (i, i+1) flows what the nodes up to i hold above
// their shares. Same shares, more transactions, each to a neighbour; a node may forward what it
// receives (the layer sends after its parts arrived when it holds too few).

/** n elements from node `from` to node `to` (and, for arrays of several blocks a node, between which blocks) */
export interface Move { from: number; to: number; n: number; fromBlock?: number; toBlock?: number }

export interface PlanOptions {
  /** relative speeds of the future nodes (same order), for shares in proportion */
  weights?: readonly number[];
  /** move only between adjacent nodes (rank order) */
  neighbours?: boolean;
}

/** Each future node's share of `total` elements. */
export function shares(total: number, future: readonly number[], weights?: readonly number[]): number[] {
  const k = future.length;
  if (k === 0) throw new RangeError('no nodes to distribute the array onto');
  if (weights === undefined) {
    const each = Math.floor(total / k);
    return future.map((_, i) => (i === k - 1 ? total - each * (k - 1) : each));
  }
  if (weights.length !== k || weights.some((w) => !(w > 0) || !Number.isFinite(w))) throw new RangeError(`weights must be ${k} positive numbers`);
  const W = weights.reduce((a, b) => a + b, 0);
  const out = weights.map((w) => Math.floor((total * w) / W));
  out[k - 1]! += total - out.reduce((a, b) => a + b, 0);
  return out;
}

/** The migration tasks that take `current` (node → count) to the shares of `future`. */
export function plan(current: ReadonlyMap<number, number>, future: readonly number[], o: PlanOptions = {}): Move[] {
  if (new Set(future).size !== future.length) throw new RangeError(`a node is named twice in the new node set (${future.join(', ')})`);
  let total = 0;
  for (const n of current.values()) total += n;
  const target = new Map<number, number>();
  shares(total, future, o.weights).forEach((s, i) => target.set(future[i]!, s));
  const surplus: { node: number; n: number }[] = [];
  const deficit: { node: number; n: number }[] = [];
  for (const [node, n] of current) {
    const d = n - (target.get(node) ?? 0);
    if (d > 0) surplus.push({ node, n: d });
  }
  for (const [node, t] of target) {
    const d = t - (current.get(node) ?? 0);
    if (d > 0) deficit.push({ node, n: d });
  }
  // decreasing amounts; ties by node number, so every node computes the same plan
  const order = (a: { node: number; n: number }, b: { node: number; n: number }): number => b.n - a.n || a.node - b.node;
  surplus.sort(order);
  deficit.sort(order);
  const moves: Move[] = [];
  const take = (s: { node: number; n: number }, d: { node: number; n: number }): void => {
    const n = Math.min(s.n, d.n);
    if (n === 0) return;
    s.n -= n;
    d.n -= n;
    moves.push({ from: s.node, to: d.node, n });
  };
  if (o.neighbours) {
    const nodes = [...new Set([...current.keys(), ...future])].sort((x, y) => x - y);
    let flow = 0;
    for (let i = 0; i + 1 < nodes.length; i++) {
      const a = nodes[i]!, b = nodes[i + 1]!;
      flow += (current.get(a) ?? 0) - (target.get(a) ?? 0);
      if (flow > 0) moves.push({ from: a, to: b, n: flow });
      else if (flow < 0) moves.push({ from: b, to: a, n: -flow });
    }
    return moves;
  }
  let j = 0;
  for (const s of surplus) {
    while (s.n > 0) {
      while (j < deficit.length && deficit[j]!.n === 0) j++;
      if (j === deficit.length) throw new Error('internal: surplus left with every deficit filled');
      take(s, deficit[j]!);
    }
  }
  return moves;
}

// ------------------------------------------------------------------ several blocks per node

/** A move between blocks: `n` elements from block `fromBlock` of node `from` to block `toBlock` of node `to`. */
export interface BlockMove extends Move { fromBlock: number; toBlock: number }

/** Each of a node's `k` blocks' share of the node's `share`: equal, the remainder on the last. */
export function blockShares(share: number, k: number): number[] {
  const each = Math.floor(share / k);
  return Array.from({ length: k }, (_, b) => (b === k - 1 ? share - each * (k - 1) : each));
}

/**
 * The distribution over blocks: the seed's plan over nodes (`plan`, so the network carries the
 * same elements as with one block a node), each node's share split equally over its `k` blocks,
 * and each node-to-node move split into block-to-block moves — a sender gives from its blocks
 * most above their shares first, a receiver fills its blocks most below theirs first; then what
 * is left uneven inside a node moves between its own blocks (a copy in memory; after the
 * network's moves in the list). Each block-to-block move is one part: a receiving block is
 * complete (a fragment may take it) when its own parts are in, while the node's other blocks
 * still receive.
 */
export function planBlocks(current: ReadonlyMap<number, readonly number[]>, k: number, future: readonly number[], o: PlanOptions = {}): BlockMove[] {
  const totals = new Map<number, number>();
  for (const [node, c] of current) totals.set(node, c.reduce((a, b) => a + b, 0));
  const moves = plan(totals, future, o);
  if (k === 1) return moves.map((m) => ({ ...m, fromBlock: 0, toBlock: 0 }));
  const target = new Map<number, number>();
  shares([...totals.values()].reduce((a, b) => a + b, 0), future, o.weights).forEach((s, i) => target.set(future[i]!, s));
  // per node, how much each block gives (above its share) or takes (below it), largest first
  const gives = new Map<number, { b: number; n: number }[]>(), takes = new Map<number, { b: number; n: number }[]>();
  const byAmount = (a: { b: number; n: number }, c: { b: number; n: number }): number => c.n - a.n || a.b - c.b;
  for (const [node, c] of current) {
    const t = blockShares(target.get(node) ?? 0, k);
    gives.set(node, c.map((n, b) => ({ b, n: n - t[b]! })).filter((x) => x.n > 0).sort(byAmount));
    takes.set(node, c.map((n, b) => ({ b, n: t[b]! - n })).filter((x) => x.n > 0).sort(byAmount));
  }
  // Between neighbours a node may pass on more than its blocks hold above their shares (a
  // forwarder: what it receives from one side goes on to the other). The excess goes through one
  // block, the one furthest below its share: it takes its deficit and the excess, and gives the
  // excess, which the layer sends once that block's parts are in (as with one block a node).
  if (o.neighbours) {
    const out = new Map<number, number>();
    for (const m of moves) out.set(m.from, (out.get(m.from) ?? 0) + m.n);
    for (const [node, n] of out) {
      const g = gives.get(node) ?? [], t = takes.get(node) ?? [];
      const excess = n - g.reduce((a, x) => a + x.n, 0);
      if (excess <= 0) continue;
      const c = current.get(node), ts = blockShares(target.get(node) ?? 0, k);
      // the block furthest below its share (or, none below, the one least above it)
      let fw = 0;
      for (let b = 1; b < k; b++) if (ts[b]! - (c?.[b] ?? 0) > ts[fw]! - (c?.[fw] ?? 0)) fw = b;
      g.push({ b: fw, n: excess });
      const had = t.find((x) => x.b === fw);
      if (had) had.n += excess; else t.push({ b: fw, n: excess });
      t.sort(byAmount);
      gives.set(node, g);
      takes.set(node, t);
    }
  }
  const out: BlockMove[] = [];
  const split = (m: Move): void => {
    const g = gives.get(m.from)!, t = takes.get(m.to)!;
    let left = m.n;
    while (left > 0) {
      const s = g[0], d = t[0];
      // a node's moves never exceed its blocks' surplus (or deficit): the sums agree with plan's
      if (s === undefined || d === undefined) throw new Error('internal: a node move larger than its blocks give or take');
      const n = Math.min(left, s.n, d.n);
      out.push({ from: m.from, fromBlock: s.b, to: m.to, toBlock: d.b, n });
      left -= n;
      if ((s.n -= n) === 0) g.shift();
      if ((d.n -= n) === 0) t.shift();
    }
  };
  for (const m of moves) split(m);
  // inside each node, what is left: its blocks' gives and takes now sum to the same
  for (const node of [...current.keys()].sort((a, b) => a - b)) { const n = gives.get(node)!.reduce((a, x) => a + x.n, 0); if (n > 0) split({ from: node, to: node, n }); }
  return out;
}
