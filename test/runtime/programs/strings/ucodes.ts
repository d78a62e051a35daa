import type { DF } from '../../../../src/ucode/df.js';

export function c_sprint(s: string): void {
  if (typeof s !== 'string') throw new Error(`string parameter got ${typeof s}`);
  console.log(s);
}
export function c_seti(v: number, x: DF): void { x.setInt(v); }
export function c_setr(v: number, x: DF): void { x.setReal(v); }
