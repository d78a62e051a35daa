// The TypeScript ucodes of examples/pic3d-cpp: the driver of examples/pic3d (the sums of the
// summaries, the report, the sequential reference) and pic3d_dda.fa's (each array's first particles, its
// handle, the final summary). The kernels and the initial cloud are C++ (ucodes.cpp).
export { c_reference, c_summary0, c_combine, c_combine4, c_report } from '../pic3d/driver.js';
export { c_pick_dda, c_pick_dda_all, c_handle_dda, c_targets_dda, c_final_dda } from '../pic3d/arrays.js';
