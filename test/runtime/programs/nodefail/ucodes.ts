const RANK = process.env.LUNA_RANK ?? process.env.OMPI_COMM_WORLD_RANK ?? process.env.PMIX_RANK ?? '0';

export function c_say(s: string): void { console.log(s); }
export function c_explode(i: number): void { throw new Error(`exploded ${i} on rank ${RANK}`); }
