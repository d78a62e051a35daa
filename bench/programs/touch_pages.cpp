// Touches MB of fresh memory in huge pages and lets it go: run just before a timed run, it leaves
// the guest's free pages backed by the host. On a virtual machine that reports freed memory to its
// host (virtio-balloon free page reporting), a page new to a process may be new to the host too,
// and its first touch then costs a host fault: ~2 ms a MiB here against ~0.07 ms once backed, so a
// run's time depended on what ran in the seconds before it (docs/pic.md, "Pages the host backs").
// Prints "<MiB> <seconds>" (the touch alone): its speed says which pages the run before left.
//   touch_pages MB
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sys/mman.h>

int main(int argc, char **argv) {
  if (argc != 2 || std::atol(argv[1]) <= 0) { std::fprintf(stderr, "usage: touch_pages MB (a whole number above 0)\n"); return 2; }
  const size_t huge = 2u << 20, bytes = (size_t)std::atol(argv[1]) << 20;
  char *raw = (char *)mmap(nullptr, bytes + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) { std::perror("touch_pages: mmap"); return 1; }
  // aligned to a huge page, so every 2 MiB of it may be one
  char *p = (char *)(((size_t)raw + huge - 1) & ~(huge - 1));
  madvise(p, bytes, MADV_HUGEPAGE);
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%zu %.6f\n", bytes >> 20, secs);
  return 0;
}
