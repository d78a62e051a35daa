// A test resource behind the request port, registered on a node's system thread as a layer
// would: requests that are answered after a delay, a lock on named resources that a CF holds
// until it (or another CF) releases it, refusals and a handler that throws. Its worker module
// (resource-worker.ts) makes the locked resources `block`s of kind 'test'.
import { fileURLToPath } from 'node:url';
import type { Reply, Request, RequestDesk, UcodeLayer } from '../../src/runtime/exec/desk.js';

export const RESOURCE_WORKER = fileURLToPath(new URL('./resource-worker.js', import.meta.url));

/** What the resource saw on one node (the tests assert on it). */
export interface ResourceLog {
  /** per request kind, how many came */
  count: Map<string, number>;
  /** CFs (node-local numbers) granted each resource, in order */
  grants: Map<string, number[]>;
  /** acquires that found the resource held and waited in its queue */
  queued: number;
}

interface Lock { holder: number; queue: { cf: number; reply: Reply }[]; bytes: Uint8Array }

/** The layer, with `log` filled per node as requests come. */
export function testResource(logs: ResourceLog[] = []): UcodeLayer & { logs: ResourceLog[] } {
  return {
    logs,
    workerModules: [RESOURCE_WORKER],
    register(desk: RequestDesk): void {
      const log: ResourceLog = { count: new Map(), grants: new Map(), queued: 0 };
      logs.push(log);
      const locks = new Map<string, Lock>();
      // answers owed on a timer: the node is busy meanwhile (RequestHandler.busy)
      let timers = 0;
      const later = (ms: number, f: () => void): void => { timers++; setTimeout(() => { timers--; f(); }, ms); };
      const busy = (): boolean => timers > 0;
      const seen = (r: Request): void => { log.count.set(r.kind, (log.count.get(r.kind) ?? 0) + 1); };
      const lockOf = (id: string): Lock => {
        let l = locks.get(id);
        if (!l) locks.set(id, (l = { holder: -1, queue: [], bytes: new Uint8Array(new SharedArrayBuffer(64)) }));
        return l;
      };
      const grant = (id: string, l: Lock, cf: number, reply: Reply): void => {
        l.holder = cf;
        log.grants.set(id, [...(log.grants.get(id) ?? []), cf]);
        reply.answer({ bytes: l.bytes });
      };
      // answered `ms` later
      desk.register('test.sleep', {
        wait: 'test', resource: (p) => `sleep ${(p as { ms: number }).ms} ms`,
        handle(r, reply) { seen(r); later((r.payload as { ms: number }).ms, () => reply.answer((r.payload as { ms: number }).ms)); },
        busy,
      });
      // answered at once, on the system thread's next turn
      desk.register('test.echo', { wait: 'test', handle(r, reply) { seen(r); reply.answer(r.payload); } });
      // who asks, as the desk names the CF
      desk.register('test.who', { wait: 'request', handle(r, reply) { seen(r); reply.answer(r.who()); } });
      desk.register('test.refuse', { wait: 'test', handle(r, reply) { seen(r); reply.fail('no such thing'); } });
      desk.register('test.throw', { wait: 'test', handle(r) { seen(r); throw new Error('the test handler is broken'); } });
      // a lock on resource `id`: granted when free (after `ms` when given), else when released
      desk.register('test.acquire', {
        wait: 'test', busy, resource: (p) => `test resource ${(p as { id: string }).id}`,
        handle(r, reply) {
          seen(r);
          const { id, ms } = r.payload as { id: string; ms?: number };
          const l = lockOf(id);
          if (l.holder !== -1 || l.queue.length > 0) { log.queued++; l.queue.push({ cf: r.cf, reply }); return; }
          l.holder = -2; // promised
          if (ms) later(ms, () => grant(id, l, r.cf, reply));
          else grant(id, l, r.cf, reply);
        },
      });
      desk.register('test.release', {
        wait: 'test',
        handle(r) {
          seen(r);
          const { id } = r.payload as { id: string };
          const l = lockOf(id);
          if (l.holder === -1) throw new Error(`test resource ${id} released while nobody holds it`);
          l.holder = -1;
          const next = l.queue.shift();
          if (next) grant(id, l, next.cf, next.reply);
        },
      });
    },
  };
}
