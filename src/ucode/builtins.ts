// The code fragments the runtime provides to LuNA programs (core/builtins.ts names them): a
// dynamic array's declaration and its global operations, as ucodes running on the node like
// any other (docs/language.md §9.11).
import { BLOCK_OF, DYNAMIC_DECLARATION, GLOBAL_COUNT, REARRANGE, SEND_BY } from '../core/builtins.js';
import { context } from './context.js';
import { blockOf, dynamicArray, globalCount, rearrange, type DdaBlock } from './dda.js';
import { UcodeError, type DF } from './df.js';

/**
 * The array's name: its DF's name, and the block execution that declared it when that is not
 * main's (`P` in main, `P#3_1` in the sub spawned as main's statement 3), as the DF's key says.
 * The declaration's CF is a statement of that block, so its global id is the block's and its
 * own spawn number.
 */
function arrayName(df: DF): string {
  const gid = context().gid;
  const cut = gid.lastIndexOf('_');
  return cut < 0 ? df.getName() : `${df.getName()}#${gid.slice(0, cut)}`;
}

function declare(P: DF, elsize: number, capacity: number, home: number, ordered: number, blocks: number): void {
  P.setValue(dynamicArray(arrayName(P), { elsize, capacity, home, order: ordered ? 'ordered' : 'unordered', blocks }));
}

/** `P[j]` to a block parameter: B := the handle of block j (the CF taking B holds that block of its node). */
function blockOfCall(P: DF, j: number, B: DF): void {
  B.setValue(blockOf(P, j));
}

function onto(P: DF, first: number, last: number, total: DF, flags: number, W: DF): void {
  let call: RearrangeCall;
  try {
    call = rearrangeCall(P.getName(), first, last, flags, { name: W.getName(), type: W.getType(), v: W.getValue() });
  } catch (e) { throw new UcodeError((e as Error).message); }
  total.setInt(rearrange(P, call.nodes, { neighbours: call.neighbours, weights: call.weights }));
}

/** A rearrangement's target nodes and options. */
export interface RearrangeCall { nodes: number[]; neighbours: boolean; weights?: number[] }

/**
 * The arguments of the language's `rearrange(P, first, last, t)` after lowering (lang/dynamic.ts:
 * flags 1 `neighbours`, 2 weighted; W the DF of `@ { weights: W; }`), checked the same wherever
 * the call runs: here on a worker, or asked by the system thread (runtime/dda/layer.ts). Throws
 * a message naming the misuse.
 */
export function rearrangeCall(array: string, first: number, last: number, flags: number, W: { name: string; type: string; v: unknown }): RearrangeCall {
  const call = `rearrange(${array}, ${first}, ${last})`;
  if (last < first) throw new Error(`${call}: no node from ${first} to ${last} (the first node comes first)`);
  if (last - first >= 1 << 16) throw new Error(`${call}: ${last - first + 1} nodes; a run has at most ${1 << 16}`);
  const nodes = Array.from({ length: last - first + 1 }, (_, i) => first + i);
  const weights = (flags & 2) !== 0 ? weightsOf(call, W, first, nodes.length) : undefined;
  return { nodes, neighbours: (flags & 1) !== 0, weights };
}

/** The numbers of `@ { weights: W; }`: float64s (createFloat64Array) or an array of numbers, one positive per node. */
function weightsOf(call: string, W: { name: string; type: string; v: unknown }, first: number, k: number): number[] {
  const v = W.v;
  let w: number[];
  if (Array.isArray(v)) w = v as number[];
  else if (v instanceof Uint8Array && v.byteLength % 8 === 0) {
    const d = new DataView(v.buffer, v.byteOffset, v.byteLength);
    w = Array.from({ length: v.byteLength / 8 }, (_, i) => d.getFloat64(8 * i, true));
  } else throw new Error(`${call} @ { weights: ${W.name}; }: ${W.name} holds ${W.type === 'raw' ? `${(v as Uint8Array).byteLength} bytes, not float64s` : `a ${W.type}`}; the weights are an array of numbers or float64s, one per node`);
  if (w.length !== k) throw new Error(`${call} @ { weights: ${W.name}; }: ${w.length} weight(s) for ${k} node(s): one per node`);
  const bad = w.findIndex((x) => typeof x !== 'number' || !(x > 0) || !Number.isFinite(x));
  if (bad >= 0) throw new Error(`${call} @ { weights: ${W.name}; }: node ${first + bad}'s weight is ${String(w[bad])}; each must be a positive finite number`);
  return w;
}

function count(P: DF, n: DF): void {
  n.setInt(globalCount(P));
}

/**
 * The destination form: element i of the node's block goes to node D[i] (-1, or this node: it
 * stays). D is a DF of int32s (createInt32Array), one per element the block holds, or a plain
 * array of numbers; n := how many elements leave. They leave when the CF ends and reach their
 * nodes with the array's next global operation.
 */
function sendBy(P: DdaBlock, D: DF, n: DF): void {
  const v = D.getValue();
  const to: ArrayLike<number> = Array.isArray(v) ? v as number[] : D.getInt32Array();
  const k = P.getNumel();
  if (to.length !== k) throw new UcodeError(`send_by(${P.name}, ${D.getName()}): ${to.length} destination(s) for the ${k} element(s) of the block: one per element`);
  const d = P.destinations(), here = context().node;
  let leaving = 0;
  for (let i = 0; i < k; i++) {
    const x = to[i]!;
    if (!Number.isInteger(x) || x < -1) throw new UcodeError(`send_by(${P.name}, ${D.getName()}): element ${i} is sent to ${x}, not a node number (-1 stays)`);
    d[i] = x;
    if (x !== -1 && x !== here) leaving++;
  }
  n.setInt(leaving);
}

export const BUILTIN_UCODES: ReadonlyMap<string, (...args: never[]) => unknown> = new Map<string, (...args: never[]) => unknown>([
  [DYNAMIC_DECLARATION.symbol, declare],
  [REARRANGE.symbol, onto],
  [GLOBAL_COUNT.symbol, count],
  [SEND_BY.symbol, sendBy],
  [BLOCK_OF.symbol, blockOfCall],
]);
