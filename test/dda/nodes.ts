// Dynamic array layers of N nodes in this process over the in-memory mesh, driven directly
// (the calls the request desk makes for ucodes), with the real router and control protocol.
import { MemoryMesh } from '../../src/runtime/transport/memory.js';
import { Router } from '../../src/runtime/transport/router.js';
import { Control } from '../../src/runtime/cluster/control.js';
import type { Participant } from '../../src/runtime/cluster/layer.js';
import type { Reply } from '../../src/runtime/exec/desk.js';
import { DdaNode, type ArraySpec, type RearrangeDone } from '../../src/runtime/dda/layer.js';
import { DdaBlock } from '../../src/ucode/dda.js';

const now = (): number => performance.now() * 1e6;

/** What a granted block looks like to its holder. */
export interface Granted { buffer: SharedArrayBuffer; numel: number; size: number; elsize: number; order: 'ordered' | 'unordered'; name: string }

export class Nodes {
  readonly mesh: MemoryMesh;
  readonly dda: DdaNode[];
  readonly controls: Control[];
  /** each node's router (a test may talk on a channel of its own beside the layer's) */
  readonly routers: Router[] = [];
  readonly done: RearrangeDone[] = [];
  private busy = true;
  private cfSeq = 1;

  /** `sharedPayloads`: a payload from another node arrives in shared memory of its own, as a node process receives it (else a plain copy) */
  constructor(readonly size: number, o: { sharedPayloads?: boolean } = {}) {
    this.mesh = new MemoryMesh(size);
    if (o.sharedPayloads) this.mesh.allocPayload = (n) => new Uint8Array(new SharedArrayBuffer(n));
    this.controls = [];
    this.dda = this.mesh.endpoints.map((tp) => {
      const router = new Router(tp);
      this.routers.push(router);
      const control = new Control(router, now);
      this.controls.push(control);
      // the test itself is a participant: the run lasts as long as it drives it
      const driver: Participant = { name: 'test', idle: () => !this.busy, live: () => (this.busy ? 1 : 0), waits: () => [], hangSummary: (n) => `${n} test waits` };
      control.register(driver);
      const d = new DdaNode(router, control, { now });
      d.onDone = (x) => this.done.push(x);
      return d;
    });
  }

  declare(s: Partial<ArraySpec> & { name: string }): void {
    for (const d of this.dda) d.declare({ elsize: 16, capacity: 0, order: 'unordered', home: 0, ...s });
  }

  /** A fresh CF number (node-local numbers never meet across nodes here). */
  cf(): number { return this.cfSeq++; }

  /**
   * Hold node `node`'s block of `name` (block `index` of several) as CF `cf`: the block the ucode
   * would see. `granted` runs at the grant itself, inside the layer's call (tests look at the
   * layer's state at that moment).
   */
  acquire(node: number, name: string, cf = this.cf(), index = 0, granted?: (b: DdaBlock) => void): Promise<{ cf: number; block: DdaBlock; index: number }> {
    return new Promise((res, rej) => this.dda[node]!.acquire(name, cf, `CF ${cf}`, reply((v) => {
      const g = v as Granted;
      const block = new DdaBlock(g.elsize, g.buffer, g.numel, g.order, g.name, g.size);
      granted?.(block);
      res({ cf, block, index });
    }, rej), index));
  }

  /** Release as the worker does: defragment and pack what leaves, then hand back count, memory and parts. */
  release(node: number, name: string, h: { cf: number; block: DdaBlock; index?: number }): void {
    const parts = h.block.settle(node, this.size);
    this.dda[node]!.release(name, h.cf, h.block.resized ? h.block.buffer : undefined, h.block.getNumel(), h.block.getMaxSize(), parts, h.index ?? 0);
  }

  rearrange(node: number, name: string, nodes: number[], o: { weights?: number[]; neighbours?: boolean; cf?: number } = {}): Promise<number> {
    return new Promise((res, rej) => this.dda[node]!.global(name, { kind: 'rearrange', nodes, weights: o.weights, neighbours: o.neighbours }, o.cf ?? this.cf(), `CF on node ${node}`, reply((v) => res(v as number), rej)));
  }

  count(node: number, name: string, cf = this.cf()): Promise<number> {
    return new Promise((res, rej) => this.dda[node]!.global(name, { kind: 'count' }, cf, `CF on node ${node}`, reply((v) => res(v as number), rej)));
  }

  /** Each node's element count as its block holds it now. */
  counts(name: string): number[] { return this.dda.map((d) => d.blocks(name).reduce((n, b) => n + b.getNumel(), 0)); }

  async close(): Promise<void> {
    this.busy = false;
    for (const c of this.controls) c.wake();
    await Promise.all(this.controls.map((c) => c.done));
    for (const tp of this.mesh.endpoints) await tp.close();
  }
}

function reply(ok: (v: unknown) => void, fail: (e: Error) => void): Reply {
  return { answer: (v) => ok(v), fail: (m) => fail(new Error(m)) };
}
