// Profile-based distribution (seed 004): a traced run's profile, the seed's balancing algorithm
// and the reference strategies, the predictions that guard them, the distribution file of a step.
export { readProfile, profileOf, type Profile } from './profile.js';
export { nameAt, nameList, namesOf, type Names } from './names.js';
export { quantize, loads, meanLoads, lastEvent, weight, span, type Quanta, type Intervals } from './quantize.js';
export { seedBalance, type SeedOptions } from './seed.js';
export { greedyLpt, greedyRefine, lowerBound } from './reference.js';
export { fitTransfers, transferNs, edgesOf, moveCost, hostHopNs, type TransferModel } from './comm.js';
export { balance, loadStats, pinned, Predictor, replayGraphOf, STRATEGIES, GUARD_MARGIN, AUTO_STEPS, type Strategy, type BalanceOptions, type BalanceResult, type LoadStats, type Prediction } from './balance.js';
export { distributionOf } from './file.js';
export { checkLoads, placementOf, type LoadCheck } from './validate.js';
export { weightOf, weightsOf, typicalWeights, withDurations } from './weights.js';
export { stepPlots, type QuantizedLoads } from './plots.js';
export { formatBalance } from './format.js';
