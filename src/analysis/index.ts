// Analyses of luna-ts traces: SLOW and the simulator that gives them ground truth.
export * from './slow/index.js';
export { simulate, type SimOptions, type SimResult, type SimTruth } from './sim/simulate.js';
export { writeSimTrace } from './sim/write.js';
export * as balance from './balance/index.js';
export { replayGraph, type ReplayGraph, type ReplayOptions, type ReplayResult } from './sim/placement.js';
