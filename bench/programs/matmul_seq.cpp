// Sequential baseline of the C++ ucode benchmark (bench/cpp.ts): the block product of
// examples/matmul-cpp with the same kernels (kernel.h), the same block sizes and the same
// allocations, in one plain loop. Prints the seconds of the product and a checksum.
//   matmul_seq <n> <nb>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernel.h"

static double a(long r, long c) { return ((r * 7 + c * 3) % 11) / 10.0 - 0.5; }
static double b(long r, long c) { return ((r * 5 + c * 13) % 17) / 8.0 - 1; }

int main(int argc, char **argv) {
  if (argc < 3) { std::fprintf(stderr, "usage: matmul_seq n nb\n"); return 2; }
  const int n = std::atoi(argv[1]), nb = std::atoi(argv[2]), bs = n / nb;
  const long bb = (long)bs * bs;
  std::vector<double *> A(nb * nb), B(nb * nb);
  for (int i = 0; i < nb; i++)
    for (int j = 0; j < nb; j++) {
      A[i * nb + j] = static_cast<double *>(std::malloc(bb * sizeof(double)));
      B[i * nb + j] = static_cast<double *>(std::malloc(bb * sizeof(double)));
      for (int r = 0; r < bs; r++)
        for (int c = 0; c < bs; c++) {
          A[i * nb + j][r * bs + c] = a((long)i * bs + r, (long)j * bs + c);
          B[i * nb + j][r * bs + c] = b((long)i * bs + r, (long)j * bs + c);
        }
    }
  double checksum = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < nb; i++)
    for (int j = 0; j < nb; j++) {
      double *s = nullptr;
      for (int k = 0; k < nb; k++) {
        // a fresh zeroed block per product, a fresh block per partial sum: as the program does
        double *p = static_cast<double *>(std::calloc(bb, sizeof(double)));
        block_mul(bs, A[i * nb + k], B[k * nb + j], p);
        if (!s) { s = p; continue; }
        double *t = static_cast<double *>(std::malloc(bb * sizeof(double)));
        block_add(bb, s, p, t);
        std::free(s);
        std::free(p);
        s = t;
      }
      for (long e = 0; e < bb; e++) checksum += s[e];
      std::free(s);
    }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%.6f %.9g\n", secs, checksum);
  return 0;
}
