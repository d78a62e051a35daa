// examples/pic3d: the model's exact quantities, the kernels against the sequential reference on
// several decompositions (pure computation, milliseconds), their faults, and the program on
// in-process nodes with its bad arguments. The program's normal runs are cases.ts's.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cellOf, cloudPart, cloudRange, draw, initialCloud, OMEGA, particleMass, R0, REC, totalMass, wrap, type Params } from '../../examples/pic3d/model.js';
import { c_combine, c_combine4, c_cut, c_init_part, c_init_part_x, c_pick, c_pick_all, c_summary0, SUMMARY, summarizeBundles } from '../../examples/pic3d/driver.js';
import { c_deposit_all, c_layer_density_e, c_layer_density_f } from '../../examples/pic3d/fragments.js';
import { blockFace } from '../../examples/pic3d/slabs.js';
import { DF } from '../../src/ucode/df.js';
import { simulate } from '../../examples/pic3d/reference.js';
import { incomingBundles, runSequential } from '../../examples/pic3d/sequential.js';
import { KernelError, push } from '../../examples/pic3d/kernels.js';
import { deepScratch, densityHalo, haloDepth, jacobiDeep, rhoRadius, sweepGroups } from '../../examples/pic3d/halo.js';
import { runFile } from '../runtime/files.js';
import { runInProcess, type Ucodes } from '../runtime/harness.js';
import { loadProgram } from '../../src/program/load.js';
import { choosePolicy } from '../../src/runtime/policy/select.js';
import { pathToFileURL } from 'node:url';

/** Particle records by id. */
function byId(parts: Float64Array): Map<number, Float64Array> {
  const m = new Map<number, Float64Array>();
  for (let o = 0; o < parts.length; o += REC) m.set(parts[o]!, parts.subarray(o, o + REC));
  return m;
}

describe('pic3d model', () => {
  test('the total mass is exact in any summation order', () => {
    for (const NP of [1, 2, 3, 4, 5, 999, 1000, 12345]) {
      let up = 0, down = 0;
      for (let p = 0; p < NP; p++) up += particleMass(p, NP);
      for (let p = NP - 1; p >= 0; p--) down += particleMass(p, NP);
      assert.equal(up, totalMass(NP), `NP=${NP}`);
      assert.equal(down, totalMass(NP), `NP=${NP}`);
      assert.ok(totalMass(NP) > (NP < 4 ? 0.2 : 0.4) && totalMass(NP) <= 1, `NP=${NP}: total ${totalMass(NP)}`);
    }
  });

  test('the initial cloud: ids in order, inside the ball, the same every time', () => {
    const a = initialCloud(500), b = initialCloud(500);
    assert.deepEqual(a, b);
    for (let o = 0, p = 0; o < a.length; o += REC, p++) {
      assert.equal(a[o], p);
      const r = Math.hypot(a[o + 2]! - 0.5, a[o + 3]! - 0.5, a[o + 4]! - 0.5);
      assert.ok(r <= R0 + 1e-15, `particle ${p} at radius ${r}`);
    }
  });

  test('wrap and cellOf at the edges of the periodic cube', () => {
    assert.equal(wrap(-1e-18), 0); // -1e-18 + 1 rounds to 1, which is 0 again
    assert.equal(wrap(1), 0);
    assert.equal(wrap(-0.25), 0.75);
    assert.equal(wrap(1.25), 0.25);
    assert.equal(cellOf(1 - 2 ** -53, 100), 99);
    assert.equal(cellOf(0, 100), 0);
    assert.equal(cellOf(0.5, 8), 4);
  });

  test('the initial cloud is drawn by counter: particle p from draw(p, 0, 1, 2, …), three draws a try, rejected outside the ball', () => {
    // cloudPart writes the generator out in its loop; this is the same cloud drawn through draw
    const NP = 3000, cloud = initialCloud(NP);
    let tries = 0;
    for (let p = 0; p < NP; p++) {
      let dx: number, dy: number, dz: number, j = 0;
      do {
        dx = (2 * draw(p, j++) - 1) * R0; dy = (2 * draw(p, j++) - 1) * R0; dz = (2 * draw(p, j++) - 1) * R0;
        tries++;
      } while (dx * dx + dy * dy + dz * dz > R0 * R0);
      const want = [p, particleMass(p, NP), 0.5 + dx, 0.5 + dy, 0.5 + dz, -OMEGA * dy, OMEGA * dx, 0];
      assert.deepEqual([...cloud.subarray(p * REC, (p + 1) * REC)], want, `particle ${p}`);
    }
    // a uniform ball in the cube is accepted with probability π/6: about 1.91 tries a particle
    assert.ok(tries / NP > 1.8 && tries / NP < 2.05, `${tries / NP} tries a particle`);
    // no two particles alike (the draws of different particles do not overlap)
    assert.equal(new Set(Array.from({ length: NP }, (_, p) => cloud[p * REC + 2])).size, NP);
  });

  test('any split of the ids makes the same cloud: the parts put one after another', () => {
    for (const NP of [1, 7, 1000, 4099]) {
      const whole = initialCloud(NP);
      for (const B of [1, 2, 3, 4, 7]) {
        const got = new Float64Array(NP * REC);
        let ids = 0;
        for (let q = 0; q < B; q++) {
          const [lo, hi] = cloudRange(NP, q, B);
          assert.equal(lo, ids, `NP=${NP} B=${B} part ${q} starts where the last ended`);
          got.set(cloudPart(NP, lo, hi), lo * REC);
          ids = hi;
        }
        assert.equal(ids, NP);
        assert.deepEqual(got, whole, `NP=${NP} in ${B} parts`);
      }
    }
  });
});

/** An input DF holding an output's value. */
const input = (out: DF): DF => new DF('in', out.value, false);
const output = (): DF => new DF('out', undefined, true);

describe('pic3d initial cloud in parts, through its ucodes', () => {
  // every subdomain's first particles from 4 parts, as pick_all, cut and pick, and deposit_all take
  // them, against one sorted cloud (one part of one): the same records, the same order, the same bits
  for (const [N, F, NP] of [[8, 2, 3000], [12, 3, 5000], [8, 4, 700]] as const) {
    test(`N=${N}, ${F}x${F}x${F} subdomains, ${NP} particles`, () => {
      const part = (q: number, B: number): DF => { const d = output(); c_init_part(N, F, NP, 1, 1, q, B, d); return input(d); };
      const one = part(0, 1), parts = [0, 1, 2, 3].map((q) => part(q, 4));
      const S = F * F * F, whole = one.getFloat64Array();
      const slabs = Array.from({ length: F }, (_, a) => parts.map((p) => { const d = output(); c_cut(F, a, p, d); return input(d); }));
      let total = 0;
      for (let a = 0; a < F; a++) for (let b = 0; b < F; b++) for (let c = 0; c < F; c++) {
        const s = (a * F + b) * F + c;
        const want = whole.subarray(S + 1 + whole[s]! * REC, S + 1 + whole[s + 1]! * REC);
        total += want.length / REC;
        const picked = output(), cut = output(), depS = output();
        c_pick_all(F, a, b, c, ...parts, picked, output());
        c_pick(F, b, c, ...slabs[a]!, cut, output());
        c_deposit_all(N, F, a, b, c, ...parts, depS, output(), output());
        for (const [how, got] of [['pick_all', picked], ['cut and pick', cut], ['deposit_all', depS]] as const)
          assert.deepEqual(input(got).getFloat64Array(), want, `subdomain (${a}, ${b}, ${c}) by ${how}`);
      }
      assert.equal(total, NP);
    });
  }

  test('several nodes: each node\'s parts of its own layers (init_part_x) give every subdomain the records of one sorted cloud; a node without layers draws none', () => {
    const N = 8, F = 4, NP = 900, S = F * F * F;
    const one = output();
    c_init_part(N, F, NP, 1, 1, 0, 1, one);
    const whole = input(one).getFloat64Array();
    // 3 nodes on 4 layers ([0, 2), [2, 3), [3, 4)) and a node with none ([4, 4))
    for (const [x0, x1] of [[0, 2], [2, 3], [3, 4], [4, 4]] as const) {
      const parts = [0, 1, 2, 3].map((q) => { const d = output(); c_init_part_x(N, F, NP, 1, 1, q, 4, x0, x1, d); return input(d); });
      for (let s = 0; s < S; s++) {
        const a = Math.floor(s / (F * F)), b = Math.floor(s / F) % F, c = s % F, got = output();
        c_pick_all(F, a, b, c, ...parts, got, output());
        const want = a >= x0 && a < x1 ? whole.subarray(S + 1 + whole[s]! * REC, S + 1 + whole[s + 1]! * REC) : new Float64Array(0);
        assert.deepEqual(input(got).getFloat64Array(), want, `layers [${x0}, ${x1}), subdomain ${s}`);
      }
    }
    assert.throws(() => c_init_part_x(N, F, NP, 1, 1, 0, 4, 3, 2, output()), /cloud layers \[3, 2\) of F=4/);
    assert.throws(() => c_init_part_x(N, F, NP, 1, 1, 0, 4, 0, 5, output()), /cloud layers \[0, 5\) of F=4/);
  });

  test('a DF beyond the parts holds no particle; a part that cannot exist is refused, named', () => {
    const d = output();
    c_init_part(8, 2, 100, 1, 1, 3, 2, d);
    assert.deepEqual(input(d).getFloat64Array(), new Float64Array(9));
    assert.throws(() => c_init_part(8, 2, 100, 1, 1, -1, 4, output()), /cloud part -1 of 4/);
    assert.throws(() => c_init_part(8, 2, 100, 1, 1, 0, 0, output()), /cloud part 0 of 0/);
  });
});

describe('pic3d deep halos', () => {
  /** Every step's last φ of every subdomain, and the final particles, of a sequential run. */
  function run(p: Params, depth?: number): { phis: Float64Array[][]; parts: Float64Array } {
    const phis: Float64Array[][] = [];
    const parts = runSequential(p, initialCloud(p.NP), { depth, onPhi: (_t, phi) => phis.push(phi.map((x) => x.slice())) });
    return { phis, parts };
  }

  for (const [N, F, K] of [[6, 1, 3], [8, 2, 5], [9, 3, 4], [8, 4, 3], [12, 3, 7]] as const) {
    test(`N=${N}, ${F}x${F}x${F} subdomains, K=${K}: φ of depth d is the bits of one face exchange per sweep`, () => {
      const p: Params = { N, F, NP: 600, NT: 3, K };
      const base = run(p);
      assert.ok(base.phis.every((step) => step.some((phi) => phi.some((v) => v !== 0))), 'φ is zero: the comparison would prove nothing');
      for (const d of [1, 2, 3, 4, K]) {
        const deep = run(p, d);
        assert.equal(deep.phis.length, p.NT);
        for (let t = 0; t < p.NT; t++)
          for (let s = 0; s < F ** 3; s++) {
            const a = deep.phis[t]![s]!, b = base.phis[t]![s]!;
            for (let i = 0; i < b.length; i++)
              if (!Object.is(a[i], b[i])) assert.fail(`d=${d} step ${t} subdomain ${s} node ${i}: φ ${a[i]} vs ${b[i]}`);
          }
        assert.deepEqual(deep.parts, base.parts, `d=${d}: the particles differ`);
      }
    });
  }

  // The step's last group computing g at the upper ghost layer too (the push in the same fragment):
  // each ghost node must be the bits the neighbour above computes at its own node.
  for (const [n, d, sweeps] of [[3, 1, 1], [6, 4, 4], [8, 5, 3]] as const) {
    test(`n=${n}, depth ${d}, ${sweeps} sweeps: g at the upper ghost layer is the upper neighbours' own g, bit for bit`, () => {
      const F = 3, N = n * F, NP = 1000, n1 = n + 1, r = rhoRadius(d, n);
      assert.equal(r, d + 1);
      let seed = 7;
      const rnd = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5;
      const id = (a: number, b: number, c: number): number => (((a + F) % F) * F + (b + F) % F) * F + (c + F) % F;
      const around = (a: number, b: number, c: number): number[] =>
        Array.from({ length: 27 }, (_, q) => id(a + Math.floor(q / 9) - 1, b + (Math.floor(q / 3) % 3) - 1, c + (q % 3) - 1));
      const phi = Array.from({ length: F ** 3 }, () => Float64Array.from({ length: n ** 3 }, rnd));
      const dep = Array.from({ length: F ** 3 }, () => Float64Array.from({ length: n1 ** 3 }, rnd));
      const boxes = deepScratch(n, d);
      const own: Float64Array[] = [];
      const rhoOf = (a: number, b: number, c: number): Float64Array => {
        const rho = new Float64Array((n + 2 * r) ** 3);
        densityHalo(N, F, r, around(a, b, c).map((q) => dep[q]!), rho);
        return rho;
      };
      for (let a = 0; a < F; a++) for (let b = 0; b < F; b++) for (let c = 0; c < F; c++) {
        own[id(a, b, c)] = new Float64Array(3 * n ** 3);
        jacobiDeep(N, F, NP, sweeps, rhoOf(a, b, c), r, around(a, b, c).map((q) => phi[q]!), new Float64Array(n ** 3), own[id(a, b, c)]!, ...boxes);
      }
      const g = new Float64Array(3 * n1 ** 3), out = new Float64Array(n ** 3), ref = new Float64Array(n ** 3);
      jacobiDeep(N, F, NP, sweeps, rhoOf(1, 1, 1), r, around(1, 1, 1).map((q) => phi[q]!), out, g, ...boxes, true);
      jacobiDeep(N, F, NP, sweeps, rhoOf(1, 1, 1), r, around(1, 1, 1).map((q) => phi[q]!), ref, null, ...boxes);
      assert.deepEqual(out, ref, 'φ differs with the deeper box');
      let ghosts = 0;
      for (let i = 0; i < n1; i++) for (let j = 0; j < n1; j++) for (let k = 0; k < n1; k++) {
        // the node's owner: (1, 1, 1) or a neighbour above, and its local coordinates there
        const src = own[id(1 + (i === n ? 1 : 0), 1 + (j === n ? 1 : 0), 1 + (k === n ? 1 : 0))]!;
        const q = ((i % n) * n + (j % n)) * n + (k % n);
        if (i === n || j === n || k === n) ghosts++;
        for (let x = 0; x < 3; x++)
          if (!Object.is(g[3 * ((i * n1 + j) * n1 + k) + x], src[3 * q + x])) assert.fail(`node (${i}, ${j}, ${k}) component ${x}: ${g[3 * ((i * n1 + j) * n1 + k) + x]} vs ${src[3 * q + x]}`);
      }
      assert.equal(ghosts, n1 ** 3 - n ** 3);
      assert.ok(g.some((v) => v !== 0));
    });
  }

  test('the depth is at most the subdomain width less one and the sweeps; groups cover the sweeps', () => {
    assert.equal(haloDepth(5, 25, 10), 5);
    assert.equal(haloDepth(5, 3, 10), 2);
    assert.equal(haloDepth(5, 2, 10), 1);
    assert.equal(haloDepth(5, 25, 2), 2);
    assert.equal(haloDepth(0, 25, 10), 1);
    assert.equal(sweepGroups(10, 3), 4);
    assert.equal(sweepGroups(10, 5), 2);
    assert.equal(sweepGroups(10, 1), 10);
  });
});

describe('pic3d kernels against the sequential reference', () => {
  for (const [N, F] of [[6, 1], [8, 2], [9, 3], [8, 4]] as const) {
    test(`N=${N}, ${F}x${F}x${F} subdomains`, () => {
      const p: Params = { N, F, NP: 700, NT: 4, K: 3 };
      const ref = byId(simulate(p, initialCloud(p.NP)).parts);
      const got = runSequential(p, initialCloud(p.NP));
      assert.equal(got.length, p.NP * REC);
      const ids = new Set<number>();
      let mass = 0, moved = 0;
      for (let o = 0; o < got.length; o += REC) {
        const id = got[o]!;
        assert.ok(!ids.has(id), `particle ${id} twice`);
        ids.add(id);
        mass += got[o + 1]!;
        const r = ref.get(id)!;
        assert.ok(r, `particle ${id} unknown to the reference`);
        for (let k = 2; k < REC; k++) {
          let d = Math.abs(got[o + k]! - r[k]!);
          if (k < 5 && d > 0.5) d = 1 - d;
          assert.ok(d <= 1e-12, `particle ${id} field ${k}: ${got[o + k]} vs the reference's ${r[k]}`);
        }
        const start = initialCloud(p.NP).subarray(id * REC, id * REC + REC);
        if (Math.abs(start[2]! - got[o + 2]!) > 1e-6) moved++;
      }
      assert.equal(mass, totalMass(p.NP));
      assert.ok(moved > p.NP / 2, `only ${moved} particles moved`);
    });
  }
});

describe('pic3d: the final summaries the sequential baselines time', () => {
  test('summed over the final bundles of a sequential run, every particle once in its own subdomain; a misplaced one named', () => {
    const p: Params = { N: 8, F: 2, NP: 500, NT: 3, K: 2 };
    let last: readonly (readonly Float64Array[])[] = [];
    runSequential(p, initialCloud(p.NP), { onEnd: (b) => { last = b; } });
    assert.equal(last.length, p.F ** 3, 'the bundles of every subdomain');
    const F = p.F, arriving = (a: number, b: number, c: number): Float64Array[] => incomingBundles(last, F, a, b, c);
    let count = 0, mass = 0, ids = 0;
    for (let a = 0; a < F; a++) for (let b = 0; b < F; b++) for (let c = 0; c < F; c++) {
      const s = new Float64Array(SUMMARY);
      summarizeBundles(p.N, F, p.NP, a, b, c, null, arriving(a, b, c), s);
      count += s[0]!; mass += s[1]!; ids += s[2]!;
    }
    assert.equal(count, p.NP);
    assert.equal(mass, totalMass(p.NP));
    assert.equal(ids, (p.NP * (p.NP - 1)) / 2);
    // a particle of subdomain 0 handed to subdomain (1, 1, 1)
    const wrong = arriving(1, 1, 1);
    const stray = arriving(0, 0, 0).find((x) => x.length > 0)!;
    wrong.push(stray.subarray(0, REC));
    assert.throws(() => summarizeBundles(p.N, F, p.NP, 1, 1, 1, null, wrong, new Float64Array(SUMMARY)),
      (e: unknown) => e instanceof Error && new RegExp(`particle ${stray[0]} ended in subdomain \\(1, 1, 1\\), not its own`).test(e.message));
  });
});

describe('pic3d kernel faults', () => {
  test('a particle jumping over a subdomain is refused, named', () => {
    const N = 8, F = 4, n = 2;
    const g = Array.from({ length: 8 }, () => new Float64Array(3 * n * n * n));
    // particle 7 in subdomain (1, 1, 1) = [0.25, 0.5)³ flying +x by 0.5 in a step, into subdomain 3
    const part = new Float64Array([7, 1, 0.3, 0.3, 0.3, 50, 0, 0]);
    assert.throws(() => push(N, F, 1, 1, 1, g, [part]), (e: unknown) =>
      e instanceof KernelError && /particle 7 moved more than one subdomain in a step \(from 1 to 3 of 4\)/.test(e.message));
    // by 0.25 it reaches the neighbour: accepted, in the +x bundle
    const ok = push(N, F, 1, 1, 1, g, [new Float64Array([7, 1, 0.3, 0.3, 0.3, 25, 0, 0])]);
    assert.equal(ok.count[(2 * 3 + 1) * 3 + 1], 1);
  });
});

describe('pic3d Poisson sweeps on slabs', () => {
  /** Each subdomain's final particles (PIC3D_DUMP) of a run of the program, by file name. */
  async function finalParticles(file: string, dir: string, tag: string, o: { nodes: number; lanes: number; defines: string[]; args: string[] }): Promise<Map<string, Buffer>> {
    const out = join(dir, tag), before = process.env.PIC3D_DUMP;
    mkdirSync(out);
    process.env.PIC3D_DUMP = out;
    try {
      const r = await runFile(file, o);
      assert.equal(r.ok, true, `${tag}: ${r.message}`);
      assert.match(r.stdout.at(-1) ?? '', /^pic3d: OK .*momentum and positions match the reference\)$/, tag);
      // every req_count is the number of reads: no DF is held to the end (a slab's φ was, once)
      for (const n of r.nodes) assert.deepEqual(n.rt.unspentKeys(), [], `${tag}: node ${n.rank} held DFs to the end`);
    } finally {
      if (before === undefined) delete process.env.PIC3D_DUMP; else process.env.PIC3D_DUMP = before;
    }
    const files = new Map<string, Buffer>();
    for (const f of readdirSync(out)) files.set(f, readFileSync(join(out, f)));
    return files;
  }

  test('the particles are the bits of the subdomain sweeps: 1, 2, 3 (uneven) and 4 slabs, one and several groups, 1, 2 and 3 nodes', async () => {
    // 4 layers in 3 slabs are 1, 1 and 2 layers; K = 7 at depth 3 is a first, a middle and a last
    // group a step; depth 10 one group (and the default, 2 slabs on one node); 2 and 3 in-process
    // nodes put the slabs on several, reading their neighbours' edges across the border (layers of
    // N/F = 4 planes hold edges of depth + 2 up to depth 2: 2 slabs at depth 2, 3 uneven slabs at
    // depth 1 with 7 groups a step, F = 3 on 3 nodes where layer 2 has a node but no slab) or whole
    // (WHOLE_SLABS; depth 3, too deep for edges); F = 4 on 1, 2 and 3 nodes the light columns'
    // deposits and pushes by row and the summaries by row (and once a CF a light column,
    // COLUMN_GRAIN); F = 4 deposits by column (and once a subdomain,
    // SUBDOMAIN_DEPOSITS; on one node the first step's by column from the cloud's parts too, and once
    // a subdomain, SUBDOMAIN_FIRST_DEPOSITS), F = 2, 3 a subdomain. On one node with one group a step
    // the groups sum the density planes they read from the deposit blocks (and the layers' densities
    // as CFs of their own with LAYER_DENSITIES). Across a node border a layer's density reads the
    // layer below's deposit faces alone (slabs.fah FACE_UP): by column, by subdomain (F = 3;
    // SUBDOMAIN_DEPOSITS on 2 nodes), F = 4 on 3 nodes (layer 3 alone on a node with no slab, reading
    // faces from one node and sending them to another), F = 2 on 2 nodes (the layer below is the
    // layer above). TypeScript kernels on some of the runs (slower), C++ on all
    const dir = mkdtempSync(join(tmpdir(), 'luna-pic3d-slabs-'));
    // the subdomain sweeps' particles, by program, placement and arguments: several slab forms
    // below compare with the same run (the same inputs give the same bits, which is what is asserted)
    const subs = new Map<string, Map<string, Buffer>>();
    try {
      for (const [nodes, lanes, F, K, defines, ts] of [
        [1, 2, 4, 7, ['POISSON_SLABS=3', 'SLAB_HALO=3'], true], [1, 1, 4, 10, ['POISSON_SLABS=1'], false], [1, 2, 4, 10, [], false],
        [2, 1, 4, 7, ['POISSON_SLABS=2', 'SLAB_HALO=2'], true], [1, 2, 2, 5, ['POISSON_SLABS=4'], false], [1, 1, 3, 4, ['POISSON_SLABS=2', 'SLAB_HALO=1'], true],
        [1, 2, 4, 10, ['POISSON_SLABS=2', 'SUBDOMAIN_DEPOSITS'], false], [1, 2, 4, 10, ['SUBDOMAIN_FIRST_DEPOSITS'], false], [1, 2, 4, 10, ['COLUMN_GRAIN'], true],
        [1, 2, 4, 10, ['LAYER_DENSITIES'], true],
        [2, 1, 4, 7, ['POISSON_SLABS=3', 'SLAB_HALO=1'], true], [3, 1, 3, 5, ['SLAB_HALO=2'], true], [2, 1, 4, 7, ['WHOLE_SLABS', 'SLAB_HALO=2'], false],
        [2, 1, 4, 7, ['SLAB_HALO=3'], false],
        [3, 1, 4, 7, ['SLAB_HALO=2'], true], [2, 1, 4, 7, ['SUBDOMAIN_DEPOSITS', 'SLAB_HALO=2'], false], [2, 1, 2, 5, ['SLAB_HALO=2'], false],
      ] as const) {
        for (const file of ts ? ['examples/pic3d-cpp/pic3d.fa', 'examples/pic3d/pic3d.fa'] : ['examples/pic3d-cpp/pic3d.fa']) {
          const N = 4 * F, args = [String(N), String(F), '3000', '3', String(K), '1', String(nodes)];
          const tag = `${file.includes('cpp') ? 'cpp' : 'ts'}-${nodes}x${lanes}-F${F}-K${K}-${defines.join('-')}`;
          const sub = `${file} ${nodes}x${lanes} ${args.join(' ')}`;
          let want = subs.get(sub);
          if (!want) subs.set(sub, want = await finalParticles(file, dir, `${tag}-sub`, { nodes, lanes, defines: ['SUBDOMAIN_SWEEPS'], args }));
          const got = await finalParticles(file, dir, `${tag}-slab`, { nodes, lanes, defines: [...defines], args });
          assert.equal(got.size, F * F * F, tag);
          for (const [f, bytes] of want) assert.ok(got.get(f)?.equals(bytes), `${tag}: subdomain ${f} differs`);
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a layer\'s density from the layer below\'s upper faces alone is the bits of its whole blocks: a subdomain\'s face a DF, a column\'s 4 a DF', () => {
    // blocks of random values (every node's sum rounds differently in another order), F = 2 (the
    // layer below is the layer above), 3 and 4; the 16 DFs of each list padded as slabs.fah pads them
    let seed = 7;
    const rnd = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 1e3 + 1 / 3;
    const hold = (a: Float64Array): DF => { const d = output(); d.createFloat64Array(a.length).set(a); return input(d); };
    for (const F of [2, 3, 4]) {
      const N = 6 * F, n = N / F, n1 = n + 1, E = 3;
      const blocks = Array.from({ length: F * F * F }, () => Float64Array.from({ length: n1 * n1 * n1 }, rnd));
      const list = (f: (B: number, C: number) => DF): DF[] => Array.from({ length: 16 }, (_, i) => f(Math.floor(i / 4) % F, (i % 4) % F));
      for (let A = 0; A < F; A++) {
        const Am = (A + F - 1) % F, blk = (a: number, B: number, C: number): Float64Array => blocks[(a * F + B) * F + C]!;
        const own = list((B, C) => hold(blk(A, B, C)));
        const want = [output(), output(), output()];
        c_layer_density_e(N, F, A, E, 1, 1, ...own, ...list((B, C) => hold(blk(Am, B, C))), ...want);
        const faces = [list((B, C) => hold(blockFace(blk(Am, B, C), n)))];
        if (F === 4) {
          const cols = [0, 1, 2, 3].map((B) => { const f = new Float64Array(4 * n1 * n1); for (let C = 0; C < 4; C++) f.set(blockFace(blk(Am, B, C), n), C * n1 * n1); return hold(f); });
          faces.push(list((B) => cols[B]!));
        }
        faces.forEach((below, cols) => {
          const got = [output(), output(), output()];
          c_layer_density_f(N, F, A, E, 1, 1, cols, ...own, ...below, ...got);
          for (let k = 0; k < 3; k++) assert.deepEqual(input(got[k]!).getFloat64Array(), input(want[k]!).getFloat64Array(), `F=${F}, layer ${A}, ${cols ? 'column' : 'subdomain'} faces, output ${k}`);
        });
      }
    }
    assert.throws(() => c_layer_density_f(8, 2, 0, 3, 0, 0, 1, ...Array.from({ length: 32 }, () => hold(new Float64Array(125))), output(), output(), output()), /faces by column take F = 4/);
  });

  test('no slab is refused, named; F > 4 sweeps on the subdomains', async () => {
    for (const file of ['examples/pic3d/pic3d.fa', 'examples/pic3d-cpp/pic3d.fa']) {
      const none = await runFile(file, { defines: ['POISSON_SLABS=0'], args: ['8', '4', '200', '1', '2', '0', '1'] });
      assert.equal(none.ok, false, file);
      assert.match(none.message ?? '', /POISSON_SLABS=0: the Poisson sweeps need at least one slab/, file);
      const wide = await runFile(file, { lanes: 2, args: ['10', '5', '800', '2', '3', '1', '1'] });
      assert.equal(wide.ok, true, `${file}: ${wide.message}`);
      assert.deepEqual(wide.stdout, ['pic3d: OK (N=10, 5x5x5 subdomains, 800 particles, 2 steps, 3 sweeps; mass exact, momentum and positions match the reference)'], file);
    }
  });
});

describe('pic3d summaries summed 4 at a time', () => {
  // pic3d.fa sums the subdomains' summaries by column, layer and in all with combine4 (F ≤ 4), the
  // import's 4 values padded with repeats when F < 4: the first k alone count, as the chain of
  // combines from an empty summary counts them (sums, then the maxima of the deviations)
  const summary = (i: number): DF => {
    const d = output(), s = d.createFloat64Array(11);
    s.set([100 + i, 0.125 * (i + 1), 1000 * i + 7, 0.1 * i, -0.3 * i, 1 / (i + 3), 0, 0, 0, 1e-12 * (i % 3), 1e-13 * (4 - i)]);
    return input(d);
  };
  for (const k of [1, 2, 3, 4]) {
    test(`k = ${k}`, () => {
      const ys = [0, 1, 2, 3].map(summary);
      const pad = [0, 1, 2, 3].map((i) => ys[i % k]!);
      const tree = output();
      c_combine4(k, ...pad, tree);
      let acc = output();
      c_summary0(acc);
      for (let i = 0; i < k; i++) { const next = output(); c_combine(input(acc), ys[i]!, next); acc = next; }
      assert.deepEqual(input(tree).getFloat64Array(), input(acc).getFloat64Array());
      assert.equal(input(tree).getFloat64Array()[0], [0, 1, 2, 3].slice(0, k).reduce((n, i) => n + 100 + i, 0));
    });
  }

  test('every F the tree takes (1–4, padded) and the chain beyond it (F = 5): nothing lost, nothing counted twice', async () => {
    for (const file of ['examples/pic3d/pic3d.fa', 'examples/pic3d-cpp/pic3d.fa'])
      for (const [N, F] of [[4, 1], [6, 2], [9, 3], [8, 4], [10, 5]] as const) {
        const r = await runFile(file, { lanes: 2, args: [String(N), String(F), '400', '1', '2', '1', '1'] });
        assert.equal(r.ok, true, `${file} F=${F}: ${r.message}`);
        assert.deepEqual(r.stdout, [`pic3d: OK (N=${N}, ${F}x${F}x${F} subdomains, 400 particles, 1 steps, 2 sweeps; mass exact, momentum and positions match the reference)`], `${file} F=${F}`);
      }
  });
});

describe('pic3d program', () => {
  test('on 2 in-process nodes, x-slabs split between them, the reference matched', async () => {
    const r = await runFile('examples/pic3d/pic3d.fa', { nodes: 2, lanes: 1, args: ['8', '4', '300', '2', '2', '1', '2'] });
    assert.equal(r.ok, true, r.message);
    assert.deepEqual(r.stdout, ['pic3d: OK (N=8, 4x4x4 subdomains, 300 particles, 2 steps, 2 sweeps; mass exact, momentum and positions match the reference)']);
  });

  test('the subdomains\' sweep groups of every kind (first, middle, last: K = 7 at depth 3) on 3 in-process nodes, both kernel languages', async () => {
    for (const file of ['examples/pic3d/pic3d.fa', 'examples/pic3d-cpp/pic3d.fa']) {
      const r = await runFile(file, { nodes: 3, lanes: 1, defines: ['SUBDOMAIN_SWEEPS'], args: ['12', '3', '800', '2', '7', '1', '3'] });
      assert.equal(r.ok, true, `${file}: ${r.message}`);
      assert.deepEqual(r.stdout, ['pic3d: OK (N=12, 3x3x3 subdomains, 800 particles, 2 steps, 7 sweeps; mass exact, momentum and positions match the reference)'], file);
    }
  });

  test('the cloud made in parts comes back as one sorted cloud, on 1, 2 and 3 in-process nodes, both kernel languages', async () => {
    // no step: each subdomain's final summary dumps the particles it took from the parts (pick_all
    // on one node, cut and pick on several), compared with one cloud sorted by subdomain; one node
    // in 4 parts (its default), 1 and 3 (the DFs beyond them empty)
    const dir = mkdtempSync(join(tmpdir(), 'luna-pic3d-parts-'));
    const before = process.env.PIC3D_DUMP;
    try {
      for (const file of ['examples/pic3d/pic3d.fa', 'examples/pic3d-cpp/pic3d.fa'])
        for (const [nodes, N, F, defines] of [[1, 8, 2, []], [1, 8, 2, ['CLOUD=1']], [1, 8, 2, ['CLOUD=3']], [2, 8, 2, []], [3, 9, 3, []]] as const) {
          const NP = 2000, out = join(dir, `${nodes}-${file.includes('cpp') ? 'cpp' : 'ts'}-${defines.join('')}`);
          process.env.PIC3D_DUMP = out;
          mkdirSync(out);
          const r = await runFile(file, { nodes, lanes: 1, defines, args: [String(N), String(F), String(NP), '0', '1', '1', String(nodes)] });
          assert.equal(r.ok, true, `${file} on ${nodes}: ${r.message}`);
          const whole = output();
          c_init_part(N, F, NP, 0, 1, 0, 1, whole);
          const w = input(whole).getFloat64Array(), S = F * F * F;
          for (let a = 0; a < F; a++) for (let b = 0; b < F; b++) for (let c = 0; c < F; c++) {
            const s = (a * F + b) * F + c;
            const f = readFileSync(join(out, `${a}_${b}_${c}.f64`));
            const got = new Float64Array(f.buffer.slice(f.byteOffset, f.byteOffset + f.byteLength));
            assert.deepEqual(got, w.subarray(S + 1 + w[s]! * REC, S + 1 + w[s + 1]! * REC), `${file} on ${nodes} node(s) ${defines.join('')}, subdomain (${a}, ${b}, ${c})`);
          }
        }
    } finally {
      if (before === undefined) delete process.env.PIC3D_DUMP; else process.env.PIC3D_DUMP = before;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('no steps: the initial cloud comes back whole', async () => {
    const r = await runFile('examples/pic3d/pic3d.fa', { args: ['4', '2', '50', '0', '1', '1', '1'] });
    assert.equal(r.ok, true, r.message);
    assert.deepEqual(r.stdout, ['pic3d: OK (N=4, 2x2x2 subdomains, 50 particles, 0 steps, 1 sweeps; mass exact, momentum and positions match the reference)']);
  });

  test('bad parameters stop the run with their reason', async () => {
    const r = await runFile('examples/pic3d/pic3d.fa', { args: ['10', '3', '50', '1', '1', '0', '1'] });
    assert.equal(r.ok, false);
    assert.ok(r.stdout.includes('pic3d: FAILED (N=10 must be a multiple of F=3 >= 1)'), r.stdout.join('\n'));
    // the C++ program's start checks them in C++, in the same words (the run's fault names them)
    const cpp = await runFile('examples/pic3d-cpp/pic3d.fa', { args: ['10', '3', '50', '1', '1', '0', '1'] });
    assert.equal(cpp.ok, false);
    assert.match(cpp.message ?? '', /pic3d: N=10 must be a multiple of F=3 >= 1/);
    const thin = await runFile('examples/pic3d/pic3d.fa', { args: ['4', '4', '50', '1', '1', '0', '1'] });
    assert.equal(thin.ok, false);
    assert.ok(thin.stdout.some((l) => l.startsWith('pic3d: FAILED (N/F=1: a subdomain needs at least 2 grid nodes')), thin.stdout.join('\n'));
  });
});

describe('pic3d priorities', () => {
  /** The ucodes examples/pic3d/pic3d.fa calls on one node of one lane, in the order they ran, with their leading numbers. */
  async function calls(defines: Record<string, string>): Promise<{ name: string; ints: number[] }[]> {
    const l = await loadProgram('examples/pic3d/pic3d.fa', { defines });
    if (!l.program || !l.bundle?.file) throw new Error(l.text || 'examples/pic3d/pic3d.fa does not load');
    const mod = (await import(`${pathToFileURL(l.bundle.file).href}?order=${Object.keys(defines).join('-')}`)) as Ucodes;
    const seen: { name: string; ints: number[] }[] = [];
    const wrapped: Ucodes = {};
    for (const [name, f] of Object.entries(mod))
      wrapped[name] = typeof f !== 'function' ? f : (...args: unknown[]): unknown => {
        const ints: number[] = [];
        for (const a of args) { if (typeof a !== 'number') break; ints.push(a); }
        seen.push({ name, ints });
        return (f as (...x: unknown[]) => unknown)(...args);
      };
    // the policy `luna run` gives it (the priority policy when the program has priority rules)
    const r = await runInProcess(l.program, wrapped, { lanes: 1, args: ['16', '4', '3000', '3', '10', '0', '1'], policy: choosePolicy({ program: l.program, rank: 0 }).policy });
    assert.equal(r.ok, true, r.message);
    return seen;
  }
  /** Per step after the first, whether every centre subdomain's push ran before the step's other pushes. */
  function centreFirst(seen: { name: string; ints: number[] }[]): boolean[] {
    const steps: boolean[] = [];
    let pushes: { name: string; ints: number[] }[] = [];
    const close = (): void => {
      if (pushes.length === 0) return;
      // push_slab(N, F, SL, a, b, c, …), push_col(N, F, SL, a, b, …): a centre index is 1 or 2 at F =
      // 4, so 8 centre subdomains; push_g(N, F, SL, a, g, …): a centre column is group 1 or 2 of a
      // centre row, so 4 centre groups
      const centre = (p: { name: string; ints: number[] }): boolean => p.name === 'c_push_g' ? p.ints[4]! > 0
        : p.name === 'c_push_slab' && p.ints.slice(3, 6).every((i) => i === 1 || i === 2);
      let last = -1;
      pushes.forEach((p, i) => { if (centre(p)) last = i; });
      const want = pushes.some((p) => p.name === 'c_push_g') ? 4 : 8;
      steps.push(pushes.filter(centre).length === want && pushes.slice(0, last + 1).every(centre));
      pushes = [];
    };
    for (const c of seen) {
      if (c.name === 'c_push_slab' || c.name === 'c_push_col' || c.name === 'c_push_g') pushes.push(c);
      else if (c.name.startsWith('c_deposit')) close();
    }
    close();
    return steps;
  }

  test('the summaries by row are the bits of the summaries by subdomain summed by column and by layer', async () => {
    /** The sum c_report gets, with `defines`. */
    async function reported(defines: Record<string, string>): Promise<Float64Array> {
      const l = await loadProgram('examples/pic3d/pic3d.fa', { defines });
      if (!l.program || !l.bundle?.file) throw new Error(l.text || 'examples/pic3d/pic3d.fa does not load');
      const mod = (await import(`${pathToFileURL(l.bundle.file).href}?sum=${Object.keys(defines).join('-')}`)) as Ucodes;
      let sum: Float64Array | undefined;
      const report = mod.c_report as (...x: unknown[]) => unknown;
      const wrapped: Ucodes = { ...mod, c_report: (...args: unknown[]): unknown => { sum = Float64Array.from((args[6] as DF).getFloat64Array()); return report(...args); } };
      const r = await runInProcess(l.program, wrapped, { lanes: 2, args: ['16', '4', '3000', '3', '10', '1', '1'], policy: choosePolicy({ program: l.program, rank: 0 }).policy });
      assert.equal(r.ok, true, r.message);
      assert.ok(sum, 'c_report ran');
      return sum;
    }
    const byRow = await reported({}), bySubdomain = await reported({ COLUMN_GRAIN: '1' });
    assert.equal(byRow.length, 11);
    assert.deepEqual([...byRow], [...bySubdomain]);
    assert.equal(byRow[0], 3000, 'every particle counted once');
  });

  test('a step\'s sweeps run before its pushes, and the centre subdomains\' pushes before the others, by group and by column (NO_PRIORITIES: in the order they became ready)', async () => {
    const ordered = await calls({});
    const sweeps = ordered.map((c, i) => (c.name.startsWith('c_slab_group') ? i : -1)).filter((i) => i >= 0);
    assert.equal(sweeps.length, 6);
    // each step's two sweeps one after the other, before any push that reads the second
    for (let s = 0; s < 6; s += 2) assert.equal(sweeps[s + 1], sweeps[s]! + 1, `step ${s / 2}: a push ran between the two slabs' sweeps`);
    assert.deepEqual(centreFirst(ordered), [true, true, true]);
    // the work by group: a step's pushes and deposits are one a group, 8 (a light row's 16
    // subdomains, a centre row's light columns, each of its centre columns), and so are the first
    // step's deposits from the cloud
    const groups = (name: string): [number, number][] => ordered.filter((c) => c.name === name).map((c) => [c.ints[name === 'c_push_g' ? 3 : 2]!, c.ints[name === 'c_push_g' ? 4 : 3]!]);
    const eight = [[0, 0], [1, 0], [1, 1], [1, 2], [2, 0], [2, 1], [2, 2], [3, 0]];
    assert.deepEqual(groups('c_push_g').slice(0, 8).sort(), eight);
    assert.deepEqual(groups('c_deposit_g').slice(0, 8).sort(), eight);
    assert.deepEqual(groups('c_deposit_all_g').sort(), eight);
    assert.equal(ordered.filter((c) => c.name === 'c_push_g').length, 24, 'a push a group a step');
    assert.deepEqual(centreFirst(await calls({ COLUMN_GRAIN: '1' })), [true, true, true]);
    // in the order they became ready (a CF a light column, where they interleave in the program's order)
    const fifo = centreFirst(await calls({ NO_PRIORITIES: '1', COLUMN_GRAIN: '1' }));
    assert.equal(fifo.length, 3);
    assert.ok(fifo.includes(false), 'in the order they became ready, a light push runs before a centre one');
  });
});
