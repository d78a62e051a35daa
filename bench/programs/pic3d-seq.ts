// The sequential baseline of pic3d with the TypeScript kernels, in a fresh process as the C++ one
// (pic3d_seq.cpp) is: the initial cloud of examples/pic3d/model.ts and the F³ subdomains run one
// after another in a plain loop (examples/pic3d/sequential.ts), no runtime. A fresh process and
// Node's default flags, as a user runs a sequential TypeScript program: run inside the bench's
// process, the kernels were already optimised from the previous round and the baseline read
// faster than a sequential run is. Prints "<seconds> <sum of the x coordinates> <CPU seconds>"
// (timed: the cloud, the steps and the final summaries the program computes, driver.ts
// summarizeBundles; the CPU time is the one load does not stretch).
//   node dist/bench/programs/pic3d-seq.js N F NP NT K
import { badParams, initialCloud, REC, type Params } from '../../examples/pic3d/model.js';
import { incomingBundles, runSequential } from '../../examples/pic3d/sequential.js';
import { SUMMARY, summarizeBundles } from '../../examples/pic3d/driver.js';

const [N, F, NP, NT, K] = process.argv.slice(2).map(Number);
const p: Params = { N: N!, F: F!, NP: NP!, NT: NT!, K: K! };
const bad = process.argv.length !== 7 || [N, F, NP, NT, K].some((x) => !Number.isInteger(x)) ? 'five integers expected' : badParams(p);
if (bad) {
  process.stderr.write(`usage: pic3d-seq N F NP NT K (${bad})\n`);
  process.exit(2);
}
const t0 = performance.now(), c0 = process.cpuUsage();
// the program's last CFs: every subdomain's summary from the particles arriving at it
let summed = 0;
const summaries = (bundles: readonly (readonly Float64Array[])[]): void => {
  const F = p.F, s = new Float64Array(SUMMARY);
  for (let a = 0; a < F; a++) for (let b = 0; b < F; b++) for (let c = 0; c < F; c++) {
    s.fill(0);
    summarizeBundles(p.N, F, p.NP, a, b, c, null, incomingBundles(bundles, F, a, b, c), s);
    summed += s[0]!;
  }
};
const parts = runSequential(p, initialCloud(p.NP), { onEnd: summaries });
const secs = (performance.now() - t0) / 1000;
if (summed !== p.NP) {
  process.stderr.write(`pic3d-seq: ${summed} particles summed, ${p.NP} at the start\n`);
  process.exit(1);
}
const c = process.cpuUsage(c0);
let sx = 0;
for (let o = 0; o < parts.length; o += REC) sx += parts[o + 2]!;
process.stdout.write(`${secs} ${sx} ${(c.user + c.system) / 1e6}\n`);
