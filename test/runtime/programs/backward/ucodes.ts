import type { DF } from '../../../../src/ucode/df.js';

export function c_seed(v: number, x: DF): void { x.setInt(v); }
export function c_step(a: DF, b: DF): void { b.setInt(a.getInt() + 1); }
export function c_show(x: DF): void { console.log(`x[0] = ${x.getInt()}`); }
