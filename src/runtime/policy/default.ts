// The default policy: locators place fragments, ready fragments run in the order they became
// ready, batches carry about BATCH_NS of work, codes measured to be tiny (and, at start-up,
// codes no worker could take yet) run on the system thread, long loops unroll a chunk at a time
// while few fragments are alive (a step at a time while their fragments wait for each other and
// run on this thread), idle nodes ask their neighbours in turn for stealable work and
// victims give half.
import type { BatchSizing, CodeCost, FedView, FragmentView, InlineContext, LanesView, LoopView, PolicyCapabilities, ProfileSample, RehearsalBudget, SchedulingPolicy, ThreadsView } from './types.js';
import type { WaitPlan } from '../exec/protocol.js';
import { tuned } from '../tuning.js';

/**
 * target duration of a batch with continuations: the system thread books each batch on a wake-up
 * with cold caches (~100 µs of its CPU per CF of a fed stencil step here), CPU the workers miss
 * on 2 cores; 8 ms rather than 2 halved it (Task Bench stencil_1d 1×2, 2^13 iterations: 850 →
 * 218 batches, the system thread 295 → 160 ms, the run 1 145 → 1 057 ms)
 */
export const BATCH_NS = 8_000_000;
/**
 * the system thread's turn for one fed batch's result (booking it, building the lanes' next
 * batches), measured after its sleep: ~0.5 ms whatever the batch's length (Task Bench
 * stencil_1d 1×2 at 3 ms tasks: 121 ms of its CPU for 218 batches of ~9 CFs, 46 ms for 56 of
 * ~36). On 2 cores with both lanes busy the turn takes a lane's core, and in a stencil the other
 * lane waits for that one: its length is lost by both.
 */
export const FED_TURN_NS = 500_000;
/**
 * target duration of a batch of CFs fed across lanes: its workers hand each other the values
 * between its CFs, so its length costs no wait, and each batch less is a turn less of the system
 * thread (FED_TURN_NS, on a lane's core) and a wake-up less — whose waking made a worker waiting
 * for a fed value sleep instead of spin (the gate counts it on a CPU). 256 turns' worth: the
 * turns cost the lanes ~0.4 % of their work. Sized by BATCH_NS, a Task Bench stencil_1d 1×2 at
 * 2.5 ms tasks went out as 1 278 batches for 1 000 steps; at 32 ms as 218–311, and the system
 * thread's turns still took ~1.5 % of a lane's time. At 3 ms tasks (2^16 iterations, TypeScript
 * kernels, traced; the runs in a scheduling group of their own at nice −19, so the others' load
 * of 13–16 took little; 6 alternated pairs) 32 → 128 ms raised the least busy lane from 90.1–91.2
 * (median 90.7) to 92.0–94.2 % (median 93.1) of the span, cut the system thread's CPU 104–127 →
 * 59–81 ms, a task's last input → start mean 95–145 → 55–81 µs (p90 104–142 → 30–33 µs in 3
 * of the pairs; median 6–11 both) and, in one perf sched run each, the lanes' time preempted by
 * the system thread 106 → 40 ms and by V8's helper threads 121 → 60 ms. The price: an output a
 * CF outside the fed batches reads (none in a stencil) reaches it when the whole batch returns,
 * up to this much later; so a batch with an output another node reads is sized by BATCH_NS
 * (the runtime does not ask with `fed`). CFs of 250 µs and less reach MAX_BATCH first. `LUNA_FED_RUN_MS` overrides it for
 * comparisons (the taskbench's `messagesXslots` and `messages.*` compare with 8 ms and messages
 * instead of the feed slots).
 */
export const FED_RUN_NS = 256 * FED_TURN_NS;
export const MAX_BATCH = 512;
/**
 * Windows of a planned loop in flight at most (node/loop-run.ts): one running on its lanes, the
 * next queued behind it, so that a lane finds its next window when it ends one. 3 was no better
 * (Task Bench stencil_1d 1×2, C++ kernels, 1 000 steps, shielded, 6 alternated runs each, load
 * 5–8: program medians 2^15 99.8 against 102.5 ms, 2^14 75.5 against 72.6).
 */
export const PLAN_WINDOWS = 2;
/**
 * How much longer a planned loop's window may be than its iterations still in flight
 * (planWindow; the first window holds FED_FIRST_NS of work). Without it the first window is a
 * whole fed batch (512 steps a lane at METG sizes): building and sending one such batch took the
 * system thread ~3 ms, and the second lane got its first step ~10 ms into the span. Growing by
 * 2 while the system thread builds a window at ~6–7 µs a step-task is about as fast as the lanes
 * run it at 2^14 iterations (C++, ~23 µs a step). Task Bench stencil_1d 1×2, 1 000 steps, the
 * same build with and without it, 8 alternated pairs, shielded, load 6–9: the lanes' waits for a
 * batch (summed) 18.9 → 10.1 ms at 2^15 C++ (program 101.8 → 101.8 ms, lower in 3 of 8); with
 * the TypeScript kernel at 2^9 iterations 21.3 → 13.0 ms (program 86.9 → 75.1, lower in 6 of 8);
 * chain 1×20 000, empty CFs, 2 threads: program 139.3 → 110.4 ms (lower in 7 of 8), system
 * thread 81.2 → 59.7 ms.
 */
export const PLAN_WINDOW_GROWTH = 2;
/**
 * a fed batch for a lane with less than half this much work in flight (idle, or one short step
 * left) is sent once it holds this much work, and the feeding pass goes on with the lane's next
 * batch: the lane starts while the system thread builds the rest. A pass feeds up to MAX_BATCH
 * steps a lane and took 10–30 ms of the system thread under load, and such a lane waited for all
 * of it (Task Bench stencil_1d 1×2, C++ kernels, METG sizes). A lane holding such a short batch
 * may hold one fed batch more (FEED_DEPTH + 1; chooseFedLane says why, and why only it). Below half, not below all of it: a lane
 * holding one short batch had its next one cut too. Task Bench stencil_1d 1×2, C++ kernels,
 * 1 000 steps, 1 ms (`LUNA_FED_FIRST_US=1000`) against 0, alternated, 5 pairs a size, shielded, load
 * 6.8–8.8: program medians 2^14 173 / 206 ms (faster 5 of 5), 2^15 286 / 292 (4 of 5), 2^16
 * 1 278 / 1 319 (2 of 5; a burst of load); again (load 6.8–11.6, 5 pairs) 171 / 191 (5 of 5), 252 / 252 (2 of 5), 360 / 363 (2 of 5): faster where a step is shortest, within noise above. Opt-in at first, until the other rows and
 * a quiet METG were measured (METG 1×2 beside the original, quiet, 3 pairs at load 2–3: by the busy
 * share 284–285 against 310–553 µs, against the shared peak median 286 against 318: a hint; the
 * other rows in 2 pairs within a tenant's burst; but the block matmul with C++ ucodes on 2
 * threads slower in 3 of 3 quiet pairs, 1.56–1.90 against 1.40–1.48 s, from an extra fed slot the
 * matmul never needed: now it feeds 0 CFs with the rule on, as off, 10 of 10 runs). With that mend,
 * shielded, alternated, load 8.5–11.8: stencil 2^14 faster in 7 of 10 pairs (164 / 191 ms), 2^15
 * 4 of 10 (248 / 243), PIC small C++ 1×2 4 of 5 (656 / 676), the matmul 4 of 5 (1 394 / 1 449,
 * the same placements); but METG beside the original against the shared peak higher in 3 of 3
 * pairs of the per-lane build (825 / 300, 642 / 281, 361 / 345 µs; load 11–15) and level in the
 * one readable pair of this one (397 / 395). The default since 4 quieter METG pairs of the final
 * build (load 2.2–3.2, shielded, alternated): against the shared peak 283 / 219, 279 / 309,
 * 361 / 375, 247 / 230 µs on / off (level: lower in 2 of 4, medians 281 / 270), by the busy share
 * 296 / 403, 289 / 323, 361 / 349, 299 / 219 (lower in 3 of 4, medians 298 / 336); with the rows
 * above, faster or level everywhere it was measured. `LUNA_FED_FIRST_US` sets it (0: off, and the
 * depth is FEED_DEPTH) (docs/benchmarks.md, "An idle lane's fed batch sent early").
 */
export const FED_FIRST_NS = 1_000_000;
/** CFs per batch until CF times are known */
export const FIRST_BATCH = 4;
/** iterations a lazily unrolled loop spawns at a time, and the live CFs it keeps the node at */
export const LOOP_CHUNK = 1024;
export const LIVE_TARGET = 16384;
/**
 * While workers run batches on one node, a loop spawns CFs that wait for inputs no further ahead
 * than WAIT_AHEAD plus 4 per CF ready or running: enough for the batches fed from those in
 * flight and for work about to become ready (the block matmul's products waiting for A and B).
 * Without the bound a chain of 100 µs CFs on 2 threads unrolled its 8 000 links in chunks of
 * 1 024 as soon as its first batch left: turns of the system thread of 20–50 ms of cold code,
 * the chain stopped behind them (gaps between its CFs 408–420 → 209–247 ms in traces).
 */
export const WAIT_AHEAD = 128;
/**
 * Several lanes on one node begin in the FIFO order and leave it once more CFs than this are
 * parked (or workers are wanted). The short rows park almost none at once (8 chains × 2 000: 8
 * woken in all; stencil 2 000 steps: 4); a program whose loops the FIFO pump had unrolled whole
 * before its workers were wanted (held_views: ~6 000 CFs parked) ran as a few long fed batches,
 * 4–6× slower. held_views, 7 alternated pairs against the several-lane pump from the start
 * (shielded, load 8.3–9.9): at 64, 157–632 batches, one run in 7 in the few-batches mode
 * (3.2 s); at 16, 513–753 batches (base 375–672), programs of 2.0–3.0 s (base 1.7–3.9 s).
 * Over 104 alternated pairs (shielded, load 5.7–16.9) the few-long-fed-batches mode came as
 * often at 16 as with the several-lane pump from the start: 9 runs each; the held-views test's
 * figure above 70 MiB 6 / 4 times, above 100 MiB once each. Both builds park 1 600–4 500 CFs
 * ahead at their peak, which the long fed batches sweep up: the 17 the FIFO start parks before
 * the workers are wanted are not what seeds the mode
 * (docs/benchmarks.md, "The FIFO start of several lanes against held_views' long fed batches").
 */
export const FIFO_START_PARKED = 16;
/**
 * Raw output bytes at which a fed batch closes: they, and the freed buffers they back, stay until
 * the batch returns. held_views (a 1–4 MiB DF a step read by two chains of 64 KiB tokens, ~3.5
 * MiB a step) was fed ~37 steps in one batch a lane in its few-batches runs; with 16 MiB ~5. 45
 * alternated rounds, shielded, load 6.4–10.5: peak 159 / 203 / 255 MiB (min / median / most)
 * against 167 / 242 / 466 without the bound and 170 / 275 / 402 before the FIFO start; the
 * held-views test's figure at most 39 MiB against 75 / 81; few-batches runs 2 of 45 against 6 /
 * 4. The stencil's outputs are bytes, far from it; the PIC 1×2 read within noise (TypeScript 3.09
 * against 3.07 / 2.76 M/s). `LUNA_FED_BATCH_MB` overrides it.
 */
export const FED_BATCH_BYTES = 16 * 1048576;
/**
 * the "4 per CF ready or running" above. Fewer keep fewer CFs alive, which the system thread's
 * scavenges copy (Task Bench stencil_1d 1×2, 10 000 steps at 2^13 iterations: ~6 800 live CFs
 * mid-run), but made no difference beyond noise there: three alternated triples, load 3.4–3.6,
 * the system thread's CPU 147–164 / 150–171 / 154–161 ms and the run 582–719 / 580–754 /
 * 580–738 ms at 1 / 2 / 4, with 72–80 fed batches at 1 against 52 (a batch is built from the
 * CFs waiting ahead). Kept for the block matmul. `LUNA_WAIT_AHEAD_PER_CF` overrides it.
 */
export const WAIT_AHEAD_PER_CF = 4;
/**
 * CFs a loop keeps waiting ahead at most, beyond WAIT_AHEAD, per batch in flight: a full batch
 * (MAX_BATCH) each, enough for the next batch of every lane. The bound per CF above grows with
 * the batches themselves: fed batches of ~400 CFs on 2 lanes let 8 000 CFs wait ahead. Task
 * Bench stencil_1d 1×2, C++ kernels, 10 000 steps at 2^13 iterations, `--warm-start`: the most
 * CFs waiting ahead 8 332 → 2 235 and live 10 379 → 4 240 (≤ 4 batches in flight), fed batches
 * 52–54 → 52–56 a run, the system thread's CPU 137–161 → 139–148 ms and its scavenges 36–37 →
 * 35–52 a run (three alternated pairs, load 6.3–6.7): the same work, a smaller live set. Its
 * heap peak moved less than the noise (41.7–45.0 → 42.7–43.4 MB): a CF spawned 4 000 ahead still
 * outlives two scavenges of the 2 MB young generation. A fixed cap of 1 024 shrank the batches
 * (88 a run, 42 CFs handed back to the system thread against 6). `LUNA_WAIT_AHEAD_PER_BATCH`
 * overrides it.
 */
export const WAIT_AHEAD_PER_BATCH = MAX_BATCH;
/**
 * iterations a loop spawns at a time at most while the node runs everything itself: each spawned
 * CF lives until it runs, and a thousand iterations ahead outlive the system thread's young
 * generation, so their objects are copied into the old one (stencil_1d, 20 000 steps, 1 thread:
 * scavenges 117 → 70 ms)
 */
export const ALONE_CHUNK = 64;
/**
 * How far a node of coarse fragments lowers its worker lanes below its system thread (nice
 * steps; policy laneNice, `LUNA_LANE_NICE`). With both lanes running kernels on 2 cores, the
 * system thread woken by a lane's result waited for a core, and the CFs that result made ready
 * waited with it. The PIC at the seed's parameters, C++ kernels, 1 × 2: a result waited a median
 * 210–226 µs, 278–355 ms in all, before the system thread began to book it (84 waits over a
 * millisecond), and during those long waits the system thread was runnable without a core for
 * ~100 ms (perf sched; 2 runs). With the lanes at +5 from their start (an experimental build):
 * 164 ms in all, 35 over a millisecond, 57 ms runnable. This rule (lowered once the node is
 * found coarse, at once for a `heavy` hint), alternated against `LUNA_LANE_NICE=0`: the program
 * 613 → 601 ms (C++, medians of 10 pairs, 8 faster), 1 485 → 1 418 ms (TypeScript, 6 pairs, 5
 * faster; the process's CPU 3.62 → 3.38 s). Under autogroup scheduling a nice value weighs the
 * threads of one process against each other only, so the lanes lose nothing to other programs;
 * V8's background threads stay below them (BACKGROUND_NICE, cli/run.ts). Fine-grained nodes keep
 * their lanes as they are: not measured there, where results come back in batches and the lanes
 * feed each other. That was at 5. On a 6.18 kernel (EEVDF) the system thread's turn-arounds
 * still waited behind the lanes, hence 9. The same PIC, C++, alternated against 5 (quiet, load 1.2–1.6):
 * 9 faster in 11 of 14 (medians 578.8 → 561.3 ms); 10 faster in 49 of 74 over five series (mean
 * −7 ms) and TypeScript at 10 in 6 of 8 (1 393 → 1 367 ms); 8 and 14 unchanged in one series of
 * 12 (7 and 6 faster). Not 10: V8's background threads would no longer be below the lanes.
 */
export const LANE_NICE = 9;
/**
 * see unrollChunk: the calm unrolls after which a loop that was woken doubles its chunk again.
 * 16 (0 is the old rule, doubling at once): CFs woken on 2 threads 1 336 → 216 (stencil_1d 2 000
 * steps), 6 668 → 1 054 (chain 1×20 000), 1 612 → 131 (8 chains × 2 000); program time, 6
 * alternated pairs, load 1.6–2.2: 98.9 → 84.7, 148.1 → 136.6, 146.9 → 145.4 ms.
 */
export const CALM_UNROLLS = 16;
/**
 * a loop spreads over the nodes (see spreadLoop) from this many iterations per node it sends a
 * copy to: a copy costs a message and, on its node, evaluating every iteration's locators
 */
export const SPREAD_MIN_ITERATIONS = 16;
/** a code whose executions take less than this on average runs on the system thread */
export const INLINE_NS = 20_000;
/** while workers boot: a code whose fastest execution (cold calls included) took less runs here */
export const BOOT_INLINE_NS = 1_000_000;
/**
 * the same on one node, where the system thread serves no network: a worker boots in 50–190 ms
 * here, and a CF run meanwhile delays the first batch by at most its own length
 */
export const BOOT_INLINE_ONE_NODE_NS = 10_000_000;
/**
 * On one node a code's first call this long boots the workers at once: no compile of a code takes
 * it (a 10 µs kernel's first call, compiling included, 13 ms here), and a program that spends a
 * worker's boot (50–190 ms) in one call has work for them. The PIC's initial cloud (80 ms quiet,
 * C++) booted them only at the first deposit call to reach BOOT_INLINE_NS twice in a row, so the
 * cloud, then part of the first step's deposits, ran with the second core idle.
 */
export const BOOT_FIRST_CALL_NS = 50_000_000;
/** executions measured before a code may run inline */
export const INLINE_SAMPLES = 3;
/**
 * A code whose last three measured calls (CodeCost.recentNs) all took this many times its mean or
 * more has become long: the rule reads the shortest of them, not the mean. The mean moves by an
 * eighth a measurement at most (a lone outlier must not move a code), and tiny codes are timed 1
 * call in 16: a chain whose calls went from ~1 µs to 2 ms ran ~460 more calls (0.9 s) on the
 * system thread before its mean reached INLINE_NS; now 3 × 16 at most. Twice the mean is where
 * the mean's own damping bounds a sample (runtime.ts measureCode), so a code near INLINE_NS that
 * only jitters keeps its place.
 */
export const BECAME_LONG = 2;
/** A code's cost to the inline rule: its mean, or its recent calls' once they jumped (BECAME_LONG). */
function levelNs(cost: CodeCost): number {
  return cost.recentNs >= BECAME_LONG * cost.meanNs ? cost.recentNs : cost.meanNs;
}
/**
 * CFs this long on average make a node's fragments coarse: it raises V8's tiering budget
 * (relaxTiering; to 8 × V8's own, bin/luna). A cold fragment's runtime path costs the system
 * thread ~40 µs, a warm one ~4 µs (the startup bench's chains of 1 000 and 200 000,
 * docs/benchmarks.md), so from 1 ms a fragment the early optimising saves under 4 % of the work,
 * while its compiles, on V8's helper threads, take the workers' CPU. With V8's budget throughout (`LUNA_V8_BUDGET=default`, bin/luna,
 * alternated pairs, medians): the PIC at the seed's parameters, C++ kernels, 1 × 2 874 → 733 ms,
 * 1 × 1 1 056 → 943, 2 × 1 1 186 → 1 060 (6 pairs each), TypeScript kernels 1 × 2 1 920 → 1 803
 * (3); matmul_bench 640 on 2 threads 628 → 604 (6); chains of 20 000 and 200 000 empty CFs, whose
 * fragments stay fine, 47 / 95 ms against 48 / 99 (6).
 */
export const COARSE_CF_NS = 1_000_000;
/** The CFs a node measures before their mean decides whether its fragments are coarse. */
export const COARSE_SAMPLE = 32;
/** Longest code a lone CF may run inline for (the system thread also serves the network). */
export const ALONE_INLINE_NS = 1_000_000;
/**
 * After this many lone CFs run inline, the next one that is not tiny goes to a worker, which
 * measures the hand-off again: otherwise the first measurement, taken while everything is cold,
 * decides for the rest of the run (a chain of 100 µs CFs on 2 threads ended in one of two steady
 * states between identical runs, ~7 950 CFs inline or ~6 870 on a worker).
 */
export const HANDOFF_PROBE = 256;
/** batches in flight per worker (one running, one queued behind it) */
export const LANE_DEPTH = 2;
/**
 * work a chain keeps queued on its lane behind the running batch (batches of BATCH_NS: three):
 * the lane runs on while the system thread is late to send the next one. With one queued (the
 * lane depth), chains of 70 µs links on 2 lanes (bench lanes, 2 chains × 2 000, load 9–11,
 * alternated, medians of 4) waited 31.5 times for their next batch, 555 ms in all; with three,
 * 13.5 times, 366 ms (the worker's own count, `--timing` laneWaits, laneWaitNs). The system
 * thread's turns under load (its own cold code, a core taken by other processes) lasted 20–40 ms
 * while it used a third of that as CPU: the lane's reserve, not its cost, decides.
 */
export const CHAIN_AHEAD_NS = 3 * BATCH_NS;
/** most batches a chain's lane holds (batches of tiny CFs are capped at MAX_BATCH CFs, not sized by time) */
export const CHAIN_DEPTH = 4;
/** batches in flight per worker, counting those fed by other lanes' batches */
export const FEED_DEPTH = 2;
/** an inline ucode at least this long (mean) first sends what is queued: a socket write costs ~20–30 µs here */
export const FLUSH_BEFORE_NS = 50_000;
/**
 * Under an order of priorities (policy/priority.ts), a code measured shorter than this goes in
 * batches of its own ready CFs worth this much; longer ones one CF a batch. One CF a batch cost
 * each a round trip through the system thread (the PIC at the seed's parameters, C++, 1 × 2: a
 * lane's median gap 0.4–0.5 ms between two CFs while another was ready). 1 ms against one CF a
 * batch (LUNA_PRIORITY_BATCH_US=0), alternated pairs: at load 2.9–3.5 (8 pairs) batches 534 →
 * 365, P_U 68.9 → 70.5 % (higher in 8 of 8), program 1 241 → 1 199 ms (faster in 7 of 8), the
 * system thread's CPU 200 → 170 ms (8 of 8); at load 8.7–10.6 (10 pairs) level but for the
 * system thread's CPU (lower in 9 of 10). 2 ms (4 pairs against 1 ms, load 9–10.6): batches
 * 396 → 288, P_S 3.1 → 7.1 %: a lane took the CFs the other then lacked (docs/pic.md, "Page
 * faults on both sides").
 */
export const PRIORITY_BATCH_NS = 1_000_000;
/** a CF this long fed from a lane that already feeds another this pass may go to another lane (a hand-off between workers costs ~100 µs here) */
export const FEED_SPREAD_NS = 100_000;

/*
 * How waiting threads wait. The wake-up probe (bench/raw-wakeup.ts) on this 2-vCPU machine,
 * quiet: a round trip between two threads costs 92–95 µs when each waits at once (an idle vCPU is
 * woken each time), 2.2–2.5 µs when the waiter spins ~20 µs first, 12.7 µs with every core busy;
 * Atomics.notify of a sleeper costs its caller 13–14 µs. A sleep then costs about one wake-up
 * (~46 µs) plus the waker's notify. Spinning is free only while a core is free: every spin below
 * stops as soon as the node's threads on a CPU (workers not asleep, the system thread while it
 * works) outnumber the CPUs (exec/protocol.ts coreFree). Ungated, spins longer than 20 µs had
 * made Task Bench stencil_1d slower (1×2, 2^12 iterations, medians of 5: a fed value's spin of
 * 20 µs 328–338 ms, 100 µs 358, 2 ms 363; a worker's spin on its port of 50 µs with 2 workers
 * on 2 cores delayed the system thread that was to send the batch), because the spinner took the
 * core the system thread or the producer needed; the gate is what removes that.
 */
/**
 * a worker spins this long on its empty port: a batch that follows within it costs no wake-up
 * (it was 50 µs wherever a core was spare beside the workers and the system thread, none
 * elsewhere; now the gate decides, at every moment)
 */
export const IDLE_SPIN_NS = 50_000;
/**
 * a worker waiting for a value fed by another spins this long: the producer is running the CF
 * that makes it, and a stencil step's two tasks end within a few hundred µs of each other at
 * millisecond tasks (the vCPUs run the kernel at different speeds); past it, sleeping costs
 * less than the core (to be confirmed on a quiet machine: LUNA_FED_SPIN_US)
 */
export const FED_SPIN_NS = 200_000;
/**
 * a worker waiting for a fed value goes on spinning this long while the lane that makes it runs
 * a CF (the value is being made): past FED_SPIN_NS a stencil step whose two tasks ended further
 * apart than the spin (kernel speeds differ 2× between 0.1 s windows here) slept, and its
 * producer's notify put a wake-up (~46 µs, plus 13–14 µs of the producer's) between the two
 * tasks. Past 10 ms a wake-up is under 1 % of the wait, and sleeping gives the core back. The
 * gate still parks the spinner whenever the node's threads outnumber its CPUs
 * (`LUNA_FED_SPIN_PRODUCER_US`; quiet-machine figures still due, see docs/runtime.md)
 */
export const FED_SPIN_PRODUCER_NS = 10_000_000;
/**
 * a worker's batch with this much work left (at its pace so far), and that has run as long, asks
 * the system thread for the lane's next batch (WaitPlan.runLowNs; 0: never, it waits for the
 * batch's result). A fed stencil's lanes ran dry 13–48 % of the span at the end of each fed
 * batch, for the system thread's turn (1–40 ms under load). Asking at 8 ms cut that 3–5× and
 * the run in 6 of 8 pairs at 84 µs C++ tasks, but slowed it in 5 of 5 at ~45 µs tasks (the
 * METG size): the turn then runs beside both lanes on 2 cores, and a lane it preempts stalls
 * its partner as long. Off until the turn is cheaper (`LUNA_RUN_LOW_US`; docs/benchmarks.md,
 * "Where a lane's gaps go")
 */
export const RUN_LOW_NS = 0;
/**
 * a worker waiting for a fed value stops spinning once the lane that makes it has been starved
 * this long: it holds a value it has not looked at and runs no CF (exec/protocol.ts starved), so
 * it waits for a core, and the spin may hold the only one it could get. A lane on a CPU looks at
 * a value within a microsecond; one just woken runs after a wake-up (~46 µs here), so a
 * starvation shorter than that may only be a wake-up onto a free core, and leaving then would
 * cost the spinner a wake-up of its own. With two lanes feeding each other and one core between
 * them (the other taken by another process, the system thread or V8's compiler), each waiting
 * lane spun out its whole FED_SPIN_NS before the other could run: the two alternated, and a
 * value took a median 270–290 µs from its producer to its consumer (Task Bench stencil_1d 1×2,
 * C++, 2^14 iterations, 1 000 steps, load 7, the workers' own clocks); 94–96 µs with 20 µs here.
 * Program span, alternated, 3 each, load 12–14: 706 / 899 / 754 ms without, 473 / 658 / 878 at
 * 20 µs, 440 / 416 / 461 at 50 µs; the process's CPU 1.3–2.9 s without, 1.1–1.3 s with.
 */
export const FED_STARVED_NS = 50_000;
/**
 * the system thread, its pump done with batches in flight, spins this long for a result before
 * it returns to its event loop: about one wake-up, so waiting in the poll costs at most twice
 * what the spin would have (LUNA_RESULT_SPIN_US); on several nodes never (network input would
 * wait behind it)
 */
export const RESULT_SPIN_NS = 50_000;
/**
 * the system lane, its spin for a fed value over, sleeps this long on its flag (a futex wake-up,
 * as a worker's) before it suspends the batch and returns to its event loop, whose wake-up goes
 * through a promise and the loop's poll; on one node what the loop serves meanwhile (worker
 * results, a worker's death, a signal) can wait this long. Suspended at once, the system lane
 * of a Task Bench stencil_1d 1×2 at 2^14 iterations suspended 440–450 times in 1 000 steps
 * (load 14).
 */
export const LANE_SLEEP_NS = 10_000_000;
/**
 * Worker lanes pinned one to a CPU where the node may use a CPU for each (exec/affinity.ts;
 * `LUNA_PIN_LANES=0` turns it off). Unpinned, the kernel woke a lane onto the CPU its partner
 * held while the other CPU ran another process or one of V8's helpers, and a step of two lanes
 * that feed each other took two tasks' time. Task Bench stencil_1d 1×2, C++ kernels, 1 000
 * steps, pinned against not, alternated, own group at nice −19, under load 11–17 (no quiet
 * figure): program medians 2^10 / 2^11 / 2^12 / 2^14 / 2^16 iterations 50.6 / 58.9 / 52.8 /
 * 147 / 416 ms against 60.3 / 73.0 / 96.6 / 386 / 568 (6, 6, 6, 5, 5 pairs), fed waits that
 * slept 2–69 against 9–871 a run. Pinned at a lane's first fed wait (as now; lanes that never
 * wait for each other, a block matmul's, are left free: pinned, it was slower in 4 of 5 pairs),
 * 2^14 / 2^16 128 / 220 ms against 178 / 293, 4 pairs each, load 14–16; perf sched at 2^16: the
 * lanes' span lost to the other worker 25–36 % → 0 (docs/benchmarks.md, "Worker lanes pinned
 * one to a CPU; a machine-wide spin gate measured and removed").
 */
export const PIN_LANES = true;
/**
 * `--warm-start` rehearses the program on the system thread while the workers boot
 * (node/rehearsal.ts): this many fragments in REHEARSE_RUNS runs, at most REHEARSE_MS. Task Bench
 * stencil_1d 1×2, C++ kernels, 1 000 steps at 2^13 iterations, alternated, medians of 3, load
 * 10–12: the system thread's CPU over the span 66.4 ms without, 22.5 with 4 000 fragments in 4
 * runs, 21.7 with 8 000; 4 000 in 2 whole runs gave 112–138 ms, its code deoptimised in the span
 * ('wrong call target', 'wrong map': shapes and closures of one runtime instance only). At load
 * 17 the rehearsal took more than 1.5 s and was cut at 1 000–2 700 fragments: hence 3 s. A
 * program that runs to its end REHEARSE_RUNS times is not rehearsed further: examples/hello (9
 * fragments) was rehearsed 445 times, 1.2–1.5 s of the system thread at load 9–10; now 4 runs,
 * 0.11–0.13 s, the process's CPU 1.48–1.81 → 1.01–1.18 s (3 pairs). Such a program also ends
 * the workers' rehearsal (LANE_REHEARSE_CFS): hello's wall 635–752 → 359–374 ms (6 pairs, load ~4).
 */
export const REHEARSE_CFS = 4000;
export const REHEARSE_RUNS = 4;
export const REHEARSE_MS = 3000;
/**
 * `--warm-start` on two or more worker lanes that feed each other: the workers rehearse their
 * per-CF path together for LANE_REHEARSE_CFS fragments each, at most LANE_REHEARSE_MS, before they
 * report ready (exec/worker.ts rehearseTogether: decode, values fed across lanes through a wiring
 * of the rehearsal's own, so the waits for fed values spin, park and wake as in the run; stand-in
 * ucodes; result encode and post), so V8 optimises that path in each worker's isolate before the
 * span. Quiet (load 1.3–2.6, nothing else running), Task Bench stencil_1d 1×2 with C++ kernels,
 * `original` bench's METG row, alternated: with 3 000 METG 170 / 197 µs against 546 / 294 without;
 * efficiency at ~900 µs tasks 82–84 % against 75–81 %, at ~300 µs 58–61 % against 33–56 %; with
 * TypeScript kernels (taskbench --quick) 197 against 338 µs, a task's last input → start median
 * 7.3 against 20 µs. It costs 0.3–0.9 s more before the span (load 9–11; again at load 11, a
 * 1 000-step stencil's boot wait 847–1 000 → 1 410–2 045 ms), paid only with --warm-start. It
 * ends whatever the program's imports (lanes that do not keep in step keep their outputs until
 * asked for them), and by LANE_REHEARSE_MS at the latest: the first lane out of time ends every
 * lane's waits, so a partner that never answers costs at most that (`LUNA_LANE_REHEARSE_MS`).
 * A program the system thread's rehearsal finds small (it ran to its end in each of its
 * REHEARSE_RUNS runs) ends it at once: its real run is shorter than this rehearsal, which was
 * most of its wall (examples/hello, 9 fragments, 2 threads, shielded, 6 alternated pairs at load
 * ~4: 635–752 ms with the workers' 6 002 rehearsed fragments, 359–374 ms without; 198–251 ms
 * without --warm-start, which boots no worker for it). `LUNA_LANE_REHEARSE_CFS=N` sets the count (0: off) and makes a lone worker rehearse too (one
 * worker lane, or LUNA_FEED=0), which it does not by default: alone, a worker cannot rehearse the
 * fed waits, and its rehearsal (exec/worker.ts rehearse) compiled no less inside the span (load
 * 11–12: the workers' path 40–60 compilations with it against 40–52 without, deoptimisations 7–16
 * against 2–6) (docs/benchmarks.md, "Workers rehearse" and "Workers rehearse together").
 */
export const LANE_REHEARSE_CFS = 3000;
export const LANE_REHEARSE_MS = 1500;
/** the duration a rehearsed fragment reports: the scale where the fed path matters (Task Bench METG) */
export const REHEARSE_CF_NS = 200_000;

/** A fed CF's cost counts as long: FEED_SPREAD_NS or more, or not measured yet (0: its code never ran here). */
function mayBeLong(costNs: number): boolean {
  return costNs >= FEED_SPREAD_NS || costNs === 0;
}

/** Fed batches a lane may hold: one more while some lane holds a batch sent short (`short`: FedView.short). */
function feedDepth(short: ArrayLike<number> | undefined, n: number): number {
  if (short !== undefined) for (let i = 0; i < n; i++) if (short[i]! > 0) return FEED_DEPTH + 1;
  return FEED_DEPTH;
}

function someZero(a: ArrayLike<number>, n: number): boolean {
  for (let i = 0; i < n; i++) if (a[i] === 0) return true;
  return false;
}

export interface DefaultPolicyOptions {
  /** allow the system thread to run tiny fragments itself (default true) */
  inline?: boolean;
  /** spread long loops over the nodes (default true; `LUNA_SPREAD_LOOPS=0` turns it off) */
  spreadLoops?: boolean;
  /** target duration of a fed batch, ns (default FED_RUN_NS; `LUNA_FED_RUN_MS` overrides it) */
  fedRunNs?: number;
  /** the work at which a fed batch for a nearly idle lane is sent, ns (default FED_FIRST_NS; `LUNA_FED_FIRST_US` overrides it, 0: off) */
  fedFirstNs?: number;
  /** what a chain keeps queued behind its running batch, ns (default CHAIN_AHEAD_NS; `LUNA_CHAIN_AHEAD_MS` overrides it, 0: the lane depth) */
  chainAheadNs?: number;
  /** CFs a loop keeps waiting ahead per CF ready or running (default WAIT_AHEAD_PER_CF; `LUNA_WAIT_AHEAD_PER_CF` overrides it) */
  waitAheadPerCf?: number;
  /** CFs a loop keeps waiting ahead at most, beyond WAIT_AHEAD, per batch in flight (default WAIT_AHEAD_PER_BATCH; `LUNA_WAIT_AHEAD_PER_BATCH` overrides it) */
  waitAheadPerBatch?: number;
}

/** `LUNA_CHAIN_AHEAD_MS` in ns (0 allowed), else `ns`. */
function envChainAhead(ns: number): number {
  const ms = tuned('LUNA_CHAIN_AHEAD_MS');
  return ms !== undefined ? ms * 1e6 : ns;
}

/** `LUNA_FED_RUN_MS` in ns, else `ns`. */
function envFedRun(ns: number): number {
  const ms = tuned('LUNA_FED_RUN_MS');
  return ms !== undefined ? ms * 1e6 : ns;
}

/** `LUNA_FED_FIRST_US` in ns (0 allowed), else `ns`. */
function envFedFirst(ns: number): number {
  const us = tuned('LUNA_FED_FIRST_US');
  return us !== undefined ? us * 1e3 : ns;
}

/** What the default policy answers: only the lanes of fed CFs beyond the common questions. */
export const DEFAULT_CAPS: PolicyCapabilities = { places: false, ownsDfs: false, orders: false, feeds: true, profiles: false, guardsSteals: false };

export class DefaultPolicy implements SchedulingPolicy {
  readonly name: string = 'default';
  readonly caps: PolicyCapabilities = DEFAULT_CAPS;
  readonly fifoDepth: number = LANE_DEPTH;
  readonly fifoStartParked: number = FIFO_START_PARKED;
  readonly fedBatchBytes: number = (tuned('LUNA_FED_BATCH_MB') ?? FED_BATCH_BYTES / 1048576) * 1048576;
  private readonly inline: boolean;
  private readonly spread: boolean;
  private readonly fedRunNs: number;
  private readonly fedFirstNs: number;
  private readonly chainAheadNs: number;
  private readonly aheadPerCf: number;
  private readonly aheadPerBatch: number;

  constructor(o: DefaultPolicyOptions = {}) {
    this.chainAheadNs = o.chainAheadNs ?? envChainAhead(CHAIN_AHEAD_NS);
    this.inline = o.inline ?? true;
    this.spread = o.spreadLoops ?? process.env.LUNA_SPREAD_LOOPS !== '0';
    this.fedRunNs = o.fedRunNs ?? envFedRun(FED_RUN_NS);
    this.fedFirstNs = o.fedFirstNs ?? envFedFirst(FED_FIRST_NS);
    this.aheadPerCf = o.waitAheadPerCf ?? tuned('LUNA_WAIT_AHEAD_PER_CF') ?? WAIT_AHEAD_PER_CF;
    this.aheadPerBatch = o.waitAheadPerBatch ?? tuned('LUNA_WAIT_AHEAD_PER_BATCH') ?? WAIT_AHEAD_PER_BATCH;
  }

  /** Locators place fragments. */
  place(_cf: FragmentView): number | undefined {
    return undefined;
  }

  /** The map rules place DFs. */
  dfOwner(_key: string, owner: number): number {
    return owner;
  }

  /** The program's `priority:` rules (ready CFs otherwise run in the order they became ready). */
  priority(cf: FragmentView & { readonly priority: number }): number {
    return cf.priority;
  }

  /** Any stealable fragment may go. */
  permitSteal(_cf: FragmentView): boolean {
    return true;
  }

  profile(_s: ProfileSample): void {}

  chooseLane(lanes: LanesView, _next?: FragmentView): number {
    let w = -1;
    const f = lanes.inflight;
    for (let i = 0; i < lanes.count; i++) if (f[i]! < LANE_DEPTH && (w < 0 || f[i]! < f[w]!)) w = i;
    return w;
  }

  /**
   * A CF fed by running batches from one lane stays on that lane (a chain: another lane could
   * only wait for the same values, after a message), or waits while it is full. Fed from
   * several lanes, it goes to the least loaded lane with room (CFs given to a lane earlier in
   * the pass count), ties taken in turn: the CFs of one step of a stencil then spread over the
   * workers instead of queueing on one. So does a CF of FEED_SPREAD_NS or more fed from a lane
   * that already feeds another in this pass (parallel work, not a chain): once both CFs of a
   * stencil step had run on one lane, both of the next were fed from that lane alone and every
   * later step ran on one worker (Task Bench stencil_1d, 1 000 steps of ~650 µs tasks on 2
   * threads: both tasks of a step overlapped 3 % of the time). Nor does such a CF join a lane
   * after a CF of this pass it does not follow while another lane got none yet: with one lane
   * full, both CFs of a step went to the other and ran one after the other (a third of the
   * steps; a step's tasks overlapped in 493 of 999 steps, 610–842 with the rule in eight traces).
   * A code not measured yet (cost 0) counts as long: the PIC's first-step sweeps (C++, seed's
   * size, 1 × 2), one code run only then on two slabs, were both fed from the lane of the last
   * density and ran there one after the other (55 + 18 ms) while the other lane idled 88 ms.
   */
  chooseFedLane(lanes: LanesView, from: readonly number[], cf?: FedView): number {
    const f = lanes.inflight, n = lanes.count;
    // while a lane holds a batch sent short (chainLength's aheadNs), every lane has one fed slot
    // more, for the rest of what it was cut from: with FEED_DEPTH the short batch filled the lane
    // mid-pass, the other CF of the same step waited for room, was offered later from one lane
    // only and chained there, and the stencil fell onto one worker (2 of 4 traced runs); every
    // lane, not only the cut one, or the lanes' depths differ and a step's partner CF waits for
    // the fuller lane while the chain goes on in the other. Only then: with the extra slot
    // whenever the rule was on, the block matmul (no batch ever cut) fed its ~0.8 ms products
    // across lanes (234–264 CFs against 0, 487–528 batches against 275–338), and with it for CFs
    // of which 8 fit in FED_FIRST_NS its ~100 µs adds, ~700 offers into a third slot behind two
    // batches of products (7–89 fed; 281–348 batches against 247–275); now 0 against 0
    // (with the rule off, `LUNA_FED_FIRST_US=0`, no batch is ever cut: the lanes are not looked at)
    const depth = this.fedFirstNs > 0 ? feedDepth(cf?.short, n) : FEED_DEPTH;
    if (from.length === 1) {
      const a = from[0]!;
      const parallel = cf !== undefined && cf.fedFrom[a]! > 0 && mayBeLong(cf.costNs);
      if (!parallel) return f[a]! < depth ? a : -1;
    }
    // Its producers' lanes run in step (each waits for the others' values): while one of them
    // is full, it waits for that lane's batch to return, and then the CFs of both lanes go in one
    // pass, in long batches. Fed to the lane that had room as soon as it had room, a stencil fell
    // into a lock-step of one short batch per lane per return (Task Bench stencil_1d 1×2, 200
    // steps of ~5 ms tasks under load: batches of 2 CFs where 6 were due, every send with the
    // other lane full).
    for (let i = 0; i < from.length; i++) if (f[from[i]!]! >= depth) return -1;
    // load: batches in flight and CFs given earlier in this pass (sent at its end)
    const g = cf?.given;
    // A long CF does not queue behind one given to the same lane in this pass that it does not
    // follow (parallel work, e.g. the other CF of a stencil step) while a lane got nothing yet:
    // it waits for that lane to have room. Once every lane got some, there is more parallel
    // work than lanes and it queues as before.
    const apart = cf !== undefined && mayBeLong(cf.costNs) && someZero(cf.given, n) ? cf : undefined;
    let w = -1, wl = 0;
    for (let k = 1; k <= n; k++) {
      const i = (this.lastFed + k) % n;
      if (f[i]! >= depth || (apart && apart.given[i]! > 0 && !apart.follows(i))) continue;
      const l = f[i]! + (g ? g[i]! : 0);
      if (w < 0 || l < wl) { w = i; wl = l; }
    }
    if (w >= 0) this.lastFed = w;
    return w;
  }
  private lastFed = -1;

  /** Spin before sleeping where a core may be free (one CPU: never, the awaited thread needs it). */
  waiting(t: ThreadsView): WaitPlan {
    if (t.cpus < 2) return { cpus: t.cpus, idleSpinNs: 0, fedSpinNs: 0, resultSpinNs: 0 };
    return { cpus: t.cpus, idleSpinNs: IDLE_SPIN_NS, fedSpinNs: FED_SPIN_NS, fedSpinProducerNs: FED_SPIN_PRODUCER_NS, fedStarvedNs: FED_STARVED_NS, resultSpinNs: t.nodes > 1 ? 0 : RESULT_SPIN_NS, laneSleepNs: t.nodes > 1 ? 0 : LANE_SLEEP_NS, pinLanes: PIN_LANES, runLowNs: RUN_LOW_NS };
  }

  /**
   * The system thread is one of the lanes of a node without peers (`--threads T`: T − 1 workers
   * and this thread): then the node's T threads want its T cores, and a thread that waits for a
   * fed value or its next batch spins where, with T + 1 threads on T cores, the spin gate
   * (exec/protocol.ts coreFree) made it sleep and pay a wake-up (Task Bench stencil_1d 1×2 at
   * 2^12 / 2^14 iterations: 964 / 822 of ~1 000 fed waits ended asleep). With peers it is not:
   * a batch on this thread runs for up to FED_RUN_NS, and their messages would wait behind it.
   * Not yet the default: the system thread's bookkeeping between its batches now holds up the
   * worker waiting for the system lane's values (Task Bench stencil_1d 1×2, C++ kernels, 1 000
   * steps, alternated, medians of 3, load 2.5–3.3: at 2^11 / 2^12 / 2^13 iterations 121 / 135 /
   * 339 ms with two workers against 176 / 193 / 658 ms with the system lane; at 2^14 792 against
   * 717). `LUNA_SYSTEM_LANE=1` turns it on (with peers too), `=0` off.
   */
  systemLane(t: ThreadsView): boolean {
    return tuned('LUNA_SYSTEM_LANE') === 1 && t.lanes >= 2;
  }

  /**
   * With `--warm-start`, the program is rehearsed for REHEARSE_CFS fragments, at most
   * REHEARSE_MS, each reported as REHEARSE_CF_NS long. `LUNA_REHEARSE_CFS=N` sets the count, 0
   * turns it off.
   */
  rehearsal(t: ThreadsView): RehearsalBudget | undefined {
    const cfs = tuned('LUNA_REHEARSE_CFS') ?? REHEARSE_CFS;
    // asked for, a worker with no other to rehearse with rehearses alone; by default it does not
    const asked = tuned('LUNA_LANE_REHEARSE_CFS');
    const laneCfs = asked ?? (t.lanes >= 2 ? LANE_REHEARSE_CFS : 0);
    const laneMs = tuned('LUNA_LANE_REHEARSE_MS') ?? LANE_REHEARSE_MS;
    return cfs > 0 || laneCfs > 0 ? { cfs, runs: REHEARSE_RUNS, ms: REHEARSE_MS, cfNs: REHEARSE_CF_NS, laneCfs, laneMs, laneAlone: asked !== undefined } : undefined;
  }

  /**
   * A planned loop's window: as long as a fed batch (chainLength), but the first holds
   * FED_FIRST_NS of work and each next at most PLAN_WINDOW_GROWTH times the iterations still in
   * flight, so that the lanes start at once and the system thread builds a window while the
   * lanes run the ones before it.
   */
  planWindow(s: BatchSizing, inFlight: number): number {
    const full = this.chainLength(s);
    const ns = s.cfMinNs !== undefined && s.cfMinNs > 0 && s.cfMinNs < Infinity ? Math.min(s.cfNs, s.cfMinNs) : s.cfNs;
    const first = ns > 0 && this.fedFirstNs > 0 ? Math.ceil(this.fedFirstNs / ns) : FIRST_BATCH;
    return Math.max(1, Math.min(full, Math.max(first, PLAN_WINDOW_GROWTH * inFlight)));
  }

  readonly planWindows = PLAN_WINDOWS;

  /**
   * A batch carries about BATCH_NS of work, a fed one FED_RUN_NS (few on several nodes with
   * stealable work). A fed batch counts its CFs by the code's fastest execution, not the mean:
   * under load the workers' CFs measure longer (preempted), and fed batches sized by the mean
   * shrank with it, each batch less long a wake-up more of the system thread per step. A fed
   * batch for a lane with less than half of FED_FIRST_NS in flight (`aheadNs`) holds FED_FIRST_NS.
   */
  chainLength(s: BatchSizing): number {
    const ns = s.fed && s.cfMinNs !== undefined && s.cfMinNs > 0 && s.cfMinNs < Infinity ? Math.min(s.cfNs, s.cfMinNs) : s.cfNs;
    let limit = ns === 0 ? FIRST_BATCH : Math.max(1, Math.min(MAX_BATCH, Math.floor((s.fed ? this.fedRunNs : BATCH_NS) / ns)));
    // a fed batch for a lane about to run dry: its first FED_FIRST_NS go at once, the rest next.
    // Below half of it in flight, not below all of it: a lane holding one such short batch when
    // the next pass came had its next batch cut too, and a stencil ran in batches of ~10 CFs, two
    // in flight and a turn of this thread each, from then on (stencil_1d 1×2, 2^15 iterations)
    if (s.fed && s.aheadNs !== undefined && s.aheadNs * 2 < this.fedFirstNs && ns > 0) limit = Math.min(limit, Math.ceil(this.fedFirstNs / ns));
    return s.stealable && s.nodes > 1 ? Math.min(2, limit) : limit;
  }

  /**
   * A chain keeps CHAIN_AHEAD_NS queued behind its running batch, in batches of its chain length
   * (`LUNA_CHAIN_AHEAD_MS=0`: one batch, the lane depth, for comparisons).
   * CFs of BATCH_NS or more go one by one and keep the lane depth (a batch holds that much work
   * already), and so does stealable work on several nodes: what is queued on a lane cannot be
   * given away. So does a chain while other CFs are ready: the lanes have work without the
   * reserve, and a lane committed to its chains' next batches left the ready CFs to the other
   * (block matmul 640 / 8 on 2 threads, its products chained per block of C: 8–19 % slower in
   * 3 of 3 alternated pairs, load 5–6).
   */
  chainDepth(s: BatchSizing): number {
    if ((s.stealable && s.nodes > 1) || s.cfNs === 0 || s.cfNs >= BATCH_NS || s.ready > 0) return LANE_DEPTH;
    const batchNs = s.cfNs * this.chainLength(s);
    return Math.min(CHAIN_DEPTH, 1 + Math.max(LANE_DEPTH - 1, Math.ceil(this.chainAheadNs / batchNs)));
  }

  batchSize(s: BatchSizing): number {
    const limit = s.cfNs === 0 ? FIRST_BATCH : Math.max(1, Math.min(MAX_BATCH, Math.floor(BATCH_NS / s.cfNs)));
    // Stealable work on several nodes: small batches, so that there is something to give.
    if (s.stealable && s.nodes > 1) return Math.min(2, limit);
    if (s.fifo) return limit;
    // Spread what is ready over the lanes (two batches in flight each).
    return Math.min(limit, Math.max(1, Math.ceil(s.ready / (LANE_DEPTH * s.lanes))));
  }

  /**
   * Codes measured to be tiny. While no worker has booted yet (the first tens of milliseconds), a
   * code's first two executions run here to be measured (one node only), and codes whose fastest
   * execution was short keep running here: a short or sequential program never waits for a worker.
   * A lone CF (nothing else ready, no batch in flight) of a code shorter than the measured
   * hand-off to a worker and back runs here too, up to ALONE_INLINE_NS: a worker could only make
   * it later; after HANDOFF_PROBE of them one goes to a worker all the same, to measure that
   * again. Other codes run on workers, where a crash, a memory blow-up or an endless loop is
   * contained.
   */
  runInline(cost: CodeCost, now: InlineContext, cf?: FragmentView): boolean {
    if (!this.inline) return false;
    // A CF marked `heavy` runs on a worker, even its code's first call before a worker is up:
    // the PIC seed (C++, 1 × 2) ran its first cloud part here, 150 ms in which this thread spawned
    // none of the other three, and they then waited for the second worker's late boot
    // (docs/pic.md, "Heavy fragments never run inline").
    if (cf !== undefined && cf.site.kind === 'call' && cf.site.heavy) return false;
    // An unknown code could run for seconds: on several nodes that would silence this node's
    // heartbeats and termination replies, so there it waits for a worker.
    // A code's first call includes compiling it (13 ms for a 10 µs kernel here): on one node a
    // second call decides, or every later CF would wait for a worker to boot.
    if (!now.workersReady) {
      if (now.nodes === 1) return cost.samples < 2 || cost.minNs < BOOT_INLINE_ONE_NODE_NS;
      return cost.samples > 0 && cost.minNs < BOOT_INLINE_NS;
    }
    if (cost.samples < INLINE_SAMPLES) return false;
    const ns = levelNs(cost);
    if (ns < INLINE_NS) return true;
    return now.alone && now.aloneSinceHandoff < HANDOFF_PROBE && ns < Math.min(now.handoffNs, ALONE_INLINE_NS);
  }

  /** Queued messages leave before an inline ucode of FLUSH_BEFORE_NS or more. */
  flushBefore(meanNs: number): boolean {
    return meanNs >= FLUSH_BEFORE_NS;
  }

  /**
   * On one node workers boot once a code is seen not to be tiny: its fastest call took INLINE_NS
   * or more and, at that pace, its calls so far add up to BOOT_INLINE_NS (a code of 1 ms at its
   * second call, never at its first alone; of 50 µs after 20 calls); or its calls became long (two
   * calls in a row of BOOT_INLINE_NS, after its first, while its damped mean, or its last three
   * calls once they jumped (BECAME_LONG), reached INLINE_NS: a cold first call of 5 ms keeps the mean up for calls after it, and one of those descheduled for
   * a millisecond booted a worker for a program of tiny CFs); or its first call alone took
   * BOOT_FIRST_CALL_NS, a worker's boot. The first dozens of calls of a function run cold —
   * 15–25 µs each here for an empty ucode, 80–400 µs the first — and a tiny code has a lone slow
   * call now and then (a collection, the thread descheduled): neither is a reason to boot. A
   * program of tiny CFs never boots a worker: they all run on the system thread, and a worker
   * booting beside it takes its core on two (chain 20 000 on 1 thread 147 → 117 ms, stencil_1d
   * 2 000 steps 95 → 69 ms without the boot). On several nodes a code's first CF goes to a
   * worker (see runInline): there they boot before the program starts.
   */
  bootWorkers(cost: CodeCost, ns: number, nodes: number, heavy = false): boolean {
    if (nodes > 1) return true;
    // A program that marks a CF `heavy` says it has work for the workers from its start: they
    // boot before it starts, meanwhile the system thread runs its first CFs. The PIC seed (C++,
    // 1 × 2, cloud in 4 parts) otherwise ran its first two parts here and sent the other two to
    // workers that began to boot only then (docs/pic.md, "Booting at the start by a hint").
    if (heavy) return true;
    // A code's first call includes compiling it and its first use of what it calls (console,
    // fs): examples/hello's first `init` took 2.7 ms and booted a worker (~13.5 MB, a core while
    // it loads) that never ran anything. Nor is one warm call enough: the test of a tiny code
    // measured its second call at 41–163 µs over 40 runs and once at 726 µs (descheduled), which
    // with a 5 ms cold first call read as "every call long". Two warm calls decide (the second
    // and third run here anyway while no worker is up: a needed boot waits two calls), unless the
    // first call alone took as long as a worker's boot (BOOT_FIRST_CALL_NS).
    if (cost.samples < 2) return cost.samples === 1 && ns >= BOOT_FIRST_CALL_NS;
    if (cost.samples >= 3 && cost.minNs >= INLINE_NS && cost.samples * cost.minNs >= BOOT_INLINE_NS) return true;
    return cost.samples >= 3 && ns >= BOOT_INLINE_NS && cost.lastNs >= BOOT_INLINE_NS && levelNs(cost) >= INLINE_NS;
  }

  /**
   * Workers that boot at once before the program starts (exec/pool.ts bootEarly): one fewer than
   * the cores, which leaves this thread a core for its own first CFs; a program that marks a CF
   * `heavy` runs none of those here (runInline), so as many boot at once as there are cores (each
   * further one when one is ready): the PIC seed's second worker otherwise began to boot only when
   * the first was ready and ran its first CF 490–790 ms into the program (docs/pic.md, "Heavy
   * fragments never run inline").
   */
  bootAtOnce(cores: number, lanes: number, heavy = false): number {
    return Math.max(1, Math.min(lanes, heavy ? cores : cores - 1));
  }

  /**
   * A high tiering budget for a node of coarse fragments (core/tiering.ts): a program that marks
   * a CF `heavy` says so before it starts (and cli/run.ts asks this as the program loads);
   * otherwise its first COARSE_SAMPLE measured CFs decide, by their mean against COARSE_CF_NS.
   */
  relaxTiering(heavy: boolean, measured: number, meanNs: number): boolean | undefined {
    if (heavy) return true;
    if (measured < COARSE_SAMPLE) return undefined;
    return meanNs >= COARSE_CF_NS;
  }

  laneNice(): number {
    return tuned('LUNA_LANE_NICE') ?? LANE_NICE;
  }

  /**
   * While worker threads run batches, a loop spawns LOOP_CHUNK iterations at a time (up to
   * LIVE_TARGET live CFs, and on one node as many CFs waiting ahead as WAIT_AHEAD allows): CFs
   * waiting ahead feed batches and chain continuations. While this
   * node runs everything itself, spawning a CF before its inputs exist only parks it, to be
   * examined twice and kept alive meanwhile: the chunk halves when CFs were woken since the
   * previous unroll (they were spawned too early) and doubles otherwise, so a loop of dependent
   * steps spawns about a step at a time, while a loop of independent CFs, or of CFs that wait
   * for something far off anyway, reaches ALONE_CHUNK iterations (not more: see there). On
   * several nodes CFs spawned early request their remote inputs early, and with priorities they
   * are candidates of the order: there the chunk stays full.
   */
  unrollChunk(loop: LoopView): number {
    if (loop.live >= LIVE_TARGET && !loop.starving) return 0;
    const full = Math.min(LOOP_CHUNK, loop.remaining);
    if (loop.nodes > 1 || loop.ordered) return full;
    if (loop.inflight > 0) {
      if (loop.starving) return full;
      // whole iterations: a fraction of one (a fractional LUNA_WAIT_AHEAD_PER_CF) spawned CFs of
      // a fractional counter, whose inputs no CF produces (the program hung)
      const ahead = Math.floor(WAIT_AHEAD + Math.min(this.aheadPerCf * (loop.live - loop.waiting), this.aheadPerBatch * loop.inflight) - loop.waiting);
      // a loop whose lanes reached what it spawned last gets a chunk of its own: the bound is
      // the node's, and another loop's CFs waiting ahead had used it up
      if (ahead <= 0 && loop.behind === true) return Math.min(full, WAIT_AHEAD);
      return Math.max(0, Math.min(full, ahead));
    }
    // a loop that was woken once steps up again only after CALM_UNROLLS calm unrolls: doubling
    // at once after each halving alternated its chunk between 1 and 2, so a dependent chain
    // spawned every other CF before its input (a third of its CFs parked and examined twice)
    const next = loop.wokenSince > 0 ? loop.lastChunk >> 1 : loop.calm >= CALM_UNROLLS ? loop.lastChunk * 2 : loop.lastChunk;
    return Math.max(1, Math.min(full, ALONE_CHUNK, next));
  }

  /**
   * Long loops spread: one node spawning every CF of a loop placed over the nodes and migrating
   * the others' is serial work that grows with the nodes (40 000 empty CFs `locator_cyclic: i`:
   * 360 → 245 ms on 2 nodes, 515 → 375 ms on 4, node 0's system thread 145 → 75 ms of CPU).
   */
  spreadLoop(iterations: number, nodes: number): boolean {
    return this.spread && nodes > 1 && iterations >= SPREAD_MIN_ITERATIONS * (nodes - 1);
  }

  stealVictim(self: number, nodes: number, attempt: number): number {
    const v = (self + 1 + (attempt % (nodes - 1))) % nodes;
    return v === self ? (v + 1) % nodes : v;
  }

  giveAway(available: number, threads: number): number {
    const spare = available - threads;
    return spare <= 0 ? 0 : Math.max(1, Math.ceil(spare / 2));
  }
}
