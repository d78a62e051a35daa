// The ucodes of examples/pic3d/pic3d.fa: TypeScript kernels (fragments.ts over kernels.ts; by group,
// groups.ts over packs.ts) and the driver around them (driver.ts); pic3d_dda.fa's, with the
// particles in dynamic arrays (arrays.ts). examples/pic3d-cpp runs the same program with the
// kernels in C++.
export * from './fragments.js';
export * from './groups.js';
export * from './driver.js';
export * from './arrays.js';
