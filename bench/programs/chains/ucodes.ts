// Ucodes of bench/programs/chains/chains.fa: the chain benchmark's, shared.
export { c_start, c_step, c_check } from '../chain/ucodes.js';
