// A descriptor of the caller's own for a socket another thread writes directly (the transport's
// direct links, src/runtime/transport/tcp.ts): Node closes a socket's descriptor when the peer
// resets it, before JavaScript hears of it, and the number can be reused by the next file opened
// in the process. A thread writing through a duplicate meanwhile gets EPIPE or ECONNRESET from
// the same socket, never writes into another file; the transport closes the duplicate when it
// retires the link.
#include <node_api.h>
#include <unistd.h>
#include <fcntl.h>

static napi_value Dup(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int fd = -1;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc >= 1) napi_get_value_int32(env, argv[0], &fd);
  int copy = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
  napi_value out;
  napi_create_int32(env, copy, &out);
  return out;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "dup", NAPI_AUTO_LENGTH, Dup, NULL, &fn);
  napi_set_named_property(env, exports, "dup", fn);
  return exports;
}
