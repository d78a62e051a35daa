// Public surface of the trace layer: clocks, schema, writer, reader/merger, directories, exports.
export type { TraceSink, TraceEvent, TraceEventKind, RecordKind, RunStatus } from './schema.js';
export { RECORDS, STATUS } from './schema.js';
export type { TraceManifest, SiteInfo, MachineInfo } from './manifest.js';
export { cpuClockExact, cpuClockWarningOnce, newRunOrigin, runOrigin, setRunOrigin, threadCpuNs, wallNs } from './clock.js';
export { TraceFormatError, traceFileName, VERSION as TRACE_FORMAT_VERSION } from './format.js';
export { ThreadTraceWriter, type WriterOptions } from './writer.js';
export { listTraceFiles, openTraceDir, writeManifest } from './dir.js';
export { ManifestError, readManifest } from './manifest-reader.js';
export { readThreadFile, type ReadOptions, type ThreadFile } from './reader.js';
export { readTrace, type ReadTraceOptions, type Trace } from './merge.js';
export { TraceModel, type ModelListener } from './model/model.js';
export { Fragment, DfRec, type Transfer } from './model/records.js';
export { exportPerfetto } from './export/perfetto.js';
export { exportPerfettoProto, PerfettoProtoWriter } from './export/perfetto-proto.js';
export { exportOtf2, Otf2UnavailableError, OTF2_ARCHIVE_NAME, OTF2_ATTRIBUTES, type Otf2Result } from './export/otf2.js';
export { exportTables, TABLES, type TableFormat, type TableName, type TablesResult } from './export/tables.js';
