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
#include <stdio.h>
#include <stdlib.h>
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
  return exports;
}
