import type { DF } from '../../../../src/ucode/df.js';

export function c_say(s: string): void { console.log(s); }
export function c_set(tag: string, v: number, x: DF): void { console.log(tag); x.setInt(v); }
export function c_show(tag: string, x: DF): void { console.log(`${tag} ${x.getInt()}`); }
