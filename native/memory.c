// Process memory policy for large DF buffers: glibc serves every allocation above its mmap
// threshold with a fresh mapping and returns it to the kernel when freed, so each received DF of
// a MiB or more is paid for again in page faults (13 µs a page on a paravirtualised machine
// measured here: 3.3 ms a MiB, more than the transfer). keepFreedMemory() makes large blocks come
// from the heap and keeps up to `trim` freed bytes for reuse (what MPI libraries do for their
// buffers, e.g. Open MPI's leave_pinned). Elsewhere than glibc it does nothing and says so.
#include <node_api.h>
#include <stdbool.h>
#if defined(__GLIBC__)
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

static napi_value KeepFreedMemory(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  double trim = 0;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc >= 1) napi_get_value_double(env, argv[0], &trim);
  bool ok = false;
#if defined(__GLIBC__)
  if (trim > 2147483647.0) trim = 2147483647.0; // mallopt takes an int
  if (trim >= 0) ok = mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, (int)trim) == 1;
#endif
  napi_value out;
  napi_get_boolean(env, ok, &out);
  return out;
}

// A very large block from the kept heap is worse than fresh pages: calloc clears it, page by
// page, before returning (glibc with transparent huge pages on the heap: 4.5 s for 512 MiB on
// a busy machine), and a node's main thread that allocates a received DF that way sends no
// heartbeat meanwhile. freshMappings(true) lets the next allocations be mappings again (zero
// pages the kernel supplies as they are first written, during the transfer), false restores
// the policy.
static napi_value FreshMappings(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  bool on = false;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc >= 1) napi_get_value_bool(env, argv[0], &on);
#if defined(__GLIBC__)
  mallopt(M_MMAP_MAX, on ? 65536 : 0);
#endif
  return NULL;
}

// heapStats(): the C heap of the whole process as glibc's mallinfo2() counts it, summed over
// its arenas (the main one and one per thread that met contention): {arena: bytes the arenas
// hold from the kernel, inUse, free: held but free, keep: the main arena's top that trimming
// could return, mmapped: blocks served as their own mappings, mmaps: how many}; undefined
// elsewhere than glibc 2.33+. Cheap (a walk of the arenas' bins). heapInfo() is malloc_info()'s
// XML, one <heap> per arena, for a finer look.
static void set(napi_env env, napi_value o, const char* k, double v) {
  napi_value x;
  napi_create_double(env, v, &x);
  napi_set_named_property(env, o, k, x);
}

static napi_value HeapStats(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  struct mallinfo2 m = mallinfo2();
  napi_create_object(env, &out);
  set(env, out, "arena", (double)m.arena);
  set(env, out, "inUse", (double)m.uordblks);
  set(env, out, "free", (double)m.fordblks);
  set(env, out, "keep", (double)m.keepcost);
  set(env, out, "mmapped", (double)m.hblkhd);
  set(env, out, "mmaps", (double)m.hblks);
#else
  napi_get_undefined(env, &out);
#endif
  return out;
}

static napi_value HeapInfo(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  napi_get_undefined(env, &out);
#if defined(__GLIBC__)
  char* buf = NULL;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  if (f) {
    int r = malloc_info(0, f);
    fclose(f);
    if (r == 0 && buf) napi_create_string_utf8(env, buf, len, &out);
    free(buf);
  }
#endif
  return out;
}

// growHeap(bytes): grow the C heap by `bytes` of pages already faulted in, on a thread of its
// own, and return at once (false: a growth is still under way, or not glibc). Under
// keepFreedMemory a run's memory comes from one heap that is never trimmed, so every page of its
// high water is faulted in once, by whichever thread first writes it: the PIC at the seed's size
// took ~110 k of its ~120 k minor faults inside its kernels in the first ~40 % of the run, at
// 4–7 µs a fault (docs/pic.md, "Fresh pages faulted in ahead"). Here a block is taken from the
// heap, its pages are populated in one call (MADV_POPULATE_WRITE, Linux 5.14+: ~2.6 µs a page
// against ~3.5 for touching them) after the block is freed into the heap's top, kept, and the
// next outputs are carved from pages already there. Without MADV_POPULATE_WRITE nothing is
// populated (touching would write into blocks other threads may have taken meanwhile). The
// runtime decides when (runtime/exec/shm.ts).
#if defined(__GLIBC__)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
static volatile int growing = 0;
static size_t grown = 0;

static void* Grow(void* arg) {
  size_t n = (size_t)(uintptr_t)arg;
  // a block of n bytes taken and given back: from the top, it moves the heap's end (brk) past n
  // bytes of top; from a free hole inside the heap, it changes nothing
  void* volatile p = malloc(n); // volatile: the compiler would drop a malloc freed at once
  free(p);
  // then only the top is populated, [brk - top, brk): a hole inside the heap may hold pages never
  // touched (the tail of a buffer rounded up to its size class), which populating it would make
  // resident for nothing (the PIC's peak RSS rose 50 MB that way). Populating writes nothing, so
  // another thread carving the top meanwhile loses nothing.
  struct mallinfo2 m = mallinfo2();
  uintptr_t end = (uintptr_t)sbrk(0) & ~(uintptr_t)4095;
  uintptr_t a = ((uintptr_t)sbrk(0) - m.keepcost + 4095) & ~(uintptr_t)4095;
  if (end > a) {
    if (madvise((void*)a, end - a, MADV_POPULATE_WRITE) == 0) __atomic_add_fetch(&grown, end - a, __ATOMIC_RELAXED);
  }
  __atomic_store_n(&growing, 0, __ATOMIC_RELEASE);
  return NULL;
}
#endif

static napi_value GrowHeap(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  double bytes = 0;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc >= 1) napi_get_value_double(env, argv[0], &bytes);
  bool ok = false;
#if defined(__GLIBC__)
  int idle = 0;
  if (bytes >= 4096 && __atomic_compare_exchange_n(&growing, &idle, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&at, 64 * 1024);
    ok = pthread_create(&t, &at, Grow, (void*)(uintptr_t)bytes) == 0;
    pthread_attr_destroy(&at);
    if (!ok) __atomic_store_n(&growing, 0, __ATOMIC_RELEASE);
  }
#endif
  napi_value out;
  napi_get_boolean(env, ok, &out);
  return out;
}

// heapGrown(): bytes growHeap has faulted in so far (-1 while a growth is under way).
static napi_value HeapGrown(napi_env env, napi_callback_info info) {
  (void)info;
  double v = 0;
#if defined(__GLIBC__)
  v = __atomic_load_n(&growing, __ATOMIC_ACQUIRE) ? -1 : (double)__atomic_load_n(&grown, __ATOMIC_RELAXED);
#endif
  napi_value out;
  napi_create_double(env, v, &out);
  return out;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "keepFreedMemory", NAPI_AUTO_LENGTH, KeepFreedMemory, NULL, &fn);
  napi_set_named_property(env, exports, "keepFreedMemory", fn);
  napi_create_function(env, "freshMappings", NAPI_AUTO_LENGTH, FreshMappings, NULL, &fn);
  napi_set_named_property(env, exports, "freshMappings", fn);
  napi_create_function(env, "heapStats", NAPI_AUTO_LENGTH, HeapStats, NULL, &fn);
  napi_set_named_property(env, exports, "heapStats", fn);
  napi_create_function(env, "heapInfo", NAPI_AUTO_LENGTH, HeapInfo, NULL, &fn);
  napi_set_named_property(env, exports, "heapInfo", fn);
  napi_create_function(env, "growHeap", NAPI_AUTO_LENGTH, GrowHeap, NULL, &fn);
  napi_set_named_property(env, exports, "growHeap", fn);
  napi_create_function(env, "heapGrown", NAPI_AUTO_LENGTH, HeapGrown, NULL, &fn);
  napi_set_named_property(env, exports, "heapGrown", fn);
  return exports;
}
