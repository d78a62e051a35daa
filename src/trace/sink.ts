// What the runtime tells the tracer. One TraceSink per thread (system thread and each worker),
// so recording never crosses threads. When tracing is off the runtime holds no sink and every
// call site is one `if (this.tr)` branch, so an untraced run pays nothing.
//
// Identifiers: `cf` is a node-local CF number (unique within one node's run; a CF that migrates
// gets a new local number on the receiving node, and both are linked by cfMigrate/cfReceive);
// `df` is a node-local DF number interned from the DF's full name by `dfName`.
// Times are wall-clock nanoseconds on the run's common clock (see clock.ts), as bigint-free
// numbers (float64 ns since the run's origin: exact to 1 ns for ~104 days).

export interface TraceSink {
  /** A CF was created on this node (spawned here). `gid` is the stable global id ("3_1_2"). */
  cfCreated(t: number, cf: number, parentCf: number, code: number, gid: string, label: string): void;
  /** The CF left this node for `toNode` (migration or steal). */
  cfMigrate(t: number, cf: number, toNode: number): void;
  /** A CF arrived from `fromNode`, where it was `remoteCf`; it is `cf` here from now on. */
  cfReceive(t: number, cf: number, fromNode: number, remoteCf: number, gid: string, code: number, label: string): void;
  /** All inputs of the CF are present on this node. */
  cfReady(t: number, cf: number): void;
  /** The CF reads DF `df` (emitted once per input, before cfStart). */
  cfInput(cf: number, df: number): void;
  /** Worker starts/finishes the CF: wall and thread-CPU ns. */
  cfStart(t: number, cpu: number, cf: number): void;
  cfFinish(t: number, cpu: number, cf: number): void;
  /** Intern a DF name; returns its node-local number (idempotent per name). */
  dfName(name: string): number;
  /** DF got its value on this node, produced by local CF `producerCf`. */
  dfComputed(t: number, df: number, producerCf: number, bytes: number): void;
  dfSendStart(t: number, df: number, toNode: number, bytes: number): void;
  dfSendEnd(t: number, df: number, toNode: number): void;
  /** DF value arrived from `fromNode` (where its producer was `remoteProducerCf`). */
  dfReceive(t: number, df: number, fromNode: number, bytes: number): void;
  dfDeleted(t: number, df: number): void;
  /** The system thread was busy on [t0, t1). */
  sysBusy(t0: number, t1: number): void;
  /** Counter samples. */
  readyQueue(t: number, length: number): void;
  liveBytes(t: number, bytes: number): void;
  programStart(t: number): void;
  programFinish(t: number): void;
  /** Write buffered records to disk. */
  flush(): void;
  close(): void;
}
