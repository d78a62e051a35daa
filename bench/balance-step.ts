// One measurement of the balancing step in a fresh process (bench/balance.ts runs it): load a
// profile saved with v8.serialize, then `load` (nothing more: the baseline of memory), `seed` (the
// seed's algorithm at a fixed quantum — weights, quanta, formula 6, the entries of the file: the
// step the target is about) or `default` (all `luna balance` does by default: the automatic
// quantum over replays of the whole graph, the guard). Or, from a trace directory, `decode`
// (readProfile: the columnar reading; with LUNA_TRACE_WORKER=1 the merge in a worker thread) and
// `floor` (the reader and merge alone, every row handed to an empty sink). Prints
// {ms, cpuMs, peakRssMiB, moved} (and, for `default`, the step's own account of its phases).
import { readFileSync } from 'node:fs';
import { deserialize } from 'node:v8';
import { balance } from '../src/analysis/balance/balance.js';
import { weightsOf, withDurations } from '../src/analysis/balance/weights.js';
import { lastEvent, quantize } from '../src/analysis/balance/quantize.js';
import { seedBalance } from '../src/analysis/balance/seed.js';
import { readProfile, type Profile } from '../src/analysis/balance/profile.js';
import { nameAt } from '../src/analysis/balance/names.js';
import { readTraceColumns } from '../src/trace/merge.js';

const [file, mode] = process.argv.slice(2);
let ms = 0, cpuMs = 0, moved = 0;
let phases: Record<string, number> | undefined;
if (mode === 'decode' || mode === 'floor') {
  const t0 = performance.now(), c0 = process.cpuUsage();
  if (mode === 'decode') moved = readProfile(file!).n;
  else readTraceColumns(file!).runs((_, from, to) => { moved += to - from; });
  ms = performance.now() - t0;
  const cu = process.cpuUsage(c0);
  cpuMs = (cu.user + cu.system) / 1000;
  console.log(JSON.stringify({ ms, cpuMs, peakRssMiB: process.resourceUsage().maxRSS / 1024, moved, phases }));
  process.exit(0);
}
const p = deserialize(readFileSync(file!)) as Profile;
if (mode !== 'load') {
  const t0 = performance.now(), c0 = process.cpuUsage();
  if (mode === 'seed') {
    const w = withDurations(p, weightsOf(p, 'cpu', false)), node = p.node.slice();
    seedBalance(w, quantize(w, lastEvent(w) / 100), node, p.nodes);
    const cfs: Record<string, number> = {};
    for (let c = 0; c < p.n; c++) if (node[c] !== p.node[c]) { cfs[nameAt(p.gid, c)] = node[c]!; moved++; }
  } else {
    const r = balance(p, {});
    moved = r.moved;
    phases = r.timeMs;
  }
  ms = performance.now() - t0;
  const cu = process.cpuUsage(c0);
  cpuMs = (cu.user + cu.system) / 1000;
}
console.log(JSON.stringify({ ms, cpuMs, peakRssMiB: process.resourceUsage().maxRSS / 1024, moved, phases }));
