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

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "keepFreedMemory", NAPI_AUTO_LENGTH, KeepFreedMemory, NULL, &fn);
  napi_set_named_property(env, exports, "keepFreedMemory", fn);
  napi_create_function(env, "freshMappings", NAPI_AUTO_LENGTH, FreshMappings, NULL, &fn);
  napi_set_named_property(env, exports, "freshMappings", fn);
  return exports;
}
