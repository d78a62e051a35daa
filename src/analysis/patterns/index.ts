// The pattern engine (seed 001): compound-event search over SPMD traces, and the patterns of
// fragmented programs derived from SLOW, in one results tree. docs/patterns.md.
export { PATTERNS, PATTERN_INDEX, type PatternDef, type PatternId } from './catalog.js';
export { PatternEngine, type CollectiveView, type EngineProblems } from './engine.js';
export { PatternResults, NOISE_PER_INSTANCE_NS, NOISE_SHARE, type PatternNode, type SiteNode, type LocationNode } from './results.js';
export { FragmentedPatterns, DEFAULT_QUANTA } from './fragmented.js';
export { analyzePatternsTrace, type PatternOptions, type PatternReport, type Comparison } from './analyze.js';
export { formatPatterns } from './format.js';
