// luna-ts library API: load and check programs, run them, read traces, analyse them.
export { loadProgram, type Loaded, type LoadOptions } from './program/load.js';
export { compileFrontEnd, renderDiagnostics } from './lang/index.js';
export type { Diagnostic } from './lang/diagnostics.js';
// runNode (one node of a multi-node run, over a transport) stays internal: `luna run` is its user
export { runSingleNode, RunOptionsError, type RunOptions, type SingleNodeOptions, type RunResult } from './runtime/run.js';
export { DefaultPolicy } from './runtime/policy/default.js';
export { PriorityPolicy } from './runtime/policy/priority.js';
export { PlaybackPolicy } from './runtime/policy/playback.js';
export type { SchedulingPolicy } from './runtime/policy/types.js';
export { ArgsError } from './program/args.js';
export { MAX_THREADS } from './runtime/limits.js';
export * as policy from './runtime/policy/index.js';
export { DF, type CreateOptions } from './ucode/df.js';
export * as trace from './trace/index.js';
export { analyzeSlow, analyzeSlowTrace, interpretSlow, formatSlowTable, type SlowReport, type SlowOptions } from './analysis/slow/index.js';
export { analyzePatternsTrace, formatPatterns, PATTERNS, type PatternReport, type PatternOptions } from './analysis/patterns/index.js';
export * as balance from './analysis/balance/index.js';
export { reportHtml, SECTIONS, type Section, type RunData } from './report/index.js';
