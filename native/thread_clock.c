// Per-thread CPU clock for the trace layer: clock_gettime(CLOCK_THREAD_CPUTIME_ID) exposed to
// JavaScript through plain N-API (no node-addon-api). NAPI_MODULE_INIT makes the module
// context-aware, so it loads in the main thread and in every worker_thread; the clock read is
// per calling OS thread, which is exactly the worker running the CF.
#include <node_api.h>
#include <time.h>

static napi_value ThreadCpuNs(napi_env env, napi_callback_info info) {
  (void)info;
  struct timespec ts;
  double ns = -1;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) ns = (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
  napi_value out;
  napi_create_double(env, ns, &out);
  return out;
}

// CLOCK_MONOTONIC in ns (what process.hrtime uses), without BigInt allocation. A float64 holds
// it exactly for ~104 days of uptime and to a few ns beyond.
static napi_value MonoNs(napi_env env, napi_callback_info info) {
  (void)info;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  napi_value out;
  napi_create_double(env, (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec, &out);
  return out;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "threadCpuNs", NAPI_AUTO_LENGTH, ThreadCpuNs, NULL, &fn);
  napi_set_named_property(env, exports, "threadCpuNs", fn);
  napi_create_function(env, "monoNs", NAPI_AUTO_LENGTH, MonoNs, NULL, &fn);
  napi_set_named_property(env, exports, "monoNs", fn);
  return exports;
}
