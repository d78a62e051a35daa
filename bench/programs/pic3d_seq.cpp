// The sequential baseline of pic3d with the C++ kernels (examples/pic3d-cpp/kernel.h): the
// initial cloud of examples/pic3d/model.ts, the F³ subdomains of the program run one after
// another in a plain loop (as examples/pic3d/sequential.ts does in TypeScript), no runtime.
// Prints "<seconds> <sum of the x coordinates> <CPU seconds>" (timed: the cloud, the steps and the
// final summaries the program computes, kernel.h summarySums; the CPU time is the one load does not
// stretch).
//   pic3d_seq N F NP NT K
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "kernel.h"

using namespace pic3d;

int main(int argc, char **argv) {
  if (argc != 6) { std::fprintf(stderr, "usage: pic3d_seq N F NP NT K\n"); return 2; }
  const int N = std::atoi(argv[1]), F = std::atoi(argv[2]), NT = std::atoi(argv[4]), K = std::atoi(argv[5]);
  const long NP = std::atol(argv[3]);
  const int n = N / F, S = F * F * F;
  const long n3 = (long)n * n * n, n1 = n + 1;
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  // the cloud (model.ts), sorted by subdomain
  std::vector<std::vector<double>> parts(S);
  initialCloud(NP, [&](long, const double *r) {
    std::vector<double> &to = parts[subdomainOf(r, N, F)];
    to.insert(to.end(), r, r + REC);
  });
  auto id = [&](int a, int b, int c) { return (((a + F) % F) * F + (b + F) % F) * F + (c + F) % F; };
  std::vector<std::vector<double>> block(S, std::vector<double>(n1 * n1 * n1)), rho(S, std::vector<double>(n3)),
      phi(S, std::vector<double>(n3)), next(S, std::vector<double>(n3)), g(S, std::vector<double>(3 * n3));
  std::vector<double> pad((n + 2) * (n + 2) * (n + 2));
  // bundles[s][d]: particles leaving s in direction d
  std::vector<std::vector<std::vector<double>>> bundles(S, std::vector<std::vector<double>>(27));
  for (int s = 0; s < S; s++) bundles[s][13] = parts[s];
  // the 27 bundles arriving at subdomain (a, b, c), in direction order; their doubles in all
  auto arriving = [&](int a, int b, int c, Bundle *in) {
    long total = 0;
    for (int d = 0; d < 27; d++) {
      const auto &v = bundles[id(a - (d / 9 - 1), b - (d / 3 % 3 - 1), c - (d % 3 - 1))][d];
      in[d] = Bundle{v.data(), (long)v.size()};
      total += v.size();
    }
    return total;
  };
  Pushed r;  // its buffers reused from subdomain to subdomain
  for (int t = 0; t < NT; t++) {
    for (int a = 0; a < F; a++) for (int b = 0; b < F; b++) for (int c = 0; c < F; c++) {
      const int s = id(a, b, c);
      Bundle in[27];
      const long total = arriving(a, b, c, in);
      std::fill(block[s].begin(), block[s].end(), 0.0);
      deposit(N, F, a, b, c, in, 27, block[s].data());
      parts[s].resize(total);
      double *w = parts[s].data();
      for (int d = 0; d < 27; d++) for (long k = 0; k < in[d].len; k++) *w++ = in[d].p[k];
    }
    for (int a = 0; a < F; a++) for (int b = 0; b < F; b++) for (int c = 0; c < F; c++) {
      const double *bl[8];
      for (int o = 0; o < 8; o++) bl[o] = block[id(a - ((o >> 2) & 1), b - ((o >> 1) & 1), c - (o & 1))].data();
      density(N, F, bl, rho[id(a, b, c)].data());
    }
    auto faces = [&](std::vector<std::vector<double>> &f, int a, int b, int c, const double **out) {
      const int q[7] = {id(a, b, c), id(a - 1, b, c), id(a + 1, b, c), id(a, b - 1, c), id(a, b + 1, c), id(a, b, c - 1), id(a, b, c + 1)};
      for (int i = 0; i < 7; i++) out[i] = f[q[i]].data();
    };
    for (int k = 0; k < K; k++) {
      for (int a = 0; a < F; a++) for (int b = 0; b < F; b++) for (int c = 0; c < F; c++) {
        const double *ph[7];
        faces(phi, a, b, c, ph);
        jacobi(N, F, NP, rho[id(a, b, c)].data(), ph, next[id(a, b, c)].data(), pad.data());
      }
      std::swap(phi, next);
    }
    for (int a = 0; a < F; a++) for (int b = 0; b < F; b++) for (int c = 0; c < F; c++) {
      const double *ph[7];
      faces(phi, a, b, c, ph);
      field(N, F, ph, g[id(a, b, c)].data(), pad.data());
    }
    std::vector<std::vector<std::vector<double>>> out(S, std::vector<std::vector<double>>(27));
    for (int a = 0; a < F; a++) for (int b = 0; b < F; b++) for (int c = 0; c < F; c++) {
      const int s = id(a, b, c);
      const double *gs[8];
      for (int o = 0; o < 8; o++) gs[o] = g[id(a + ((o >> 2) & 1), b + ((o >> 1) & 1), c + (o & 1))].data();
      Bundle in[1] = {Bundle{parts[s].data(), (long)parts[s].size()}};
      push(N, F, a, b, c, gs, in, 1, r);
      double *to[27];
      for (int d = 0; d < 27; d++) { out[s][d].resize(r.count[d] * REC); to[d] = out[s][d].data(); }
      scatter(r, to);
    }
    bundles.swap(out);
  }
  // the program's last CFs: every subdomain's summary from the particles arriving at it
  double total[6] = {0};
  for (int a = 0; a < F; a++) for (int b = 0; b < F; b++) for (int c = 0; c < F; c++) {
    Bundle in[27];
    arriving(a, b, c, in);
    double s[6] = {0};
    if (!summarySums(N, F, id(a, b, c), in, s)) { std::fprintf(stderr, "pic3d_seq: a particle ended outside subdomain (%d, %d, %d)\n", a, b, c); return 1; }
    for (int k = 0; k < 6; k++) total[k] += s[k];
  }
  // every sum checked, so none is computed for nothing: the count, the mass and the ids are exact
  if (!summaryHolds(total, NP)) { std::fprintf(stderr, "pic3d_seq: the final summaries do not add up (%.0f particles, mass %.17g, ids %.17g)\n", total[0], total[1], total[2]); return 1; }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = (double)(std::clock() - c0) / CLOCKS_PER_SEC;
  double sx = 0;
  long count = 0;
  for (auto &bs : bundles) for (auto &b : bs) for (size_t o = 0; o < b.size(); o += REC) { sx += b[o + 2]; count++; }
  if (count != NP) { std::fprintf(stderr, "pic3d_seq: %ld particles at the end, %ld at the start\n", count, NP); return 1; }
  std::printf("%.6f %.17g %.6f\n", secs, sx, cpu);
  return 0;
}
