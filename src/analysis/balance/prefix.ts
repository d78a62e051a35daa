// A prefix of a profile: its first K CFs (in the order they finished) with the dependences among
// them — a whole graph of its own, since a CF's producers finished before it did. The automatic
// quantum's sweep replays a prefix when the whole graph is too large to replay once per quantum.
import { firstNames } from './names.js';
import type { Profile } from './profile-type.js';

/**
 * The CFs the sweep replays: all of them when the graph's work (CFs + dependences, what a replay
 * costs) is at most `work`, else the shortest prefix reaching it.
 */
export function sweepPrefix(p: Pick<Profile, 'n' | 'depStart'>, work: number): number {
  if (p.n + p.depStart[p.n]! <= work) return p.n;
  let lo = 1, hi = p.n;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (mid + p.depStart[mid]! >= work) hi = mid; else lo = mid + 1; }
  return lo;
}

/** The profile of CFs [0, K) (views of its columns where they can be; DFs and transfers whole). */
export function prefixOf(p: Profile, K: number): Profile {
  if (K >= p.n) return p;
  const m = p.depStart[K]!;
  let depStart = p.depStart.subarray(0, K + 1), depFrom = p.depFrom.subarray(0, m), depDf = p.depDf.subarray(0, m);
  // a producer past the prefix (clocks of different nodes that disagree on the order): drop the edge
  let outside = 0;
  for (let k = 0; k < m; k++) if (p.depFrom[k]! >= K) outside++;
  if (outside > 0) {
    depStart = new Int32Array(K + 1); depFrom = new Int32Array(m - outside); depDf = new Int32Array(m - outside);
    let x = 0;
    for (let c = 0; c < K; c++) {
      for (let k = p.depStart[c]!; k < p.depStart[c + 1]!; k++) if (p.depFrom[k]! < K) { depFrom[x] = p.depFrom[k]!; depDf[x++] = p.depDf[k]!; }
      depStart[c + 1] = x;
    }
  }
  return {
    ...p, n: K, gid: firstNames(p.gid, K), node: p.node.subarray(0, K), spawn: p.spawn?.subarray(0, K),
    start: p.start.subarray(0, K), finish: p.finish.subarray(0, K), created: p.created.subarray(0, K), cpu: p.cpu.subarray(0, K), code: p.code.subarray(0, K),
    depStart, depFrom, depDf,
  };
}
