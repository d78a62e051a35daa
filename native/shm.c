// Memory the node processes of one machine share, and sleeping on a word of it: the SPMD layer's
// barrier among processes on one host (src/spmd/segment.ts), and the transport's rings
// (src/runtime/transport/ring.ts), whose memory is a nameless memfd the peer opens through
// /proc/<pid>/fd/<n>: no name in any directory, so no file outlives a killed node. A file under /dev/shm is mapped
// MAP_SHARED and handed to JavaScript as an ArrayBuffer over the mapping; Atomics load, store,
// add and compareExchange work on it as on any integer typed array. Atomics.wait and notify do
// not: V8 queues its waiters per process, so a rank of another process could never wake them.
// Waits here are the kernel's futex on the shared (not process-private) mapping, which the kernel
// keys by the page itself: a wake from any process that maps the file reaches every sleeper.
#include <node_api.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static napi_value num(napi_env env, double v) {
  napi_value out;
  napi_create_double(env, v, &out);
  return out;
}

static int args(napi_env env, napi_callback_info info, size_t want, napi_value* argv) {
  size_t argc = want;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  return argc >= want;
}

static char* str(napi_env env, napi_value v, char* buf, size_t size) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, v, buf, size, &len) != napi_ok || len + 1 >= size) return NULL;
  return buf;
}

// open(path, bytes, create): a descriptor of the file, created with that size (exclusively) when
// create is true; -errno on failure.
static napi_value Open(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  char path[512];
  double bytes = 0;
  bool create = false;
  if (!args(env, info, 3, argv) || !str(env, argv[0], path, sizeof path)) return num(env, -EINVAL);
  napi_get_value_double(env, argv[1], &bytes);
  napi_get_value_bool(env, argv[2], &create);
  int fd = open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0), 0600);
  if (fd < 0) return num(env, -errno);
  if (create && ftruncate(fd, (off_t)bytes) != 0) {
    int e = errno;
    close(fd);
    unlink(path);
    return num(env, -e);
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || (double)st.st_size < bytes) {
    close(fd);
    return num(env, -ERANGE);
  }
  return num(env, fd);
}

// memfd(name, bytes): a descriptor of a new nameless file in memory of that size (the name shows
// only in /proc/<pid>/fd and maps); -errno on failure (-ENOSYS: a kernel without memfd_create).
static napi_value Memfd(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  char name[250];
  double bytes = 0;
  if (!args(env, info, 2, argv) || !str(env, argv[0], name, sizeof name)) return num(env, -EINVAL);
  napi_get_value_double(env, argv[1], &bytes);
#ifdef SYS_memfd_create
  int fd = (int)syscall(SYS_memfd_create, name, 1U /* MFD_CLOEXEC */);
#else
  int fd = -1;
  errno = ENOSYS;
#endif
  if (fd < 0) return num(env, -errno);
  if (ftruncate(fd, (off_t)bytes) != 0) {
    int e = errno;
    close(fd);
    return num(env, -e);
  }
  return num(env, fd);
}

static napi_value Unlink(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  char path[512];
  if (!args(env, info, 1, argv) || !str(env, argv[0], path, sizeof path)) return num(env, -EINVAL);
  return num(env, unlink(path) == 0 ? 0 : -errno);
}

static napi_value Close(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  int32_t fd = -1;
  if (!args(env, info, 1, argv)) return num(env, -EINVAL);
  napi_get_value_int32(env, argv[0], &fd);
  return num(env, close(fd) == 0 ? 0 : -errno);
}

static void unmap(napi_env env, void* data, void* hint) {
  (void)env;
  munmap(data, (size_t)(uintptr_t)hint);
}

// map(fd, bytes): an ArrayBuffer over the file's first bytes, unmapped when it is collected (the
// descriptor may be closed meanwhile; the mapping holds the file). Any thread of the process may
// map the same descriptor: each gets its own buffer over the same memory.
static napi_value Map(napi_env env, napi_callback_info info) {
  napi_value argv[2], out;
  int32_t fd = -1;
  double bytes = 0;
  if (!args(env, info, 2, argv)) return num(env, -EINVAL);
  napi_get_value_int32(env, argv[0], &fd);
  napi_get_value_double(env, argv[1], &bytes);
  size_t len = (size_t)bytes;
  if (len == 0) return num(env, -EINVAL);
  void* p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return num(env, -errno);
  if (napi_create_external_arraybuffer(env, p, len, unmap, (void*)(uintptr_t)len, &out) != napi_ok) {
    munmap(p, len);
    return num(env, -ENOTSUP);
  }
  return out;
}

static int32_t* word(napi_env env, napi_value buf, napi_value index) {
  void* data = NULL;
  size_t len = 0;
  int32_t i = -1;
  if (napi_get_arraybuffer_info(env, buf, &data, &len) != napi_ok) return NULL;
  napi_get_value_int32(env, index, &i);
  if (i < 0 || (size_t)(i + 1) * 4 > len) return NULL;
  return (int32_t*)data + i;
}

// wait(buffer, index, expected, ms): sleep while word `index` holds `expected`, at most ms (< 0:
// no limit). 0: woken (or spuriously; the caller looks again), 1: the word held another value,
// 2: timed out; -errno on a bad argument.
static napi_value Wait(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  int32_t expected = 0;
  double ms = -1;
  if (!args(env, info, 4, argv)) return num(env, -EINVAL);
  int32_t* w = word(env, argv[0], argv[1]);
  if (!w) return num(env, -EINVAL);
  napi_get_value_int32(env, argv[2], &expected);
  napi_get_value_double(env, argv[3], &ms);
  struct timespec ts, *tp = NULL;
  if (ms >= 0) {
    ts.tv_sec = (time_t)(ms / 1000);
    ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000) * 1e6);
    tp = &ts;
  }
  long r = syscall(SYS_futex, w, FUTEX_WAIT, expected, tp, NULL, 0);
  if (r == 0) return num(env, 0);
  if (errno == EAGAIN) return num(env, 1);
  if (errno == ETIMEDOUT) return num(env, 2);
  return num(env, 0);  // EINTR: as a wake-up, the caller looks again
}

// wake(buffer, index, count): wake up to count sleepers on word `index` (in any process); how many woke.
static napi_value Wake(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  int32_t count = INT_MAX;
  if (!args(env, info, 3, argv)) return num(env, -EINVAL);
  int32_t* w = word(env, argv[0], argv[1]);
  if (!w) return num(env, -EINVAL);
  napi_get_value_int32(env, argv[2], &count);
  long r = syscall(SYS_futex, w, FUTEX_WAKE, count, NULL, NULL, 0);
  return num(env, r < 0 ? -errno : (double)r);
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
    {"open", NULL, Open, NULL, NULL, NULL, napi_default, NULL},
    {"memfd", NULL, Memfd, NULL, NULL, NULL, napi_default, NULL},
    {"unlink", NULL, Unlink, NULL, NULL, NULL, napi_default, NULL},
    {"close", NULL, Close, NULL, NULL, NULL, napi_default, NULL},
    {"map", NULL, Map, NULL, NULL, NULL, napi_default, NULL},
    {"wait", NULL, Wait, NULL, NULL, NULL, napi_default, NULL},
    {"wake", NULL, Wake, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
