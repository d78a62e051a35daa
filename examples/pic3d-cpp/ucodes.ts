// The TypeScript ucodes of examples/pic3d-cpp: the driver of examples/pic3d (the initial cloud,
// the summaries, the check against the sequential reference). The kernels are C++ (ucodes.cpp).
export * from '../pic3d/driver.js';
