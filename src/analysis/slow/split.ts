// The idle-interval split of seed 003 §4.2 (Fig. 1). A worker is idle on [A, D) and then starts
// CF m at D. With
//   B = when the last of m's inputs came into existence (its producer finished),
//   C = when the input that arrived last was sent (its computed→sent delay is runtime work),
//   G = when that input arrived at m's node (a local input "arrives" when it is computed),
// the interval is cut into  [A,B) S · [B,max(B,C)) O · [max(B,C),max(B,G)) L · [max(B,G),D) O.
// Every point is clamped into [A, D] and the cuts are kept monotone, so the four parts always sum
// to D − A exactly. Unknown points are passed as -Infinity ("nothing to wait for").
// Degenerate orders (see docs/slow.md, cases A–E):
//   B ≤ A        → no starvation: the inputs existed before the worker went idle;
//   C < B        → the last arrival was sent before the last producer finished: no send delay;
//   G ≤ B        → everything was present when the last producer finished: no latency
//                  (happens with skewed clocks or outputs posted before the producer returns);
//   C > G        → impossible causally (clock skew): the send cut is capped at G, no latency.

export interface IdleSplit { s: number; oSend: number; l: number; oStart: number; b: number; c: number; g: number }

function clamp(x: number, lo: number, hi: number): number {
  return x >= lo ? (x > hi ? hi : x) : lo; // NaN → lo
}

export function splitIdle(a: number, d: number, b: number, c: number, g: number): IdleSplit {
  const bb = clamp(b, a, d);
  const gg = clamp(g > b ? g : b, a, d);
  let cc = clamp(c > b ? c : b, a, d);
  if (cc > gg) cc = gg;
  return { s: bb - a, oSend: cc - bb, l: gg - cc, oStart: d - gg, b: bb, c: cc, g: gg };
}
