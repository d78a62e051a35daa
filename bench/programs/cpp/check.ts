// The check of examples/chain/chain.fa, for the C++ variant of the chain in bench/cpp.ts.
import type { DF } from '../../../src/ucode/df.js';

export function c_check(n: number, last: DF): void {
  if (last.getInt() !== n) throw new Error(`chain: x[${n}] = ${last.getInt()}, expected ${n}`);
}
