// Stopping a node on request: SIGINT, SIGTERM or SIGHUP, or its launcher vanishing (the luna
// process that spawned it, or mpirun/srun killed). Instead of dying at once, the node ends its
// run in order — every thread's trace flushed, the manifest saying `interrupted` and why,
// sockets and the rendezvous file removed, spawned nodes waited for — and then dies of the same
// signal, so that a shell or a batch system sees what happened. A deadline bounds that: the
// process exits anyway once it passed (a thread stuck in a ucode cannot delay it for ever).
import { constants } from 'node:os';
import { exitHard, launcherGone as stdioOrphaned, runExitHooks } from '../../core/exit.js';

export const INTERRUPT_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
export type InterruptSignal = (typeof INTERRUPT_SIGNALS)[number];

/** What stopped the run. */
export interface Interruption {
  /** the signal this process received (absent: its launcher vanished) */
  signal?: InterruptSignal;
  /** e.g. "interrupted by SIGINT" */
  message: string;
}

export interface Interrupts {
  /** Aborted when the run is to stop; its reason is the Interruption. */
  readonly signal: AbortSignal;
  /** What stopped the run, once something did. */
  readonly why: Interruption | undefined;
  /** Stop the run because this node's launcher is gone (`what` says which). */
  launcherGone(what: string): void;
  /** What stopped the run, once something does, or undefined after `timeoutMs`. */
  stopped(timeoutMs: number): Promise<Interruption | undefined>;
  /**
   * The run ended: remove the handlers. If a signal stopped it, die of that signal now (the
   * exit hooks run first); otherwise return.
   */
  finish(): void;
}

/** How long an interrupted node may take to end in order before it exits regardless. */
export const INTERRUPT_DEADLINE_MS = 10_000;
/** A repeated signal this long after the first ends the process at once (not a duplicate delivery). */
const REPEAT_MS = 500;

/** Catch SIGINT, SIGTERM and SIGHUP for one run of this process. */
export function catchInterrupts(deadlineMs = INTERRUPT_DEADLINE_MS): Interrupts {
  const ctl = new AbortController();
  let why: Interruption | undefined;
  let at = 0;
  let finished = false;
  const stop = (w: Interruption): void => {
    if (why) {
      // a second Ctrl-C: the user does not want to wait
      if (w.signal && performance.now() - at > REPEAT_MS) exitNow(w.signal);
      return;
    }
    why = w;
    at = performance.now();
    setTimeout(() => exitNow(w.signal), deadlineMs).unref();
    ctl.abort(w);
  };
  const handlers = INTERRUPT_SIGNALS.map((sig) => {
    const h = (): void => stop({ signal: sig, message: `interrupted by ${sig}` });
    process.on(sig, h);
    return [sig, h] as const;
  });
  const release = (): void => { for (const [sig, h] of handlers) process.off(sig, h); };
  return {
    signal: ctl.signal,
    get why() { return why; },
    launcherGone(what: string) { stdioOrphaned(); stop({ message: `interrupted: ${what}` }); },
    stopped(timeoutMs: number) {
      if (why) return Promise.resolve(why);
      return new Promise((res) => {
        const t = setTimeout(() => res(undefined), timeoutMs);
        ctl.signal.addEventListener('abort', () => { clearTimeout(t); res(why); }, { once: true });
      });
    },
    finish() {
      if (finished) return;
      finished = true;
      release();
      if (why?.signal) exitNow(why.signal);
    },
  };
}

/** End the process as the signal would have (its exit hooks first), or with 1 without one. */
function exitNow(sig: InterruptSignal | undefined): never {
  runExitHooks();
  if (sig) {
    for (const s of INTERRUPT_SIGNALS) process.removeAllListeners(s);
    process.kill(process.pid, sig);
  }
  // the default action of the signal ends the process (all its threads) before this exit
  // would; without a signal (launcher gone) the exit stands
  exitHard(sig ? 128 + constants.signals[sig] : 1);
}
