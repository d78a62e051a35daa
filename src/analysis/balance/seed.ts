// The balancing algorithm of seed 004 (§2.2.5), exactly:
//   1. quanta in decreasing total quantized load;
//   2. in a quantum, the most and the least loaded node;
//   3. the most loaded node's CFs in decreasing quantized weight;
//   4. a CF moves from max to min while W_max − w > W_min + w (formula 6) …
//   5. … after which the quantized loads are recomputed (in every quantum the CF covers);
//   6. steps 2–5 repeat while some CF satisfies step 4;
//   7. then the next quantum.
// Step 4 takes the heaviest CF that satisfies (6). A CF moved in an earlier quantum may move
// again in a later one (the seed does not forbid it; the last move wins). The one option beyond
// the seed is `extra`: a cost added to the right side of (6) (the communication-aware variant).
import { span, weight, type Intervals, type Quanta } from './quantize.js';

export interface SeedOptions {
  /**
   * Extra cost (ns) of moving `cf` from node `from` to `to` given the placement so far, added to
   * the right side of formula 6 (the communication-aware variant); absent: the seed's rule.
   */
  extra?(cf: number, from: number, to: number, node: Int32Array): number;
}

/**
 * Balance `node` (modified in place) over `nodes` nodes with the quantized weights `qt` of the
 * intervals `iv`. Returns the number of moves made (a CF moved twice counts twice).
 */
export function seedBalance(iv: Intervals, qt: Quanta, node: Int32Array, nodes: number, o: SeedOptions = {}): number {
  const N = nodes, Q = qt.count;
  const W = new Float64Array(Q * N);
  for (let i = 0; i < Q; i++) for (let x = qt.at[i]!; x < qt.at[i + 1]!; x++) W[i * N + node[qt.cf[x]!]!] += qt.w[x]!;
  // step 1: quanta by decreasing total load (ties: earlier first); totals do not change with moves
  const total = new Float64Array(Q);
  for (let i = 0; i < Q; i++) { let s = 0; for (let n = 0; n < N; n++) s += W[i * N + n]!; total[i] = s; }
  const order = Int32Array.from({ length: Q }, (_, i) => i).sort((a, b) => total[b]! - total[a]! || a - b);

  // per quantum, per node: its CFs in decreasing weight (scratch reused from quantum to quantum)
  let byNode = new Int32Array(0), wOf = new Float64Array(0);
  const first = new Int32Array(N + 1), cursor = new Int32Array(N), sorted = new Uint8Array(N);
  const arrived: number[][] = Array.from({ length: N }, () => []);
  let moves = 0;
  for (const i of order) {
    const a = qt.at[i]!, b = qt.at[i + 1]!, k = b - a;
    if (k === 0) continue;
    if (byNode.length < k) { byNode = new Int32Array(k); wOf = new Float64Array(k); }
    // bucket the quantum's CFs by their node now (counting sort), each bucket by weight
    first.fill(0);
    for (let x = a; x < b; x++) first[node[qt.cf[x]!]! + 1]++;
    for (let n = 0; n < N; n++) first[n + 1] += first[n]!;
    cursor.set(first.subarray(0, N));
    for (let x = a; x < b; x++) { const c = qt.cf[x]!, p = cursor[node[c]!]!++; byNode[p] = c; wOf[p] = qt.w[x]!; }
    // a node's CFs are sorted the first time it is the most loaded (most never are)
    sorted.fill(0);
    cursor.set(first.subarray(0, N));
    for (const l of arrived) l.length = 0;
    const Wi = i * N;
    for (;;) {
      // step 2
      let max = 0, min = 0;
      for (let n = 1; n < N; n++) {
        if (W[Wi + n]! > W[Wi + max]!) max = n;
        if (W[Wi + n]! < W[Wi + min]!) min = n;
      }
      const gap = W[Wi + max]! - W[Wi + min]!;
      if (max === min || !(gap > 0)) break;
      // steps 3–4: the heaviest CF of max with W_max − w > W_min + w (+ extra), i.e. 2w + extra < gap
      let pick = -1, pw = 0;
      // gap only shrinks within a quantum (a move puts both nodes strictly between the old
      // extremes), so a CF too heavy now stays too heavy: the cursor passes it for good
      const end = first[max + 1]!;
      if (!sorted[max]) { sortByWeight(byNode, wOf, first[max]!, end); sorted[max] = 1; }
      let p = cursor[max]!;
      while (p < end && (node[byNode[p]!] !== max || !(2 * wOf[p]! < gap))) p++;
      cursor[max] = p;
      for (let q = p; q < end; q++) {
        const c = byNode[q]!;
        if (node[c] !== max) continue;
        if (fits(c, wOf[q]!, gap, max, min, node, o)) { pick = c; pw = wOf[q]!; break; }
        if (!o.extra) break; // without extra costs the first eligible fits
      }
      // CFs that arrived at max earlier in this quantum (few): the heaviest that fits
      for (const e of arrived[max]!) {
        const c = e, w = weightIn(iv, qt, c, i);
        if (node[c] === max && w > pw && fits(c, w, gap, max, min, node, o)) { pick = c; pw = w; }
      }
      if (pick < 0) break;
      // step 5: move, recompute the loads of every quantum it covers
      const s = iv.start[pick]!, f = iv.finish[pick]!;
      const [x0, x1] = span(s, f, qt.q, Q);
      for (let j = x0; j <= x1; j++) { const w = weight(s, f, qt.q, j); W[j * N + max] -= w; W[j * N + min] += w; }
      node[pick] = min;
      arrived[min]!.push(pick);
      moves++;
    }
  }
  return moves;
}

function fits(c: number, w: number, gap: number, from: number, to: number, node: Int32Array, o: SeedOptions): boolean {
  const extra = o.extra ? Math.max(0, o.extra(c, from, to, node)) : 0;
  return 2 * w + extra < gap;
}

function weightIn(iv: Intervals, qt: Quanta, c: number, i: number): number {
  return weight(iv.start[c]!, iv.finish[c]!, qt.q, i);
}

/** Sorting keys: weight (whole ns, below 2^33 ≈ 8.6 s) and position (below 2^20) in one exact double. */
const POS = 2 ** 20, MAX_W = 2 ** 33;
let keys = new Float64Array(0), tmpId = new Int32Array(0), tmpW = new Float64Array(0);

/**
 * Sort ids[a..b) (with their weights) by decreasing weight, ties by position (the bucket is filled
 * in id order): deterministic. Weight and position are packed into one double and sorted as
 * numbers (no comparator: three times faster on a million CFs); weights equal to the nanosecond
 * count as equal. Beyond the packing's range, a stable sort with a comparator. Scratch reused.
 */
function sortByWeight(ids: Int32Array, w: Float64Array, a: number, b: number): void {
  const k = b - a;
  if (k < 2) return;
  if (keys.length < k) { keys = new Float64Array(k); tmpId = new Int32Array(k); tmpW = new Float64Array(k); }
  const key = keys.subarray(0, k);
  let packed = k < POS;
  for (let x = 0; x < k && packed; x++) if (!(w[a + x]! < MAX_W)) packed = false;
  if (packed) {
    for (let x = 0; x < k; x++) key[x] = (MAX_W - Math.round(w[a + x]!)) * POS + x;
    key.sort();
    for (let x = 0; x < k; x++) { const from = a + (key[x]! % POS); tmpId[x] = ids[from]!; tmpW[x] = w[from]!; }
  } else {
    const order = Array.from({ length: k }, (_, x) => a + x).sort((x, y) => w[y]! - w[x]!);
    for (let x = 0; x < k; x++) { tmpId[x] = ids[order[x]!]!; tmpW[x] = w[order[x]!]!; }
  }
  ids.set(tmpId.subarray(0, k), a);
  w.set(tmpW.subarray(0, k), a);
}
