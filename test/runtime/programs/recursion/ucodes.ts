import type { DF } from '../../../../src/ucode/df.js';

export function c_set(v: number, x: DF): void { x.setInt(v); }
export function c_mul(k: number, a: DF, r: DF): void { r.setInt(k * a.getInt()); }
export function c_add(a: DF, b: DF, r: DF): void { r.setInt(a.getInt() + b.getInt()); }
export function c_show(tag: string, x: DF): void { console.log(`${tag} ${x.getInt()}`); }
