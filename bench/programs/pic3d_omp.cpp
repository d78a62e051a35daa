// pic3d with the C++ kernels hand-parallelized with OpenMP, no runtime: the probe for what a
// shared-memory design reaches on this machine's cores with the kernels of pic3d_seq.cpp. The same
// F³ subdomains and phases as the sequential program (the same bits), each phase a loop over the
// subdomains shared out dynamically (a thread takes the next subdomain when it is done with one:
// the cloud's centre is heavy), the threads meeting only where a phase reads the last one's
// results; the initial cloud made in one part per thread, the first deposit reading the parts where
// they were made. The particle buffers are kept across steps (the sequential program makes new
// ones each step), though they still grow as particles move: it faults as often (docs/pic.md).
// Prints "<seconds> <sum of the x coordinates> <CPU seconds>" as pic3d_seq does (the final summaries timed too); with PIC_PHASES
// set, each phase's wall time and each thread's time working in it on stderr (where it idles).
//   pic3d_omp N F NP NT K [threads, default 2]
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <omp.h>
#include <vector>
#include "kernel.h"

using namespace pic3d;

int main(int argc, char **argv) {
  if (argc != 6 && argc != 7) { std::fprintf(stderr, "usage: pic3d_omp N F NP NT K [threads]\n"); return 2; }
  omp_set_num_threads(argc == 7 ? std::atoi(argv[6]) : 2);
  const int N = std::atoi(argv[1]), F = std::atoi(argv[2]), NT = std::atoi(argv[4]), K = std::atoi(argv[5]);
  const long NP = std::atol(argv[3]);
  const int n = N / F, S = F * F * F, T = omp_get_max_threads();
  const long n3 = (long)n * n * n, n1 = n + 1;
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  auto id = [&](int a, int b, int c) { return (((a + F) % F) * F + (b + F) % F) * F + (c + F) % F; };
  std::vector<std::vector<double>> parts(S), block(S), rho(S), phi(S), next(S), g(S);
  std::vector<std::vector<std::vector<double>>> bundles(S, std::vector<std::vector<double>>(27)), out = bundles;
  // per thread: its part of the cloud by subdomain, its padded copy, its push's buffers
  std::vector<std::vector<std::vector<double>>> made(T, std::vector<std::vector<double>>(S));
  std::vector<std::vector<double>> pad(T, std::vector<double>((n + 2) * (n + 2) * (n + 2)));
  std::vector<Pushed> pushed(T);
  // per phase: its wall time (thread 0, between the meetings) and each thread's time in its bodies
  enum { CLOUD, TOUCH, DEPOSIT, DENSITY, JACOBI, FIELD, PUSH, PHASES };
  const char *phaseName[PHASES] = {"cloud", "touch", "deposit", "density", "jacobi", "field", "push"};
  std::vector<double> wall(PHASES), busy(T * PHASES);
  auto now = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
  double mark = now();
  auto phaseEnd = [&](int me, int ph) { if (me == 0) { const double x = now(); wall[ph] += x - mark; mark = x; } };
  auto faces = [&](std::vector<std::vector<double>> &f, int a, int b, int c, const double **o) {
    const int q[7] = {id(a, b, c), id(a - 1, b, c), id(a + 1, b, c), id(a, b - 1, c), id(a, b + 1, c), id(a, b, c - 1), id(a, b, c + 1)};
    for (int i = 0; i < 7; i++) o[i] = f[q[i]].data();
  };
#pragma omp parallel
  {
    const int me = omp_get_thread_num();
    double *const mine = &busy[me * PHASES];
    double t0 = now();
    // the cloud: particles in id order, a thread's ids after the ones before it (the same bits)
    cloudPart(NP, NP * me / T, NP * (me + 1) / T, [&](long, const double *r) {
      std::vector<double> &to = made[me][subdomainOf(r, N, F)];
      to.insert(to.end(), r, r + REC);
    });
    mine[CLOUD] += now() - t0;
#pragma omp barrier
    phaseEnd(me, CLOUD);
#pragma omp for schedule(dynamic, 1)
    for (int s = 0; s < S; s++) {
      t0 = now();
      block[s].resize(n1 * n1 * n1);  // first touched by the thread that uses it first
      rho[s].resize(n3); phi[s].resize(n3); next[s].resize(n3); g[s].resize(3 * n3);
      mine[TOUCH] += now() - t0;
    }
    phaseEnd(me, TOUCH);
    for (int t = 0; t < NT; t++) {
#pragma omp for schedule(dynamic, 1)
      for (int s = 0; s < S; s++) {
        t0 = now();
        const int a = s / (F * F), b = s / F % F, c = s % F;
        // the particles in direction order; at the first step the own ones are the threads' parts
        std::vector<Bundle> in;
        for (int d = 0; d < 27; d++) {
          if (t == 0 && d == 13) {
            for (int q = 0; q < T; q++) in.push_back(Bundle{made[q][s].data(), (long)made[q][s].size()});
          } else {
            const auto &v = bundles[id(a - (d / 9 - 1), b - (d / 3 % 3 - 1), c - (d % 3 - 1))][d];
            in.push_back(Bundle{v.data(), (long)v.size()});
          }
        }
        long total = 0;
        for (const Bundle &x : in) total += x.len;
        std::fill(block[s].begin(), block[s].end(), 0.0);
        deposit(N, F, a, b, c, in.data(), (int)in.size(), block[s].data());
        parts[s].resize(total);
        double *w = parts[s].data();
        for (const Bundle &x : in) for (long k = 0; k < x.len; k++) *w++ = x.p[k];
        mine[DEPOSIT] += now() - t0;
      }
      phaseEnd(me, DEPOSIT);
#pragma omp for schedule(dynamic, 1)
      for (int s = 0; s < S; s++) {
        const int a = s / (F * F), b = s / F % F, c = s % F;
        t0 = now();
        const double *bl[8];
        for (int o = 0; o < 8; o++) bl[o] = block[id(a - ((o >> 2) & 1), b - ((o >> 1) & 1), c - (o & 1))].data();
        density(N, F, bl, rho[s].data());
        mine[DENSITY] += now() - t0;
      }
      phaseEnd(me, DENSITY);
      for (int k = 0; k < K; k++) {
#pragma omp for schedule(dynamic, 1)
        for (int s = 0; s < S; s++) {
          t0 = now();
          const double *ph[7];
          faces(phi, s / (F * F), s / F % F, s % F, ph);
          jacobi(N, F, NP, rho[s].data(), ph, next[s].data(), pad[me].data());
          mine[JACOBI] += now() - t0;
        }
#pragma omp single
        std::swap(phi, next);
      }
      phaseEnd(me, JACOBI);
#pragma omp for schedule(dynamic, 1)
      for (int s = 0; s < S; s++) {
        t0 = now();
        const double *ph[7];
        faces(phi, s / (F * F), s / F % F, s % F, ph);
        field(N, F, ph, g[s].data(), pad[me].data());
        mine[FIELD] += now() - t0;
      }
      phaseEnd(me, FIELD);
#pragma omp for schedule(dynamic, 1)
      for (int s = 0; s < S; s++) {
        const int a = s / (F * F), b = s / F % F, c = s % F;
        t0 = now();
        const double *gs[8];
        for (int o = 0; o < 8; o++) gs[o] = g[id(a + ((o >> 2) & 1), b + ((o >> 1) & 1), c + (o & 1))].data();
        Bundle in[1] = {Bundle{parts[s].data(), (long)parts[s].size()}};
        Pushed &r = pushed[me];
        push(N, F, a, b, c, gs, in, 1, r);
        double *to[27];
        for (int d = 0; d < 27; d++) { out[s][d].resize(r.count[d] * REC); to[d] = out[s][d].data(); }
        scatter(r, to);
        mine[PUSH] += now() - t0;
      }
#pragma omp single
      bundles.swap(out);
      phaseEnd(me, PUSH);
    }
  }
  // the program's last CFs: every subdomain's summary (kernel.h summarySums), shared out as the steps are
  double total[6] = {0};
  bool misplaced = false;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : total[:6]) reduction(|| : misplaced)
  for (int s = 0; s < S; s++) {
    const int a = s / (F * F), b = s / F % F, c = s % F;
    Bundle in[27];
    for (int d = 0; d < 27; d++) {
      const auto &v = bundles[id(a - (d / 9 - 1), b - (d / 3 % 3 - 1), c - (d % 3 - 1))][d];
      in[d] = Bundle{v.data(), (long)v.size()};
    }
    double sum[6] = {0};
    if (!summarySums(N, F, s, in, sum)) misplaced = true;
    for (int k = 0; k < 6; k++) total[k] += sum[k];
  }
  if (misplaced) { std::fprintf(stderr, "pic3d_omp: a particle ended outside its subdomain\n"); return 1; }
  if (!summaryHolds(total, NP)) { std::fprintf(stderr, "pic3d_omp: the final summaries do not add up (%.0f particles, mass %.17g, ids %.17g)\n", total[0], total[1], total[2]); return 1; }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = (double)(std::clock() - c0) / CLOCKS_PER_SEC;
  double sx = 0;
  long count = 0;
  for (auto &bs : bundles) for (auto &b : bs) for (size_t o = 0; o < b.size(); o += REC) { sx += b[o + 2]; count++; }
  if (count != NP) { std::fprintf(stderr, "pic3d_omp: %ld particles at the end, %ld at the start\n", count, NP); return 1; }
  if (std::getenv("PIC_PHASES"))
    for (int ph = 0; ph < PHASES; ph++) {
      std::fprintf(stderr, "%-8s wall %.3f s", phaseName[ph], wall[ph]);
      for (int t = 0; t < T; t++) std::fprintf(stderr, "  thread %d %.3f s", t, busy[t * PHASES + ph]);
      std::fprintf(stderr, "\n");
    }
  std::printf("%.6f %.17g %.6f\n", secs, sx, cpu);
  return 0;
}
