// The code fragments the runtime itself provides to LuNA programs: a dynamic array's
// declaration and its global operations (docs/language.md §9.11). The front end makes imports of
// them; executors call them by symbol (src/ucode/builtins.ts). Their symbols contain a ':', which
// no export of a ucode module written as a function declaration can have, so they never meet a
// user's ucode.
import type { ParamType } from './imports.js';

export interface BuiltinCode {
  /** the name a program calls it by (the import's alias; what traces and reports show) */
  alias: string;
  symbol: string;
  params: readonly ParamType[];
}

/** `dynamic P(elsize) @ { … };` runs as this: P, elsize, capacity, home node, ordered (0/1), blocks a node. */
export const DYNAMIC_DECLARATION: BuiltinCode = { alias: 'dynamic array', symbol: 'luna:dynamic', params: ['name', 'int', 'int', 'int', 'int', 'int'] };

/** `P[j]` given to a block parameter runs this first: `block of(P, j, B)`, B := the handle of P's block j on the node that holds it. */
export const BLOCK_OF: BuiltinCode = { alias: 'block of', symbol: 'luna:block_of', params: ['value', 'int', 'name'] };

/**
 * `rearrange(P, first, last, total)`: P onto nodes first..last; total := its element count. The
 * compiler adds flags (1: `@ { neighbours; }`, 2: weighted) and the DF of `@ { weights: W; }` (0 without).
 */
export const REARRANGE: BuiltinCode = { alias: 'rearrange', symbol: 'luna:rearrange', params: ['value', 'int', 'int', 'name', 'int', 'value'] };

/** `global_count(P, n)`: n := the element count of P over all nodes. */
export const GLOBAL_COUNT: BuiltinCode = { alias: 'global_count', symbol: 'luna:global_count', params: ['value', 'name'] };

/** `send_by(P, D, n)`: the node's block of P sends element i to node D[i] (-1 stays); n := how many leave. The next global operation delivers them. */
export const SEND_BY: BuiltinCode = { alias: 'send_by', symbol: 'luna:send_by', params: ['block', 'value', 'name'] };

/** The operations on dynamic arrays a program calls by name, with the parameters it writes. */
export const DYNAMIC_OPERATIONS: ReadonlyMap<string, { code: BuiltinCode; written: readonly ParamType[] }> = new Map([
  [REARRANGE.alias, { code: REARRANGE, written: REARRANGE.params.slice(0, 4) }],
  [GLOBAL_COUNT.alias, { code: GLOBAL_COUNT, written: GLOBAL_COUNT.params }],
  [SEND_BY.alias, { code: SEND_BY, written: SEND_BY.params }],
]);
