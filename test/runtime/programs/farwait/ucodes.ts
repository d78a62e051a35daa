import type { DF } from '../../../../src/ucode/df.js';

export function c_use(v: number, i: number): void {
  if (v !== 7) throw new Error(`c[${i}] read ${v}, expected 7`);
}
export function c_make(v: number, x: DF): void { x.setInt(v); }
