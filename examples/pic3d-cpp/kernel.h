// The compute kernels of pic3d in C++: the arithmetic of examples/pic3d/kernels.ts and model.ts,
// operation for operation, so both give the same bits (no contraction into fused multiply-adds).
// Layouts and the meaning of every argument: kernels.ts.
#ifndef PIC3D_KERNEL_H
#define PIC3D_KERNEL_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#pragma GCC optimize("fp-contract=off")

namespace pic3d {

const int REC = 8;
const double FOUR_PI_G = 4 * M_PI;
const double DT = 0.01;

struct KernelError : std::runtime_error {
  explicit KernelError(const std::string &m) : std::runtime_error(m) {}
};

inline int cellOf(double x, int N) {
  // floor by truncation (one conversion; std::floor is a slower sequence on baseline x86-64), then
  // one down for a negative non-integer: the same integer for every x, and positions are in [0, 1)
  const double v = x * N;
  int c = (int)v;
  if (v < c) c--;
  return c >= N ? N - 1 : c;
}

inline double wrap(double x) {
  if (x < 0) x += 1;
  else if (x >= 1) x -= 1;
  return x >= 1 ? x - 1 : x;
}

inline int massExponent(long NP) {
  int e = 0;
  while (std::ldexp(1.0, e) < 2.5 * NP) e++;
  return e;
}

inline double totalMass(long NP) {
  long q = NP / 4, r = NP % 4;
  return (double)(q * 10 + (r * (r + 1)) / 2) * std::ldexp(1.0, -massExponent(NP));
}

/** Why the parameters are unusable (model.ts badParams, the same words), or "". */
inline std::string badParams(long N, long F, long NP, long NT, long K) {
  std::ostringstream m;
  if (N < 2) m << "N=" << N << ": need at least 2 grid nodes per dimension";
  else if (F < 1 || N % F != 0) m << "N=" << N << " must be a multiple of F=" << F << " >= 1";
  else if (N / F < 2) m << "N/F=" << N / F << ": a subdomain needs at least 2 grid nodes per dimension (the sweeps take a halo from its neighbours)";
  else if (NP < 1 || NP > 100000000) m << "NP=" << NP << ": need 1 <= NP <= 1e8";
  else if (NT < 0 || K < 1) m << "need NT >= 0 and K >= 1 (NT=" << NT << ", K=" << K << ")";
  return m.str();
}

/** mulberry32's output function of a 32-bit state (model.ts draw). */
inline uint32_t mix32(uint32_t t) {
  t = (t ^ (t >> 15)) * (t | 1u);
  t ^= t + (t ^ (t >> 7)) * (t | 61u);
  return t ^ (t >> 14);
}

/**
 * Particles lo … hi − 1 of the initial cloud of NP (model.ts cloudPart), the same bits: particle
 * p's record to emit(p, record), in id order. A uniform ball of radius R0 at the centre, rigidly
 * rotating about z; particle p's draws by counter (model.ts draw: mulberry32's output function of
 * its key XOR (j + 1)·golden ratio), rejected outside the ball: any split of the ids makes the
 * same particles.
 */
template <class Emit>
inline void cloudPart(long NP, long lo, long hi, Emit emit) {
  const double R0 = 0.3, OMEGA = 2, unit = std::ldexp(1.0, -massExponent(NP));
  for (long p = lo; p < hi; p++) {
    const uint32_t key = mix32(20240917u + (uint32_t)(p + 1) * 0x6d2b79f5u);
    uint32_t j = 0;
    auto rnd = [&]() { return (double)mix32(key ^ (++j * 0x9e3779b9u)) / 4294967296.0; };
    double dx, dy, dz;
    do {
      dx = (2 * rnd() - 1) * R0; dy = (2 * rnd() - 1) * R0; dz = (2 * rnd() - 1) * R0;
    } while (dx * dx + dy * dy + dz * dz > R0 * R0);
    const double r[REC] = {(double)p, (1 + (p % 4)) * unit, 0.5 + dx, 0.5 + dy, 0.5 + dz, -OMEGA * dy, OMEGA * dx, 0};
    emit(p, r);
  }
}

/** The whole initial cloud of NP particles (model.ts initialCloud). */
template <class Emit>
inline void initialCloud(long NP, Emit emit) { cloudPart(NP, 0, NP, emit); }

/** The subdomain (x-major) of a particle record. */
inline int subdomainOf(const double *r, int N, int F) {
  const int n = N / F;
  return ((cellOf(r[2], N) / n) * F + cellOf(r[3], N) / n) * F + cellOf(r[4], N) / n;
}

/** A particle bundle: records and their number of doubles. */
struct Bundle {
  const double *p;
  long len;
};

/**
 * The sums of a subdomain's final summary with no reference (ucodes.cpp summarizeInto, the
 * program's last CFs): the count, mass, ids and momentum (s[0..5]) of the particles of the 27
 * bundles arriving at subdomain `own`, each checked to lie in it; false at the first that does
 * not. For the sequential baselines, which time the same pass the program does.
 */
inline bool summarySums(int N, int F, int own, const Bundle *bs, double *s) {
  for (int d = 0; d < 27; d++) {
    const double *p = bs[d].p;
    for (long o = 0; o < bs[d].len; o += REC) {
      if (subdomainOf(p + o, N, F) != own) return false;
      s[0]++; s[1] += p[o + 1]; s[2] += p[o];
      for (int k = 0; k < 3; k++) s[3 + k] += p[o + 1] * p[o + 5 + k];
    }
  }
  return true;
}

/** Whether summarySums added over every subdomain (t[0..5]) hold NP particles, their exact mass and ids, and a finite momentum. */
inline bool summaryHolds(const double *t, long NP) {
  return t[0] == (double)NP && t[1] == totalMass(NP) && t[2] == (double)NP * (double)(NP - 1) / 2 && std::isfinite(t[3] + t[4] + t[5]);
}

inline void deposit(int N, int F, int a, int b, int c, const Bundle *bundles, int nb, double *out) {
  const int n = N / F, n1 = n + 1;
  const double inv = (double)N * N * N;
  const int loi = a * n, loj = b * n, lok = c * n;
  for (int q = 0; q < nb; q++) {
    const double *p = bundles[q].p;
    for (long o = 0; o < bundles[q].len; o += REC) {
      const double x = p[o + 2], y = p[o + 3], z = p[o + 4];
      const double mw = p[o + 1] * inv;
      const int ci = cellOf(x, N), cj = cellOf(y, N), ck = cellOf(z, N);
      const double fx = x * N - ci, fy = y * N - cj, fz = z * N - ck;
      const int li = ci - loi, lj = cj - loj, lk = ck - lok;
      if (li < 0 || li >= n || lj < 0 || lj >= n || lk < 0 || lk >= n) {
        std::ostringstream m;
        m << "particle " << p[o] << " arrived in subdomain (" << a << ", " << b << ", " << c << "), not its own";
        throw KernelError(m.str());
      }
      for (int dx = 0; dx < 2; dx++) {
        const double wx = dx ? fx : 1 - fx;
        for (int dy = 0; dy < 2; dy++) {
          const double wxy = wx * (dy ? fy : 1 - fy);
          const long row = ((long)(li + dx) * n1 + lj + dy) * n1 + lk;
          out[row] += mw * (wxy * (1 - fz));
          out[row + 1] += mw * (wxy * fz);
        }
      }
    }
  }
}

inline void density(int N, int F, const double *const *blocks, double *out) {
  const int n = N / F, n1 = n + 1;
  const double *own = blocks[0];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++) out[((long)i * n + j) * n + k] = own[((long)i * n1 + j) * n1 + k];
  for (int o = 1; o < 8; o++) {
    const double *src = blocks[o];
    const int ox = (o >> 2) & 1, oy = (o >> 1) & 1, oz = o & 1;
    const int ni = ox ? 1 : n, nj = oy ? 1 : n, nk = oz ? 1 : n;
    for (int i = 0; i < ni; i++)
      for (int j = 0; j < nj; j++)
        for (int k = 0; k < nk; k++)
          out[((long)i * n + j) * n + k] += src[((long)(ox ? n : i) * n1 + (oy ? n : j)) * n1 + (oz ? n : k)];
  }
}

/** phis: own, x−, x+, y−, y+, z−, z+; p: (n+2)³ */
inline void padded(int n, const double *const *phis, double *p) {
  const long m = n + 2;
  const double *own = phis[0], *xm = phis[1], *xp = phis[2], *ym = phis[3], *yp = phis[4], *zm = phis[5], *zp = phis[6];
  for (long i = 0; i < n; i++)
    for (long j = 0; j < n; j++) {
      const long s = (i * n + j) * n, d = ((i + 1) * m + j + 1) * m + 1;
      for (long k = 0; k < n; k++) p[d + k] = own[s + k];
      p[d - 1] = zm[s + n - 1];
      p[d + n] = zp[s];
    }
  for (long i = 0; i < n; i++)
    for (long k = 0; k < n; k++) {
      p[((i + 1) * m) * m + k + 1] = ym[(i * n + n - 1) * n + k];
      p[((i + 1) * m + n + 1) * m + k + 1] = yp[(i * n) * n + k];
    }
  for (long j = 0; j < n; j++)
    for (long k = 0; k < n; k++) {
      p[(j + 1) * m + k + 1] = xm[((long)(n - 1) * n + j) * n + k];
      p[((n + 1) * m + j + 1) * m + k + 1] = xp[j * n + k];
    }
}

// The sweeps are bound by the division by 6 (kept: a multiplication would change the bits): with
// 4-wide AVX2 registers where the CPU has them (a clone chosen at load time, the same bits; the
// baseline x86-64 build has only 2-wide ones), jacobiDeep took 0.43 s against 0.56 s of CPU for
// the seed's 10 steps at depth 10, and the sequential program's jacobi 0.19 s against 0.20 s (one
// thread alone, load ~10; docs/pic.md "The sweeps' CPU").
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define PIC3D_SWEEP __attribute__((target_clones("avx2", "default")))
#else
#define PIC3D_SWEEP
#endif

PIC3D_SWEEP inline void jacobi(int N, int F, long NP, const double *rho, const double *const *phis, double *out, double *pad) {
  const long n = N / F, m = n + 2, mm = m * m;
  padded((int)n, phis, pad);
  const double h2c = FOUR_PI_G / (N * N);
  const double rhobar = totalMass(NP);
  for (long i = 0; i < n; i++)
    for (long j = 0; j < n; j++) {
      long q = ((i + 1) * m + j + 1) * m + 1, c = (i * n + j) * n;
      for (long k = 0; k < n; k++, q++, c++)
        out[c] = (pad[q - mm] + pad[q + mm] + pad[q - m] + pad[q + m] + pad[q - 1] + pad[q + 1] - h2c * (rho[c] - rhobar)) / 6;
    }
}

inline void field(int N, int F, const double *const *phis, double *out, double *pad) {
  const long n = N / F, m = n + 2, mm = m * m;
  padded((int)n, phis, pad);
  const double half = 0.5 * N;
  for (long i = 0; i < n; i++)
    for (long j = 0; j < n; j++) {
      long q = ((i + 1) * m + j + 1) * m + 1, c = 3 * (i * n + j) * n;
      for (long k = 0; k < n; k++, q++, c += 3) {
        out[c] = (pad[q - mm] - pad[q + mm]) * half;
        out[c + 1] = (pad[q - m] - pad[q + m]) * half;
        out[c + 2] = (pad[q - 1] - pad[q + 1]) * half;
      }
    }
}

inline int direction(int own, int dest, int F, double id) {
  const int d = (dest - own + F) % F;
  if (d == 0) return 0;
  if (d == 1) return 1;
  if (d == F - 1) return -1;
  std::ostringstream m;
  m << "particle " << id << " moved more than one subdomain in a step (from " << own << " to " << dest << " of " << F << "); lower DT or F";
  throw KernelError(m.str());
}

/**
 * direction(own, cell / n, F, id) for a particle now in `cell`, the subdomain's cells being
 * [lo, lo + n): most particles stay, and they need no division.
 */
inline int across(int own, long lo, int cell, long n, int F, double id) {
  if (cell >= lo && cell < lo + n) return 0;
  return direction(own, (int)(cell / n), F, id);
}

/**
 * The pushed particles with the bundle each goes to; push reuses one (its buffers and g) call
 * after call. The particles are the first dir.size() records of `moved`.
 */
struct Pushed {
  std::vector<double> moved;
  std::vector<uint8_t> dir;
  long count[27] = {0};
  std::vector<double> g;
};

inline void pushIn(int N, int F, int a, int b, int c, const double *g, const Bundle *bundles, int nb, Pushed &r);

inline void push(int N, int F, int a, int b, int c, const double *const *gs, const Bundle *bundles, int nb, Pushed &r) {
  const long n = N / F, n1 = n + 1;
  r.g.resize(3 * n1 * n1 * n1);
  double *const g = r.g.data();
  for (int o = 0; o < 8; o++) {
    const double *src = gs[o];
    const int ox = (o >> 2) & 1, oy = (o >> 1) & 1, oz = o & 1;
    const long i0 = ox ? n : 0, j0 = oy ? n : 0, k0 = oz ? n : 0;
    for (long i = i0; i < (ox ? n1 : n); i++)
      for (long j = j0; j < (oy ? n1 : n); j++) {
        const long s = 3 * (((i - i0) * n + j - j0) * n), t = 3 * ((i * n1 + j) * n1 + k0);
        for (long k = 0; k < 3 * (oz ? 1 : n); k++) g[t + k] = src[s + k];
      }
  }
  pushIn(N, F, a, b, c, g, bundles, nb, r);
}

inline void pushAt(int N, int F, int a, int b, int c, const double *g, long px, long py, const Bundle *bundles, int nb, Pushed &r);

/** The push with g at the (n+1)³ nodes the cells touch at hand (jacobiDeep with ghost). */
inline void pushIn(int N, int F, int a, int b, int c, const double *g, const Bundle *bundles, int nb, Pushed &r) {
  const long n1 = N / F + 1;
  pushAt(N, F, a, b, c, g, n1 * n1, n1, bundles, nb, r);
}

/**
 * The push with g at the nodes the cells touch in any layout: node (li, lj, lk) of the subdomain at
 * g + 3·(li·px + lj·py + lk) (pushIn: its own (n+1)³; a slab's g: its planes of (N+1)²).
 */
inline void pushAt(int N, int F, int a, int b, int c, const double *g, long px, long py, const Bundle *bundles, int nb, Pushed &r) {
  const long n = N / F;
  for (int d = 0; d < 27; d++) r.count[d] = 0;
  long total = 0;
  for (int q = 0; q < nb; q++) total += bundles[q].len;
  if ((long)r.moved.size() < total) r.moved.resize(total);  // grows only: no zeroing again call after call
  r.dir.resize(total / REC);
  const int loi = a * n, loj = b * n, lok = c * n;
  long w = 0;
  for (int q = 0; q < nb; q++) {
    const double *p = bundles[q].p;
    for (long o = 0; o < bundles[q].len; o += REC, w += REC) {
      const double x = p[o + 2], y = p[o + 3], z = p[o + 4];
      const int ci = cellOf(x, N), cj = cellOf(y, N), ck = cellOf(z, N);
      const double fx = x * N - ci, fy = y * N - cj, fz = z * N - ck;
      const long li = ci - loi, lj = cj - loj, lk = ck - lok;
      double ax = 0, ay = 0, az = 0;
      for (int dx = 0; dx < 2; dx++) {
        const double wx = dx ? fx : 1 - fx;
        for (int dy = 0; dy < 2; dy++) {
          const double wxy = wx * (dy ? fy : 1 - fy);
          const long h = 3 * ((li + dx) * px + (lj + dy) * py + lk);
          const double w0 = wxy * (1 - fz), w1 = wxy * fz;
          ax += w0 * g[h]; ay += w0 * g[h + 1]; az += w0 * g[h + 2];
          ax += w1 * g[h + 3]; ay += w1 * g[h + 4]; az += w1 * g[h + 5];
        }
      }
      const double vx = p[o + 5] + ax * DT, vy = p[o + 6] + ay * DT, vz = p[o + 7] + az * DT;
      const double nx = wrap(x + vx * DT), ny = wrap(y + vy * DT), nz = wrap(z + vz * DT);
      double *m = &r.moved[w];
      m[0] = p[o]; m[1] = p[o + 1]; m[2] = nx; m[3] = ny; m[4] = nz; m[5] = vx; m[6] = vy; m[7] = vz;
      const int sx = across(a, loi, cellOf(nx, N), n, F, p[o]);
      const int sy = across(b, loj, cellOf(ny, N), n, F, p[o]);
      const int sz = across(c, lok, cellOf(nz, N), n, F, p[o]);
      const int d = ((sx + 1) * 3 + sy + 1) * 3 + sz + 1;
      r.dir[w / REC] = (uint8_t)d;
      r.count[d]++;
    }
  }
}

inline void scatter(const Pushed &r, double *const *outs) {
  long fill[27] = {0};
  for (size_t q = 0; q < r.dir.size(); q++) {
    const int d = r.dir[q];
    const double *from = &r.moved[q * REC];
    double *to = outs[d] + fill[d] * REC;
    for (int k = 0; k < REC; k++) to[k] = from[k];
    fill[d]++;
  }
}

const int STAY = 13;
/** header of a leaving array: 28 offsets in particles (kernels.ts) */
const int HEADER = 28;

/** Part d of a leaving array of `len` doubles. */
inline Bundle partOf(const double *leaving, long len, int d) {
  if (len == 0) return Bundle{nullptr, 0};
  return Bundle{leaving + HEADER + (long)leaving[d] * REC, ((long)leaving[d + 1] - (long)leaving[d]) * REC};
}

inline long leavingSize(const long *count) {
  long n = 0;
  for (int d = 0; d < 27; d++) if (d != STAY) n += count[d];
  return HEADER + n * REC;
}

/** The 27 outgoing bundles: STAY into `stay`, the others into `leaving`, whose header this writes. */
inline void outgoing(const long *count, double *stay, double *leaving, double **outs) {
  long off = 0;
  for (int d = 0; d < 27; d++) {
    leaving[d] = (double)off;
    if (d == STAY) { outs[d] = stay; continue; }
    outs[d] = leaving + HEADER + off * REC;
    off += count[d];
  }
  leaving[27] = (double)off;
}

// Deep halos (examples/pic3d/halo.ts, operation for operation): the 27 blocks around a subdomain
// in direction order ((dx+1)·3 + dy+1)·3 + dz+1.

inline int haloDepth(int depth, int n, int K) {
  int d = depth < n - 1 ? depth : n - 1;
  if (K < d) d = K;
  return d < 1 ? 1 : d;
}

/** The density box's halo at depth d (halo.ts rhoRadius): d + 1 when d ≤ n − 2, else d. */
inline long rhoRadius(long d, long n) { return d <= n - 2 ? d + 1 : d; }

inline int side(long i, long n) { return i < 0 ? 0 : i < n ? 1 : 2; }

/**
 * φ over the nodes [lo, hi)³ (−n ≤ lo ≤ 0, n ≤ hi ≤ 2n) from the 27 n³ blocks into box ((hi−lo)³): each
 * row of the box is at most three runs, the lower z block's tail, the own block's, the upper's
 * head, each copied by one loop (choosing the block node by node took 1.6× the time alone at
 * depth 1: 20 against 12.5 µs a box of 27³). The loops stay loops: as memcpy calls, three a row
 * of at most a few hundred bytes, the calls cost about as much as the copy.
 */
__attribute__((optimize("no-tree-loop-distribute-patterns"))) inline void gatherBox(long n, const double *const *blocks, long lo, long hi, double *box) {
  const long m = hi - lo, below = -lo, above = hi - n;
  double *dst = box;
  for (long i = lo; i < hi; i++) {
    const int bx = side(i, n);
    const long li = i - (bx - 1) * n;
    for (long j = lo; j < hi; j++, dst += m) {
      const int by = side(j, n);
      const long row = (li * n + j - (by - 1) * n) * n;
      const double *const *b = blocks + (bx * 3 + by) * 3;
      const double *z0 = b[0] + row + n - below, *z1 = b[1] + row, *z2 = b[2] + row;
      for (long k = 0; k < below; k++) dst[k] = z0[k];
      for (long k = 0; k < n; k++) dst[below + k] = z1[k];
      for (long k = 0; k < above; k++) dst[below + n + k] = z2[k];
    }
  }
}

/** The density at one node (local coordinates li, lj, lk of block (bx, by, bz)): the owner's deposit plus the ghost layers of its 7 lower neighbours, in density's order. */
inline double densityAt(long n, const double *const *blocks, int bx, int by, int bz, long li, long lj, long lk) {
  const long n1 = n + 1;
  double v = blocks[(bx * 3 + by) * 3 + bz][(li * n1 + lj) * n1 + lk];
  if (li == 0 || lj == 0 || lk == 0)
    for (int o = 1; o < 8; o++) {
      const int ox = (o >> 2) & 1, oy = (o >> 1) & 1, oz = o & 1;
      if ((ox && li != 0) || (oy && lj != 0) || (oz && lk != 0)) continue;
      const double *src = blocks[((bx - ox) * 3 + by - oy) * 3 + bz - oz];
      v += src[((ox ? n : li) * n1 + (oy ? n : lj)) * n1 + (oz ? n : lk)];
    }
  return v;
}

/**
 * Density at the nodes [−r, n+r)³ into out ((n+2r)³) from the 27 deposit blocks, in density's
 * order (0 ≤ r < n). A row of the box is three runs of the z blocks; a node adds ghost layers
 * only on a block's lower faces (li, lj or lk 0), so a row off those faces is copied run by run
 * and only its two lk = 0 nodes summed (node by node for every node, it took 0.17 s of the
 * workers' CPU at the seed's parameters, about as much as the deposit).
 */
inline void densityHalo(int N, int F, long r, const double *const *blocks, double *out) {
  const long n = N / F, n1 = n + 1, m = n + 2 * r;
  double *w = out;
  for (long i = -r; i < n + r; i++) {
    const int bx = side(i, n);
    const long li = i - (bx - 1) * n;
    for (long j = -r; j < n + r; j++, w += m) {
      const int by = side(j, n);
      const long lj = j - (by - 1) * n;
      if (li == 0 || lj == 0) {
        for (long k = -r; k < n + r; k++) {
          const int bz = side(k, n);
          w[k + r] = densityAt(n, blocks, bx, by, bz, li, lj, k - (bz - 1) * n);
        }
        continue;
      }
      const double *const *b = blocks + (bx * 3 + by) * 3;
      const long row = (li * n1 + lj) * n1;
      for (long k = 0; k < r; k++) w[k] = b[0][row + n - r + k];
      for (long k = 0; k < n; k++) w[r + k] = b[1][row + k];
      for (long k = 0; k < r; k++) w[r + n + k] = b[2][row + k];
      w[r] = densityAt(n, blocks, bx, by, 1, li, lj, 0);
      if (r > 0) w[r + n] = densityAt(n, blocks, bx, by, 2, li, lj, 0);
    }
  }
}

/**
 * `sweeps` Jacobi sweeps on the box grown `sweeps` deep (one more with g, then g = −∇φ at the
 * owned nodes as field computes it; two more on the upper sides with ghost, g then also at the upper ghost layer,
 * 3·(n+1)³ in the push's layout); rho has halo r ≥ sweeps − 1 + the extra growth; a, b: scratch of
 * (n+2·sweeps+4)³.
 */
PIC3D_SWEEP inline void jacobiDeep(int N, int F, long NP, int sweeps, const double *rho, long r, const double *const *phis, double *out, double *g, double *a, double *b, bool ghost = false) {
  // the box: [−h, n+u)³, one node more below with g, one (two with ghost) more above
  const long n = N / F, h = sweeps + (g ? 1 : 0), u = sweeps + (g ? (ghost ? 2 : 1) : 0), m = n + h + u, mm = m * m, mr = n + 2 * r;
  const double h2c = FOUR_PI_G / (N * N);
  const double rhobar = totalMass(NP);
  gatherBox(n, phis, -h, n + u, a);
  double *src = a, *dst = b;
  for (long s = 1; s <= sweeps; s++) {
    const long e = h - s, f = u - s;
    for (long i = -e; i < n + f; i++)
      for (long j = -e; j < n + f; j++) {
        long q = ((i + h) * m + j + h) * m + h - e, c = ((i + r) * mr + j + r) * mr + r - e;
        for (long k = -e; k < n + f; k++, q++, c++)
          dst[q] = (src[q - mm] + src[q + mm] + src[q - m] + src[q + m] + src[q - 1] + src[q + 1] - h2c * (rho[c] - rhobar)) / 6;
      }
    double *t = src; src = dst; dst = t;
  }
  for (long i = 0; i < n; i++)
    for (long j = 0; j < n; j++) {
      const double *from = src + ((i + h) * m + j + h) * m + h;
      double *to = out + (i * n + j) * n;
      for (long k = 0; k < n; k++) to[k] = from[k];
    }
  if (!g) return;
  const double half = 0.5 * N;
  const long gn = ghost ? n + 1 : n;
  for (long i = 0; i < gn; i++)
    for (long j = 0; j < gn; j++) {
      long q = ((i + h) * m + j + h) * m + h, c = 3 * (i * gn + j) * gn;
      for (long k = 0; k < gn; k++, q++, c += 3) {
        g[c] = (src[q - mm] - src[q + mm]) * half;
        g[c + 1] = (src[q - m] - src[q + m]) * half;
        g[c + 2] = (src[q - 1] - src[q + 1]) * half;
      }
    }
}


// Slabs (pic3d.fa with POISSON_SLABS): the Poisson sweeps on SL slabs of the grid along x, each slab whole
// subdomain layers [slabLayer(p), slabLayer(p + 1)), not on the F³ particle subdomains. A slab group
// takes φ of the slabs around it a halo deep in x only (y and z are whole and periodic), so its
// sweeps compute (W + mean halo) / W of its nodes where a subdomain's compute it in three
// dimensions; every node by the same formula from the same values: the bits of the subdomain
// decomposition. The density is summed from the F³ deposit blocks node by node in density's order.

/**
 * The ghost planes a slab's φ carries below and above its own (slabs.ts GHOST_LO, GHOST_HI): g at
 * the nodes its layers' cells touch reads the planes [lo − 1, hi + 1], so a push reads its own
 * slab alone and starts once that slab is swept. The box grows as many planes more: the ghosts
 * are exact, the values the neighbouring slab computes there.
 */
const long GHOST_LO = 1, GHOST_HI = 2;

/** The first subdomain layer (x index) of slab p of SL. */
inline int slabLayer(int p, int F, int SL) { return (int)((long)p * F / SL); }
/** The slab of subdomain layer a: the largest p with slabLayer(p) <= a. */
inline int slabOf(int a, int F, int SL) { return (int)(((long)(a + 1) * SL - 1) / F); }

inline long wrapN(long x, long N) { x %= N; return x < 0 ? x + N : x; }

/**
 * The density at global node (x, y, z) from the F³ deposit blocks ((A·F + B)·F + C), in density's
 * order (densityAt). fx: the x index where a block of the layer below holds its upper face (n:
 * whole blocks; 0: that layer's blocks are their upper faces alone, (n+1)², all of them it reads).
 */
inline double densityNode(int N, int F, const double *const *blocks, long x, long y, long z, long fx) {
  const long n = N / F, n1 = n + 1;
  const long A = x / n, B = y / n, C = z / n, li = x % n, lj = y % n, lk = z % n;
  double v = blocks[(A * F + B) * F + C][(li * n1 + lj) * n1 + lk];
  if (li == 0 || lj == 0 || lk == 0)
    for (int o = 1; o < 8; o++) {
      const int ox = (o >> 2) & 1, oy = (o >> 1) & 1, oz = o & 1;
      if ((ox && li != 0) || (oy && lj != 0) || (oz && lk != 0)) continue;
      const double *src = blocks[(((A - ox + F) % F) * F + (B - oy + F) % F) * F + (C - oz + F) % F];
      v += src[((ox ? fx : li) * n1 + (oy ? n : lj)) * n1 + (oz ? n : lk)];
    }
  return v;
}

/**
 * The density at the planes [x0, x1) (global, wrapped) into out ((x1 − x0)·N² doubles), from the
 * F³ deposit blocks (with `faces`, [x0, x1) within one layer and the blocks of the layer below
 * their upper faces alone: blockFace). A row off the blocks' lower x and y faces is its z blocks'
 * runs, with only their lk = 0 nodes summed (densityHalo's shortcut); the other rows node by node.
 */
inline void densitySlab(int N, int F, long x0, long x1, const double *const *blocks, double *out, bool faces = false) {
  const long n = N / F, n1 = n + 1, fx = faces ? 0 : n;
  double *w = out;
  for (long xx = x0; xx < x1; xx++) {
    const long x = wrapN(xx, N), A = x / n, li = x % n;
    for (long y = 0; y < N; y++, w += N) {
      const long B = y / n, lj = y % n;
      if (li == 0 || lj == 0) {
        for (long z = 0; z < N; z++) w[z] = densityNode(N, F, blocks, x, y, z, fx);
        continue;
      }
      for (long C = 0; C < F; C++) {
        const double *src = blocks[(A * F + B) * F + C] + (li * n1 + lj) * n1;
        double *to = w + C * n;
        for (long k = 0; k < n; k++) to[k] = src[k];
        to[0] = densityNode(N, F, blocks, x, y, C * n, fx);
      }
    }
  }
}

/**
 * A deposit block's upper x face ((n+1)² doubles: its plane li = n, the x ghost layer, the only part
 * of it the layer above's density reads), what crosses a node border in its place (slabs.ts
 * blockFace): the block's last (n+1)².
 */
inline const double *blockFace(const double *block, long n) { return block + n * (n + 1) * (n + 1); }

/** The planes of a slab's and a layer's edges that cross a node border (slabs.ts slabEdge). */
inline long slabEdge(long d) { return d + GHOST_HI; }

/**
 * `sweeps` Jacobi sweeps on slab p (planes [lo, hi)) from the planes of its box (phiPl[k]: box plane
 * k − sweeps − GHOST_LO, N² from the slab that owns it or from a neighbour's edge, as slabs.ts
 * slabBoxPlanes and edgeBoxPlanes place them; null: zeros) into out ((hi − lo + GHOST_LO + GHOST_HI)·N²: its planes
 * with the ghosts); rhos[i + r]: the density's plane lo + i, i in [−r, hi − lo + r),
 * r ≥ sweeps − 1 + GHOST_HI. a, b: scratch of (hi − lo + 2·sweeps + GHOST_LO + GHOST_HI)·N² each.
 */
PIC3D_SWEEP inline void jacobiSlab(int N, int F, long NP, int SL, int p, int sweeps, const double *const *rhos, long r, const double *const *phiPl, double *out, double *a, double *b) {
  const long n = N / F, lo = slabLayer(p, F, SL) * n, hi = slabLayer(p + 1, F, SL) * n, W = hi - lo;
  const long h = sweeps, NN = (long)N * N, L = h + GHOST_LO;
  const double h2c = FOUR_PI_G / (N * N);
  const double rhobar = totalMass(NP);
  // the box: planes [lo − h − GHOST_LO, hi + h + GHOST_HI), box plane i at (i + L)·N². The first
  // sweep reads the input planes themselves (phiPl[i + L], or zeros), not a copy of them, and the
  // last writes the slab's planes with their ghosts straight into out (box plane h on): the
  // same values in the same order as through the box, without copying ~10 MB a slab a step.
  if (sweeps < 1) {  // no sweep: the planes as they are
    for (long k = 0; k < W + GHOST_LO + GHOST_HI; k++) {
      if (phiPl) std::memcpy(out + k * NN, phiPl[k + h], sizeof(double) * NN);
      else std::memset(out + k * NN, 0, sizeof(double) * NN);
    }
    return;
  }
  if (!phiPl) std::memset(a, 0, sizeof(double) * NN);
  double *src = a, *dst = b;
  for (long s = 1; s <= sweeps; s++) {
    const long e = h - s;
    for (long i = -e - GHOST_LO; i < W + e + GHOST_HI; i++) {
      const double *pm, *p0, *pp;
      if (s > 1) { pm = src + (i + L - 1) * NN; p0 = src + (i + L) * NN; pp = src + (i + L + 1) * NN; }
      else if (phiPl) { pm = phiPl[i + L - 1]; p0 = phiPl[i + L]; pp = phiPl[i + L + 1]; }
      else pm = p0 = pp = a;
      const double *rp = rhos[i + r];
      double *d = s == sweeps ? out + (i + GHOST_LO) * NN : dst + (i + L) * NN;
      for (long j = 0; j < N; j++) {
        const long jm = (j == 0 ? N - 1 : j - 1) * N, jp = (j == N - 1 ? 0 : j + 1) * N, jo = j * N;
        const double *xm = pm + jo, *xp = pp + jo, *ym = p0 + jm, *yp = p0 + jp, *c0 = p0 + jo, *rr = rp + jo;
        double *t = d + jo;
        // z wraps: its first and last nodes apart, the rest in one loop (vectorised)
        t[0] = (xm[0] + xp[0] + ym[0] + yp[0] + c0[N - 1] + c0[1] - h2c * (rr[0] - rhobar)) / 6;
        for (long k = 1; k < N - 1; k++)
          t[k] = (xm[k] + xp[k] + ym[k] + yp[k] + c0[k - 1] + c0[k + 1] - h2c * (rr[k] - rhobar)) / 6;
        t[N - 1] = (xm[N - 1] + xp[N - 1] + ym[N - 1] + yp[N - 1] + c0[N - 2] + c0[0] - h2c * (rr[N - 1] - rhobar)) / 6;
      }
    }
    double *t = src; src = dst; dst = t;
  }
}

/**
 * g = −∇φ at the (n+1)³ nodes the cells of subdomain (a, b, c) touch (its own and the upper ghost
 * layer) from its slab's φ (with the ghosts: no other slab is read), as field computes it:
 * 3·(n+1)³ in the push's layout (pushIn).
 */
inline void fieldFromSlab(int N, int F, int SL, int a, int b, int c, const double *phi, double *g) {
  const long n = N / F, n1 = n + 1, NN = (long)N * N;
  const double half = 0.5 * N;
  // plane x of the slab's φ (unwrapped: the ghosts hold the planes across the periodic border)
  const double *base = phi + (GHOST_LO - slabLayer(slabOf(a, F, SL), F, SL) * n) * NN;
  auto plane = [&](long x) { return base + x * NN; };
  // the wrapped z indices of the row's nodes and their neighbours, once (no division per node)
  long zs[3 * 1024], *z0 = zs, *zm = zs + n1, *zp = zs + 2 * n1;
  std::vector<long> big;
  if (n1 > 1024) { big.resize(3 * n1); z0 = big.data(); zm = z0 + n1; zp = z0 + 2 * n1; }
  for (long k = 0; k < n1; k++) { z0[k] = wrapN(c * n + k, N); zm[k] = wrapN(c * n + k - 1, N); zp[k] = wrapN(c * n + k + 1, N); }
  double *w = g;
  for (long i = 0; i < n1; i++) {
    const long x = a * n + i;
    const double *pm = plane(x - 1), *p0 = plane(x), *pp = plane(x + 1);
    for (long j = 0; j < n1; j++) {
      const long y = wrapN(b * n + j, N), jo = y * N;
      const double *xm = pm + jo, *xp = pp + jo, *r0 = p0 + jo, *ym = p0 + wrapN(y - 1, N) * N, *yp = p0 + wrapN(y + 1, N) * N;
      for (long k = 0; k < n1; k++, w += 3) {
        const long z = z0[k];
        w[0] = (xm[z] - xp[z]) * half;
        w[1] = (ym[z] - yp[z]) * half;
        w[2] = (r0[zm[k]] - r0[zp[k]]) * half;
      }
    }
  }
}

}  // namespace pic3d

#endif
