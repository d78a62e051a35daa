// The TypeScript ucodes of heat3d-cpp: what is not a block kernel (ucodes.cpp has those) is
// heat3d's own.
export { c_edge, c_init, c_empty, c_gather, c_check_all, c_report } from '../heat3d/ucodes.js';
