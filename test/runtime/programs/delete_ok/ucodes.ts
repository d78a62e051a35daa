import type { DF } from '../../../../src/ucode/df.js';

export function c_set(v: number, x: DF): void { x.setInt(v); }
export function c_show(tag: string, x: DF): void { console.log(`${tag} ${x.getInt()}`); }
export function c_pass(tag: string, x: DF, s: DF): void { console.log(`${tag} ${x.getInt()}`); s.setInt(1); }
export function c_last(tag: string, a: DF, b: DF, x: DF): void { console.log(`${tag} ${a.getInt() + b.getInt()} ${x.getInt()}`); }
