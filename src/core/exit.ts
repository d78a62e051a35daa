// Work that must happen however the process exits short of SIGKILL — normally, through
// process.exit, after an interrupt: removing a file that holds the run's secret, killing child
// processes. Each hook runs once, synchronously, in the order of registration.
import { loadAddon } from './addon.js';

const hooks = new Set<() => void>();
let hooked = false;

/** Run `fn` (synchronous) when the process exits. Returns its removal. */
export function atExit(fn: () => void): () => void {
  if (!hooked) {
    hooked = true;
    process.on('exit', runExitHooks);
  }
  hooks.add(fn);
  return () => { hooks.delete(fn); };
}

/** Run the hooks now (before the process dies of a signal, which runs no 'exit' listener). */
export function runExitHooks(): void {
  for (const fn of [...hooks]) {
    hooks.delete(fn);
    try { fn(); } catch { /* best effort on the way out */ }
  }
}

let hardExit: ((code: number) => never) | undefined;

/** How to end the process when process.exit cannot (a thread stuck in native code). */
export function setHardExit(fn: (code: number) => never): void {
  hardExit = fn;
}

/**
 * End the process now with `code`, after the exit hooks, even when a worker thread is stuck in
 * native code (process.exit would wait for it for ever). Write nothing asynchronous before it.
 */
export function exitHard(code: number): never {
  runExitHooks();
  if (hardExit) hardExit(code);
  exitClosedStdio(code);
}

/** whether this node's launcher is gone (and with it the stdio this process was given) */
let orphaned = false;
/** asks now whether the launcher being watched is gone (a poll may not have seen it yet) */
let parentCheck: () => boolean = () => false;

/** The launcher is watched (runtime/launch/spawn.ts watchParent): `gone` tells, asked now, whether it is gone. */
export function watchedParent(gone: () => boolean): void {
  parentCheck = gone;
}

/** Whether the watched launcher is gone, asked now. */
export function parentGone(): boolean {
  return parentCheck();
}

/** This node's launcher is gone: its stdio may be too, so the process ends by exitClosedStdio. */
export function launcherGone(): void {
  orphaned = true;
}

/**
 * End the process with `code` once its output can no longer be written (EPIPE) or its launcher
 * is gone. process.exit in general; for a node whose launcher vanished, the 'exit' listeners and
 * then the luna_ucode addon's `_exit`, past the C library's exit handlers: Node's own restores the
 * terminal state of stdio, which belonged to the launcher, and with mpirun SIGKILLed that failed
 * an assertion, so the ranks died of SIGABRT/SIGSEGV after ending their run in order.
 */
export function exitClosedStdio(code: number): never {
  // (without a way past the C library's handlers, process.exit, which runs the listeners once)
  const past = orphaned ? hardExit ?? loadAddon<{ exitNow(code: number): never }>('luna_ucode')?.exitNow : undefined;
  if (past !== undefined) {
    process.exitCode = code;
    process.emit('exit', code);
    past(code);
  }
  process.exit(code);
}

/**
 * Resolves once everything written so far to stdout and stderr has left the process (a write's
 * callback runs after the writes before it): a pipe read slowly holds it in the stream's queue,
 * which exitHard would drop.
 */
export function stdioWritten(): Promise<void> {
  const done = (s: NodeJS.WriteStream): Promise<void> => new Promise((r) => {
    if (s.writableLength === 0 || s.destroyed) { r(); return; }
    s.write('', () => r());
  });
  return Promise.all([done(process.stdout), done(process.stderr)]).then(() => {});
}
