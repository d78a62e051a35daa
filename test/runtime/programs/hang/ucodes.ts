import type { DF } from '../../../../src/ucode/df.js';

export function c_set(v: number, x: DF): void { x.setInt(v); }
export function c_say(s: string): void { console.log(s); }
export function c_show(tag: string, x: DF): void { console.log(`${tag} ${x.getInt()}`); }
export function c_show2(a: DF, b: DF): void { console.log(`${a.getInt()} ${b.getInt()}`); }
