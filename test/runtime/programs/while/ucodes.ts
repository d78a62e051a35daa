import type { DF } from '../../../../src/ucode/df.js';

export function c_set(v: number, x: DF): void { x.setInt(v); }
export function c_say(tag: string, i: number): void { console.log(`${tag} ${i}`); }
export function c_double(a: DF, b: DF): void { b.setInt(a.getInt() * 2); }
export function c_show(tag: string, x: DF): void { console.log(`${tag} ${x.getInt()}`); }
