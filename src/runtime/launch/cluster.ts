// One entry point for every way a node can be started: the user's own process (spawning local
// nodes), a child of it, or one rank of mpirun/srun/PMI. Returns this node's connected transport.
import * as os from 'node:os';
import { newSecret } from '../transport/auth.js';
import { heartbeatMsFromEnv } from '../transport/heartbeat.js';
import { envRendezvous, fileRendezvous, formatHostPort, launcherRendezvous } from '../transport/rendezvous.js';
import { createTcpTransport, type TcpTransport } from '../transport/tcp.js';
import type { Rendezvous } from '../transport/types.js';
import { detectLaunch, type LaunchInfo } from './env.js';
import { launchSecret } from '../transport/secret.js';
import { tuned } from '../tuning.js';
import { spawnLocalNodes, watchParent, type ChildSet } from './spawn.js';

export interface StartNodeOptions {
  /** Nodes to spawn when started directly by the user (`--nodes`, default 1). */
  nodes?: number;
  env?: NodeJS.ProcessEnv;
  /** Child command line after `node` (default: this process's script and arguments). */
  argv?: string[];
  /**
   * Listen address (`--bind`; default $LUNA_BIND or 127.0.0.1): an IP address, a host name, a
   * wildcard (0.0.0.0), or a network interface name (eth0, ib0) — the same value then works on
   * every host of a cluster.
   */
  bind?: string;
  /** Directory for the file rendezvous under mpirun/srun (default $LUNA_RENDEZVOUS_DIR or ./.luna-rendezvous). */
  rendezvousDir?: string;
  log?: (msg: string) => void;
  timeoutMs?: number;
  allocPayload?: (byteLength: number, tag: number) => Uint8Array;
  /**
   * Heartbeat timeout in ms: a node from which nothing arrived for this long is reported lost
   * (default $LUNA_HEARTBEAT_MS, else 5000; 0 = off). See docs/cluster.md, "Liveness".
   */
  heartbeatMs?: number;
  /** Aborts mesh formation (the run was interrupted): rank 0 removes its rendezvous file, spawned nodes are killed. */
  signal?: AbortSignal;
  /** Called when this node's launcher is gone (default: exit); `what` names it. */
  onLauncherGone?: (what: string) => void;
}

export interface StartedNode {
  launch: LaunchInfo;
  transport: TcpTransport;
  /** Set on the launching rank 0 of a local run. */
  children?: ChildSet;
}

export async function startNode(o: StartNodeOptions = {}): Promise<StartedNode> {
  const env = o.env ?? process.env;
  const detected = detectLaunch(env);
  const bind = resolveBind(o.bind ?? env.LUNA_BIND ?? '127.0.0.1');
  const heartbeatMs = o.heartbeatMs ?? heartbeatMsFromEnv(env);
  // rings between nodes of one machine: this node's setting is its children's (env)
  const common = { listenHost: bind, log: o.log, timeoutMs: o.timeoutMs, allocPayload: o.allocPayload, heartbeatMs, rings: tuned('LUNA_RING', env) !== 0, ringSpinUs: tuned('LUNA_RING_SPIN_US', env) };

  if (detected.launcher === 'local') {
    const size = o.nodes ?? 1;
    const launch: LaunchInfo = { rank: 0, size, launcher: 'local' };
    let children: ChildSet | undefined;
    const abort = new AbortController();
    const stop = (): void => abort.abort(o.signal!.reason instanceof Error ? o.signal!.reason : new Error(String((o.signal!.reason as { message?: string })?.message ?? o.signal!.reason)));
    if (o.signal?.aborted) stop(); else o.signal?.addEventListener('abort', stop, { once: true });
    const secret = newSecret();
    const rendezvous = launcherRendezvous((addr) => {
      children = spawnLocalNodes(size, { argv: o.argv, env, secret, rendezvousAddr: formatHostPort(addr), rendezvousLocal: addr.local ? JSON.stringify(addr.local) : undefined });
      // A node that dies before the mesh is up would otherwise cost the whole timeout.
      children.on('exit', (rank: number, code: number | null, signal: string | null) =>
        abort.abort(new Error(`node ${rank} exited (${signal ?? `code ${code}`}) before the nodes connected`)),
      );
    });
    try {
      const transport = await createTcpTransport({ ...common, rank: 0, size, secret, rendezvous, signal: abort.signal });
      return { launch, transport, children };
    } catch (e) {
      children?.killAll();
      throw e;
    } finally {
      o.signal?.removeEventListener('abort', stop);
    }
  }

  if (o.nodes !== undefined && o.nodes !== detected.size) {
    throw new Error(`--nodes ${o.nodes} disagrees with ${detected.launcher}, which started ${detected.size} process(es)`);
  }
  let rendezvous: Rendezvous;
  let secret: string | undefined;
  watchParent(o.onLauncherGone, detected.launcher);
  if (detected.launcher === 'luna') {
    rendezvous = envRendezvous(env);
    // Read once at startup and already gone from process.env (secret.ts); passed explicitly.
    secret = env.LUNA_SECRET || launchSecret();
    if (!secret) throw new Error('LUNA_SECRET is not set (a node started by a luna launcher always gets one)');
  } else {
    rendezvous = fileRendezvous({ env, dir: o.rendezvousDir, timeoutMs: o.timeoutMs });
  }
  const transport = await createTcpTransport({ ...common, rank: detected.rank, size: detected.size, rendezvous, secret, signal: o.signal });
  return { launch: detected, transport };
}

/** An interface name stands for that interface's first IPv4 address (else IPv6). */
export function resolveBind(bind: string): string {
  const addrs = os.networkInterfaces()[bind];
  if (!addrs?.length) return bind;
  return (addrs.find((a) => a.family === 'IPv4') ?? addrs[0]!).address;
}
