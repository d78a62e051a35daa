import type { DF } from '../../../../src/ucode/df.js';

const RANK = process.env.LUNA_RANK ?? process.env.OMPI_COMM_WORLD_RANK ?? process.env.PMIX_RANK ?? '0';

export function c_where(tag: string, i: number): void { console.log(`${tag} ${i} @${RANK}`); }
export function c_set(v: number, x: DF): void { x.setInt(v); }
export function c_show(tag: string, i: number, x: DF): void { console.log(`${tag} ${i} = ${x.getInt()} @${RANK}`); }
