// Per-thread CPU clock for the trace layer: clock_gettime(CLOCK_THREAD_CPUTIME_ID) exposed to
// JavaScript through plain N-API (no node-addon-api). NAPI_MODULE_INIT makes the module
// context-aware, so it loads in the main thread and in every worker_thread; the clock read is
// per calling OS thread, which is exactly the worker running the CF.
// It also pins the calling thread to a set of CPUs (sched_setaffinity, Linux): a worker lane pins
// itself, and Node has no call for it.
#ifdef __linux__
#define _GNU_SOURCE
#include <sched.h>
#endif
#include <errno.h>
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

// pinThread([cpu, ...]): the calling thread may run on those CPUs only. Returns 0, or the errno
// (EINVAL: none of them is usable; ENOSYS: not Linux).
static napi_value PinThread(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], out;
  int err = EINVAL;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  bool isArray = false;
  if (argc >= 1) napi_is_array(env, argv[0], &isArray);
  if (isArray) {
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    uint32_t n = 0;
    napi_get_array_length(env, argv[0], &n);
    int any = 0;
    for (uint32_t i = 0; i < n; i++) {
      napi_value v;
      int32_t cpu = -1;
      if (napi_get_element(env, argv[0], i, &v) == napi_ok && napi_get_value_int32(env, v, &cpu) == napi_ok && cpu >= 0 && cpu < CPU_SETSIZE) {
        CPU_SET(cpu, &set);
        any = 1;
      }
    }
    err = any ? (sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : errno) : EINVAL;
#else
    err = ENOSYS;
#endif
  }
  napi_create_int32(env, err, &out);
  return out;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "threadCpuNs", NAPI_AUTO_LENGTH, ThreadCpuNs, NULL, &fn);
  napi_set_named_property(env, exports, "threadCpuNs", fn);
  napi_create_function(env, "monoNs", NAPI_AUTO_LENGTH, MonoNs, NULL, &fn);
  napi_set_named_property(env, exports, "monoNs", fn);
  napi_create_function(env, "pinThread", NAPI_AUTO_LENGTH, PinThread, NULL, &fn);
  napi_set_named_property(env, exports, "pinThread", fn);
  return exports;
}
