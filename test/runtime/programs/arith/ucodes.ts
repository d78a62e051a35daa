import type { DF } from '../../../../src/ucode/df.js';

export function c_iprint(tag: string, v: number): void {
  if (!Number.isInteger(v)) throw new Error(`int parameter ${tag} got a non-integer ${v}`);
  console.log(`${tag} ${v}`);
}
export function c_rprint(tag: string, v: number): void { console.log(`${tag} ${v.toFixed(4)}`); }
export function c_seti(v: number, x: DF): void { x.setInt(v); }
export function c_setr(v: number, x: DF): void { x.setReal(v); }
