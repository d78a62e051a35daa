// Ucodes of bench/programs/pending/pending.fa.
import type { DF } from '../../../src/ucode/df.js';
export { c_start, c_step } from '../chain/ucodes.js';

export function c_read(_i: number, gate: DF): void {
  if (typeof gate.getInt() !== 'number') throw new Error('pending: no gate value');
}
