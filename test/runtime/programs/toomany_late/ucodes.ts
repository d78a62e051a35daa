import type { DF } from '../../../../src/ucode/df.js';

export function c_set(v: number, x: DF): void { x.setInt(v); }
export function c_show(tag: string, x: DF): void { console.log(`${tag} ${x.getInt()}`); }
/** prints x and sets s = 0 (the index r2 uses) */
export function c_pass(tag: string, x: DF, s: DF): void { console.log(`${tag} ${x.getInt()}`); s.setInt(0); }
