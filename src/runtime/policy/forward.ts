// A policy that forwards every question to the policy it wraps (Legion's forwarding mapper):
// a policy that changes a few decisions extends this and overrides only those, so policies
// combine by delegation — a distribution over priorities over the default, a recorder around
// any of them — and each keeps its own state (FragmentSlot) and declares what it adds (caps).
import type { BatchSizing, CodeCost, FedView, FragmentView, InlineContext, LanesView, LoopView, PolicyCapabilities, ProfileSample, RehearsalBudget, SchedulingPolicy, ThreadsView } from './types.js';
import type { WaitPlan } from '../exec/protocol.js';

export class ForwardingPolicy implements SchedulingPolicy {
  readonly name: string;
  readonly caps: PolicyCapabilities;
  readonly fifoDepth: number;
  readonly fifoStartParked: number;
  readonly fedBatchBytes: number;
  readonly batchOneCode: boolean;
  readonly boardAhead: number;
  readonly planWindows: number | undefined;

  /** `adds`: the questions this policy answers beyond those of `inner` (see PolicyCapabilities) */
  constructor(readonly inner: SchedulingPolicy, adds: Partial<PolicyCapabilities> = {}) {
    this.name = inner.name;
    this.caps = { ...inner.caps, ...adds };
    this.fifoDepth = inner.fifoDepth;
    this.fifoStartParked = inner.fifoStartParked;
    this.fedBatchBytes = inner.fedBatchBytes;
    this.batchOneCode = inner.batchOneCode ?? false;
    this.boardAhead = inner.boardAhead ?? 0;
    this.planWindows = inner.planWindows;
  }

  place(cf: FragmentView): number | undefined { return this.inner.place(cf); }
  dfOwner(key: string, owner: number): number { return this.inner.dfOwner(key, owner); }
  priority(cf: FragmentView & { readonly priority: number }): number { return this.inner.priority(cf); }
  chooseLane(lanes: LanesView, next?: FragmentView): number { return this.inner.chooseLane(lanes, next); }
  chooseFedLane(lanes: LanesView, from: readonly number[], cf?: FedView): number { return this.inner.chooseFedLane(lanes, from, cf); }
  batchSize(s: BatchSizing): number { return this.inner.batchSize(s); }
  chainLength(s: BatchSizing): number { return this.inner.chainLength(s); }
  planWindow(s: BatchSizing, inFlight: number): number { return this.inner.planWindow?.(s, inFlight) ?? 1; }
  chainDepth(s: BatchSizing): number { return this.inner.chainDepth(s); }
  bootWorkers(cost: CodeCost, ns: number, nodes: number, heavy?: boolean): boolean { return this.inner.bootWorkers(cost, ns, nodes, heavy); }
  bootAtOnce(cores: number, lanes: number, heavy?: boolean): number { return this.inner.bootAtOnce?.(cores, lanes, heavy) ?? Math.max(1, Math.min(lanes, cores - 1)); }
  relaxTiering(heavy: boolean, measured: number, meanNs: number): boolean | undefined { return this.inner.relaxTiering?.(heavy, measured, meanNs) ?? false; }
  laneNice(): number { return this.inner.laneNice?.() ?? 0; }
  flushBefore(meanNs: number): boolean { return this.inner.flushBefore(meanNs); }
  runInline(cost: CodeCost, now: InlineContext, cf: FragmentView): boolean { return this.inner.runInline(cost, now, cf); }
  unrollChunk(loop: LoopView): number { return this.inner.unrollChunk(loop); }
  spreadLoop(iterations: number, nodes: number): boolean { return this.inner.spreadLoop(iterations, nodes); }
  stealVictim(self: number, nodes: number, attempt: number): number { return this.inner.stealVictim(self, nodes, attempt); }
  giveAway(available: number, threads: number): number { return this.inner.giveAway(available, threads); }
  permitSteal(cf: FragmentView): boolean { return this.inner.permitSteal(cf); }
  waiting(t: ThreadsView): WaitPlan { return this.inner.waiting(t); }
  systemLane(t: ThreadsView): boolean { return this.inner.systemLane?.(t) ?? false; }
  rehearsal(t: ThreadsView): RehearsalBudget | undefined { return this.inner.rehearsal?.(t); }
  profile(s: ProfileSample): void { this.inner.profile(s); }
}
