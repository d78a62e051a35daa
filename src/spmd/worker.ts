// A rank's worker thread: install the rank's runtime, import the program (its top level runs as
// this rank, then its default export if it is a function), and tell the node how it ended.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { DONE, rankBase, STATE, bump } from './board.js';
import { install, startTogether } from './api.js';
import { Rank, RunStopped } from './rank.js';
import type { RankInit, RankRequest } from './protocol.js';
import { ThreadTraceWriter } from '../trace/writer.js';
import { setRunOrigin, wallNs } from '../trace/clock.js';
import { hideCollector } from '../core/collector.js';

const { init, port } = workerData as { init: RankInit; port: MessagePort };
process.setSourceMapsEnabled(true);
hideCollector();
setRunOrigin(init.origin);
const trace = init.trace ? ThreadTraceWriter.open(init.trace.dir, init.node, init.trace.thread) : undefined;
const rank = new Rank(init, port, trace, wallNs);
install(rank);

/**
 * How the rank ended, told to the node before the rank shows DONE on the board: the node never
 * sees every rank done or parked while this message is still on its way (it would call a hang).
 */
function finish(m: RankRequest): void {
  trace?.flush();
  trace?.close();
  rank.post(m);
  rank.ended();
  Atomics.store(rank.board, rankBase(rank.rank) + STATE, DONE);
  bump(rank.board);
}

try {
  const mod = (await import(pathToFileURL(init.program).href)) as { default?: unknown };
  if (typeof mod.default === 'function') {
    startTogether();
    await (mod.default as (args: string[]) => unknown)(init.args);
  }
  // the program's last puts are in place before the rank says it is done
  rank.completePuts();
  finish({ k: 'done', id: 0, rank: rank.rank });
} catch (e) {
  if (!(e instanceof RunStopped)) {
    const message = e instanceof Error ? (e.name === 'SpmdError' ? e.message : `rank ${rank.rank}: ${e.stack ?? e.message}`) : `rank ${rank.rank}: ${String(e)}`;
    finish({ k: 'fault', id: 0, rank: rank.rank, message });
  } else {
    finish({ k: 'done', id: 0, rank: rank.rank });
  }
}
parentPort?.close();
