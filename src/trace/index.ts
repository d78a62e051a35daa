// Public surface of the trace layer (issue 4): clocks, writer, reader/merger, Perfetto export.
export type { TraceSink } from './sink.js';
export type { TraceEvent, TraceEventKind, TraceManifest } from './events.js';
export { cpuClockExact, cpuClockWarningOnce, newRunOrigin, runOrigin, setRunOrigin, threadCpuNs, wallNs } from './clock.js';
export { TraceFormatError, traceFileName, VERSION as TRACE_FORMAT_VERSION } from './format.js';
export { ThreadTraceWriter, type WriterOptions } from './writer.js';
export { listTraceFiles, openTraceDir, readManifest, writeManifest } from './dir.js';
export { readThreadFile, type ReadOptions, type ThreadFile } from './reader.js';
export { readTrace, type ReadTraceOptions, type Trace } from './merge.js';
export { exportPerfetto } from './perfetto.js';
