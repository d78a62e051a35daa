// Local launch: the process the user started is rank 0 and spawns ranks 1..n-1 as children
// running the same script with the same arguments. Children die with the parent: an IPC
// channel closes when the parent dies, even by SIGKILL, and the child watches it (watchParent).
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Launcher } from './env.js';
import { watchedParent } from '../../core/exit.js';

export interface SpawnOptions {
  /** Script and arguments after `node` (default: this process's script and arguments). */
  argv?: string[];
  /** Node flags (default: this process's execArgv). */
  execArgv?: string[];
  /** Base environment for the children (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** The run's secret, passed in LUNA_SECRET; the child removes it from its environment (transport/secret.ts). */
  secret: string;
  /** rank 0's listen address, host:port. */
  rendezvousAddr: string;
  /** rank 0's Unix socket for ranks on this machine, JSON {machine, path} (LUNA_RENDEZVOUS_LOCAL) */
  rendezvousLocal?: string;
}

export interface ChildSet extends EventEmitter {
  /** Child process per rank (1..n-1). */
  readonly children: ReadonlyMap<number, ChildProcess>;
  /** Signal every child still running (default SIGKILL). */
  killAll(signal?: NodeJS.Signals): void;
  /** Resolves when every child has exited. */
  exited(): Promise<void>;
  on(event: 'exit', listener: (rank: number, code: number | null, signal: NodeJS.Signals | null) => void): this;
  on(event: string, listener: (...args: any[]) => void): this;
}

const live = new Set<ChildProcess>();
let hooksInstalled = false;

/**
 * Kill children on our exit, and on SIGINT/SIGTERM/SIGHUP when nothing else handles the signal
 * (then die of it as we would have). A run that catches it (launch/interrupt.ts) stops every
 * node in order and waits for the children itself: they flush their traces first.
 */
function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', () => {
    for (const c of live) c.kill('SIGKILL');
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSig = () => {
      if (process.listenerCount(sig) > 1) return;
      for (const c of live) c.kill('SIGKILL');
      process.off(sig, onSig);
      process.kill(process.pid, sig);
    };
    process.on(sig, onSig);
  }
}

export function spawnLocalNodes(n: number, opts: SpawnOptions): ChildSet {
  installHooks();
  const set = new EventEmitter() as ChildSet;
  const children = new Map<number, ChildProcess>();
  const argv = opts.argv ?? process.argv.slice(1);
  const execArgv = opts.execArgv ?? process.execArgv;
  let running = 0;
  let allExited: () => void = () => {};
  const done = new Promise<void>((res) => (allExited = res));
  for (let rank = 1; rank < n; rank++) {
    const env = {
      ...(opts.env ?? process.env),
      LUNA_RANK: String(rank),
      LUNA_SIZE: String(n),
      LUNA_RENDEZVOUS: opts.rendezvousAddr,
      LUNA_RENDEZVOUS_LOCAL: opts.rendezvousLocal ?? '',
      LUNA_SECRET: opts.secret,
      LUNA_PARENT_IPC: '1',
    };
    const child = spawn(process.execPath, [...execArgv, ...argv], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    // The channel is only a death signal; do not let it keep the parent alive.
    child.channel?.unref();
    children.set(rank, child);
    live.add(child);
    running++;
    child.once('exit', (code, signal) => {
      live.delete(child);
      set.emit('exit', rank, code, signal);
      if (--running === 0) allExited();
    });
    child.on('error', (e) => {
      if (set.listenerCount('error')) set.emit('error', Object.assign(e, { rank }));
      else process.stderr.write(`luna: cannot start node ${rank}: ${e.message}\n`);
    });
  }
  if (running === 0) allExited();
  Object.assign(set, {
    children,
    killAll(signal: NodeJS.Signals = 'SIGKILL') {
      for (const c of children.values()) if (c.exitCode === null && c.signalCode === null) c.kill(signal);
    },
    exited: () => done,
  });
  return set;
}

/** How often a rank of mpirun/srun checks that its launcher is still there. */
const PARENT_POLL_MS = 500;

/**
 * Call `onGone` (default: exit) as soon as this node's launcher is gone. Without this, a
 * SIGKILLed launcher would leave its nodes running for ever. A node spawned by luna watches its
 * IPC channel, which closes when the parent dies, even by SIGKILL; a rank of mpirun/srun
 * watches its parent process id (the launcher or its daemon), which changes when the parent
 * dies and the rank is adopted.
 */
export function watchParent(onGone: (what: string) => void = () => process.exit(1), launcher: Launcher = 'luna'): void {
  if (launcher === 'luna') {
    if (process.env.LUNA_PARENT_IPC !== '1' || !process.channel) return;
    const parent = process.ppid;
    watchedParent(() => !process.connected);
    process.once('disconnect', () => onGone(`the launching process (node 0, pid ${parent}) is gone`));
    process.channel.unref();
    return;
  }
  if (launcher === 'local') return;
  const parent = process.ppid;
  watchedParent(() => process.ppid !== parent);
  const t = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(t);
    onGone(`its launcher (${launcher}, pid ${parent}) is gone`);
  }, PARENT_POLL_MS);
  t.unref();
}
