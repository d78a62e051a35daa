// Analyses of luna-ts traces: SLOW, the pattern engine, and the simulators that give them ground truth.
export * from './slow/index.js';
export { simulate, type SimOptions, type SimResult, type SimTruth } from './sim/simulate.js';
export { writeSimTrace } from './sim/write.js';
export * from './patterns/index.js';
export { simulateSpmd, type Phase as SpmdPhase, type SpmdSimOptions } from './sim/spmd.js';
export * as balance from './balance/index.js';
export { replayGraph, type ReplayGraph, type ReplayPolicy, type ReplayResult } from './sim/replay.js';
export { replayPlacement, type PlacementGraph, type PlacementOptions, type PlacementResult } from './sim/placement.js';
