// The luna_ucode addon: runs C++ ucodes compiled into a shared library (see
// src/ucode/cpp/build.ts) from JavaScript, on the system thread and on every worker thread.
//
// Plain N-API, context-aware (NAPI_MODULE_INIT), so every worker thread loads its own instance;
// the library itself is dlopen'ed once per process. The JavaScript side (src/ucode/cpp/native.ts)
// does the marshalling that is cheap in JIT-compiled code — reading DF handles, building the
// output DfValues — and exchanges scalars through a per-thread scratch ArrayBuffer whose bytes
// this file reads and writes directly, so a call costs one N-API transition plus one per string
// or raw argument. Raw outputs are SharedArrayBuffers allocated by calling back into
// JavaScript (Node 20's N-API cannot create one), so the runtime owns them from the start.
//
// Faults of C++ code become errors of the call that ran it, so the runtime names the fragment,
// ends the run in order (traces flushed) and never reports a corrupted run as a success:
// - A crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) while a C++ ucode runs: a signal handler
//   on an alternate stack jumps back to the call (siglongjmp), which throws. The ucode's frames
//   are abandoned as exit() would abandon them; the process is then marked corrupted, and a
//   later fatal signal anywhere ends it at once with a message naming that ucode, formatted
//   beforehand in static storage (the heap may be what was overwritten). At any other time the
//   signal goes to the handler that was there before (V8 uses SIGSEGV for WebAssembly bounds
//   checks).
// - exit() and its kin called by a ucode (the library is linked with --wrap, see ucenv.h):
//   reported through fail(), then the same jump.
// - An out-of-bounds write into a DF buffer: every buffer the C++ code creates has a guard
//   after its end (guardBytes), as has every raw input created so; the guards are checked
//   when the ucode returns.
#include <dlfcn.h>
#include <node_api.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "luna_ucode_abi.h"

namespace {

// 128: a deposit row of examples/pic3d reads 3 rows' 48 leaving arrays and 16 staying ones and
// makes 32 DFs (99); a sweep group reads every layer's 64 deposit blocks, φ and its ints (77).
constexpr int kMaxParams = 128;
// Scratch layout (shared with src/ucode/cpp/native.ts): per parameter 4 int32 (type, int, ref,
// guard bytes after a raw input) from byte 0, then per parameter one float64 (real).
constexpr size_t kIntsBytes = kMaxParams * 4 * sizeof(int32_t);
constexpr size_t kScratchBytes = kIntsBytes + kMaxParams * sizeof(double);

// ------------------------------------------------------------------------------ crash guard
thread_local volatile sig_atomic_t g_inUcode = 0;
/** where a fatal signal in the running ucode jumps to (Call's frame), and which signal it was */
thread_local sigjmp_buf *g_jump = nullptr;
thread_local volatile sig_atomic_t g_caught = 0;
/** the ucode running on this thread, a name in static storage (see internName) */
thread_local const char *g_ucode = nullptr;

/**
 * Set once a C++ ucode crashed or overran a buffer: the process's memory may be corrupted, and a
 * fatal signal after that (in free(), in a later ucode, anywhere) prints g_taintText and exits.
 */
volatile sig_atomic_t g_tainted = 0;
char g_taintText[512];

// Ucode names in static storage, so a crash handler never reads the heap. Interned once per
// name; past the arena a generic name stands in.
char g_names[16384];
size_t g_namesUsed = 0;
std::mutex g_namesLock;

const char *internName(const std::string &name) {
  std::lock_guard<std::mutex> lock(g_namesLock);
  for (size_t at = 0; at < g_namesUsed; at += strlen(g_names + at) + 1)
    if (name == g_names + at) return g_names + at;
  if (g_namesUsed + name.size() + 1 > sizeof g_names) return "(a C++ ucode)";
  char *p = g_names + g_namesUsed;
  memcpy(p, name.c_str(), name.size() + 1);
  g_namesUsed += name.size() + 1;
  return p;
}

/** Append s to the static buffer `out` of `cap` bytes at `*len` (cut when full). */
void append(char *out, size_t cap, size_t *len, const char *s) {
  while (*s && *len + 1 < cap) out[(*len)++] = *s++;
  out[*len] = 0;
}

struct sigaction g_previous[NSIG];
std::once_flag g_handlersOnce;
const int kGuarded[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

const char *signalText(int sig) {
  switch (sig) {
    case SIGSEGV: return "segmentation fault (SIGSEGV)";
    case SIGBUS: return "bus error (SIGBUS)";
    case SIGFPE: return "arithmetic exception (SIGFPE, e.g. an integer division by zero)";
    case SIGILL: return "illegal instruction (SIGILL)";
    case SIGABRT: return "abort() (SIGABRT, e.g. a failed assert)";
    default: return "fatal signal";
  }
}

void writeAll(const char *s, size_t n) {
  while (n > 0) {
    ssize_t w = write(2, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

/**
 * The process's memory may be corrupted by `ucode`: a later crash prints the signal, then
 * `before` ucode `after` (what it did, in static storage), and stops the process.
 */
void taint(const char *before, const char *ucode, const char *after) {
  char text[sizeof g_taintText];
  size_t n = 0;
  append(text, sizeof text, &n, before);
  append(text, sizeof text, &n, ucode);
  append(text, sizeof text, &n, after);
  append(text, sizeof text, &n, " (memory it corrupted?): the process stops\n");
  if (!g_tainted) {
    memcpy(g_taintText, text, n + 1);
    g_tainted = 1;
  }
}

void onFatalSignal(int sig, siginfo_t *info, void *uctx) {
  if (g_inUcode && g_jump != nullptr) {
    // Back to the call, which throws (Call). Only the signal number crosses.
    g_inUcode = 0;
    g_caught = sig;
    siglongjmp(*g_jump, 1);
  }
  if (g_jump != nullptr && !g_tainted) {
    // in a host callback of a ucode (V8 code: no jump out of it), most likely because the
    // ucode corrupted memory
    taint(" in a call C++ ucode ", g_ucode ? g_ucode : "(unknown)", " made to the runtime");
  }
  if (g_tainted) {
    // Only async-signal-safe calls: write(2) of preformatted text, then _exit.
    static const char head[] = "luna: error: ";
    writeAll(head, sizeof head - 1);
    const char *what = signalText(sig);
    writeAll(what, strlen(what));
    writeAll(g_taintText, strlen(g_taintText));
    _exit(1);
  }
  const struct sigaction &prev = g_previous[sig];
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction != nullptr) prev.sa_sigaction(sig, info, uctx);
    return;
  }
  if (prev.sa_handler == SIG_IGN) return;
  if (prev.sa_handler == SIG_DFL) {
    // Restore the default action; returning re-executes the faulting instruction (or, for
    // abort(), raise() is repeated by libc), which then ends the process as it would have.
    sigaction(sig, &prev, nullptr);
    return;
  }
  prev.sa_handler(sig);
}

/** exit() from a ucode that --wrap did not reach (another library called it): at least say so. */
void onExit() {
  if (!g_inUcode || g_ucode == nullptr) return;
  static const char head[] = "luna: error: C++ ucode ";
  static const char tail[] = " called exit(): a ucode must not end the process; it stops\n";
  writeAll(head, sizeof head - 1);
  writeAll(g_ucode, strlen(g_ucode));
  writeAll(tail, sizeof tail - 1);
}

void installHandlers() {
  std::call_once(g_handlersOnce, [] {
    atexit(onExit);
    for (int sig : kGuarded) {
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_sigaction = onFatalSignal;
      sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
      sigemptyset(&sa.sa_mask);
      sigaction(sig, &sa, &g_previous[sig]);
    }
  });
}

/** An alternate signal stack for this thread (a stack overflow in user code must still report). */
struct AltStack {
  void *mem = nullptr;
  AltStack() {
    stack_t old;
    if (sigaltstack(nullptr, &old) == 0 && !(old.ss_flags & SS_DISABLE)) return;  // one is there already
    size_t size = 64 * 1024;
    mem = malloc(size);
    if (!mem) return;
    stack_t ss;
    ss.ss_sp = mem;
    ss.ss_size = size;
    ss.ss_flags = 0;
    if (sigaltstack(&ss, nullptr) != 0) {
      free(mem);
      mem = nullptr;
    }
  }
  ~AltStack() {
    if (!mem) return;
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, nullptr);
    free(mem);
  }
};
thread_local AltStack *g_altStack = nullptr;
struct AltStackOwner {
  ~AltStackOwner() { delete g_altStack; }
};
thread_local AltStackOwner g_altStackOwner;

/** Marks the span where a signal is the ucode's fault; host callbacks step outside it. */
struct OutsideUcode {
  sig_atomic_t saved;
  OutsideUcode() : saved(g_inUcode) { g_inUcode = 0; }
  ~OutsideUcode() { g_inUcode = saved; }
};

// ------------------------------------------------------------------------------ libraries
std::mutex g_libsLock;
std::map<std::string, void *> g_libs;

// ------------------------------------------------------------------------------ per thread
struct Entry {
  luna_entry fn;
  int nargs;
  std::string kinds;
  /** the ucode's name, in static storage */
  const char *ucode;
};

/** A guarded buffer of the call in progress: `n` bytes at `p`, then `guard` bytes of kGuard. */
struct Guarded {
  char *p;
  uint64_t n;
  uint64_t guard;
  int32_t ref;  // the host table index of the buffer (-1: an input, see param)
  int32_t param;
};

struct Env {
  napi_env env = nullptr;
  std::vector<Entry> entries;
  char *scratch = nullptr;
  napi_ref scratchRef = nullptr;
  napi_ref alloc = nullptr;    // (bytes) => Uint8Array over a new SharedArrayBuffer
  napi_ref nameOf = nullptr;   // (param) => display name of the DF
  napi_ref strings = nullptr;  // array: string outputs by parameter
  napi_ref ask = nullptr;      // (op, kind, payload) => the context or a request's answer (ABI 2)
  // the call in progress
  int nargs = 0;
  int allocs = 0;
  std::string error;
  bool failed = false;
  std::string name;
  std::string answer, label, gid;  // what the last context/request host call returned
  std::vector<std::string> strIn;
  std::vector<Guarded> guarded;
};

// ------------------------------------------------------------------------------ buffer guards
// A tiled pattern rather than one byte: writing a constant past the end (zeros, 0xff) is caught.
const unsigned char kGuard[16] = {0xa5, 0x5a, 0xc3, 0x3c, 0x96, 0x69, 0x0f, 0xf0, 0x5a, 0xa5, 0x3c, 0xc3, 0x69, 0x96, 0xf0, 0x0f};

/**
 * The guard pattern repeated over a page, so guards are written and checked a page at a time
 * (memcpy, memcmp): a call checks the guard of every C++-made input too, and byte by byte the
 * 4 KiB guards of a fragment with 27 large inputs cost ~100 µs a call.
 */
struct GuardPage {
  unsigned char bytes[4096];
  GuardPage() {
    for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = kGuard[i & 15];
  }
};
const GuardPage kGuardPage;

void fillGuard(char *p, uint64_t n) {
  for (uint64_t i = 0; i < n; i += sizeof kGuardPage.bytes) {
    const uint64_t k = n - i < sizeof kGuardPage.bytes ? n - i : sizeof kGuardPage.bytes;
    memcpy(p + i, kGuardPage.bytes, static_cast<size_t>(k));
  }
}

/** Offset of the first damaged guard byte, or -1. */
int64_t damagedGuard(const char *p, uint64_t n) {
  for (uint64_t i = 0; i < n; i += sizeof kGuardPage.bytes) {
    const uint64_t k = n - i < sizeof kGuardPage.bytes ? n - i : sizeof kGuardPage.bytes;
    if (memcmp(p + i, kGuardPage.bytes, static_cast<size_t>(k)) == 0) continue;
    for (uint64_t j = i; j < i + k; j++)
      if (static_cast<unsigned char>(p[j]) != kGuard[j & 15]) return static_cast<int64_t>(j);
  }
  return -1;
}

void throwError(napi_env env, const std::string &msg) { napi_throw_error(env, nullptr, msg.c_str()); }

/** Message of the pending JavaScript exception, cleared. */
std::string takeException(napi_env env) {
  napi_value ex, str;
  if (napi_get_and_clear_last_exception(env, &ex) != napi_ok) return "unknown error";
  if (napi_coerce_to_string(env, ex, &str) != napi_ok) return "unknown error";
  size_t len = 0;
  napi_get_value_string_utf8(env, str, nullptr, 0, &len);
  std::string s(len, '\0');
  napi_get_value_string_utf8(env, str, &s[0], len + 1, &len);
  return s;
}

std::string stringArg(napi_env env, napi_value v) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, v, nullptr, 0, &len) != napi_ok) return std::string();
  std::string s(len, '\0');
  napi_get_value_string_utf8(env, v, &s[0], len + 1, &len);
  return s;
}

void finalizeEnv(napi_env env, void *data, void *) {
  Env *e = static_cast<Env *>(data);
  if (e->scratchRef) napi_delete_reference(env, e->scratchRef);
  if (e->alloc) napi_delete_reference(env, e->alloc);
  if (e->nameOf) napi_delete_reference(env, e->nameOf);
  if (e->strings) napi_delete_reference(env, e->strings);
  if (e->ask) napi_delete_reference(env, e->ask);
  delete e;
}

Env *envOf(napi_env env) {
  void *d = nullptr;
  napi_get_instance_data(env, &d);
  return static_cast<Env *>(d);
}

int32_t *ints(Env *e) { return reinterpret_cast<int32_t *>(e->scratch); }
double *reals(Env *e) { return reinterpret_cast<double *>(e->scratch + kIntsBytes); }

// ------------------------------------------------------------------------------ host services
void *hostAlloc(void *ctx, uint64_t bytes, int32_t *ref) {
  OutsideUcode outside;
  Env *e = static_cast<Env *>(ctx);
  napi_env env = e->env;
  napi_value fn, global, arg, result;
  if (napi_get_reference_value(env, e->alloc, &fn) != napi_ok || napi_get_global(env, &global) != napi_ok) return nullptr;
  napi_create_double(env, static_cast<double>(bytes), &arg);
  if (napi_call_function(env, global, fn, 1, &arg, &result) != napi_ok) {
    takeException(env);  // e.g. RangeError: the C++ side reports it as an allocation failure
    return nullptr;
  }
  void *data = nullptr;
  size_t length = 0;
  napi_typedarray_type type;
  if (napi_get_typedarray_info(env, result, &type, &length, &data, nullptr, nullptr) != napi_ok || length < bytes) return nullptr;
  *ref = e->nargs + e->allocs++;
  if (length > bytes) {
    // the allocator put a guard after the buffer (native.ts guardBytes): checked on return
    fillGuard(static_cast<char *>(data) + bytes, length - bytes);
    e->guarded.push_back(Guarded{static_cast<char *>(data), bytes, length - bytes, *ref, -1});
  }
  // a zero-length buffer may have no backing store: any non-null pointer will do
  return data != nullptr ? data : reinterpret_cast<void *>(e->scratch);
}

const char *hostName(void *ctx, int32_t param) {
  OutsideUcode outside;
  Env *e = static_cast<Env *>(ctx);
  napi_env env = e->env;
  napi_value fn, global, arg, result;
  if (napi_get_reference_value(env, e->nameOf, &fn) != napi_ok || napi_get_global(env, &global) != napi_ok) return nullptr;
  napi_create_int32(env, param, &arg);
  if (napi_call_function(env, global, fn, 1, &arg, &result) != napi_ok) {
    takeException(env);
    return nullptr;
  }
  e->name = stringArg(env, result);
  return e->name.c_str();
}

void hostCommit(void *ctx, int32_t param, const luna_slot *v) {
  OutsideUcode outside;
  Env *e = static_cast<Env *>(ctx);
  if (param < 0 || param >= e->nargs) return;
  int32_t *I = ints(e) + 4 * param;
  I[0] = v->type;
  I[1] = v->i;
  I[2] = v->ref;
  if (v->type == LUNA_T_BLOCK) I[3] = v->pad;  // a block's destinations (ucenv.h), -1: none
  reals(e)[param] = v->d;
  napi_env env = e->env;
  if (v->type == LUNA_T_STRING) {
    napi_value arr, s;
    napi_get_reference_value(env, e->strings, &arr);
    napi_create_string_utf8(env, v->p, static_cast<size_t>(v->n), &s);
    napi_set_element(env, arr, static_cast<uint32_t>(param), s);
  } else if (v->type == LUNA_T_RAW && v->ref < 0) {
    // bytes made outside any call (e.g. a static DF): copy them into runtime-owned memory
    int32_t ref = -1;
    void *data = hostAlloc(ctx, v->n, &ref);
    if (data == nullptr) {
      e->failed = true;
      e->error = "cannot allocate " + std::to_string(v->n) + " bytes of shared memory for an output DF";
      I[0] = LUNA_T_UNSET;
      return;
    }
    if (v->n) memcpy(data, v->p, static_cast<size_t>(v->n));
    I[2] = ref;
  }
}

void hostFail(void *ctx, const char *message) {
  Env *e = static_cast<Env *>(ctx);
  e->failed = true;
  e->error = message ? message : "error";
}

// Version 2: the ucode's context and requests, through the JS function init() was given (the
// thread's ucode context answers; a request waits on the worker's request port).
bool callAsk(Env *e, const char *op, const char *kind, const char *payload, uint64_t n, napi_value *result) {
  napi_env env = e->env;
  napi_value fn, global, argv[3];
  if (!e->ask || napi_get_reference_value(env, e->ask, &fn) != napi_ok || napi_get_global(env, &global) != napi_ok) {
    e->answer = "this runtime gives C++ ucodes no context";
    return false;
  }
  napi_create_string_utf8(env, op, NAPI_AUTO_LENGTH, &argv[0]);
  napi_create_string_utf8(env, kind ? kind : "", NAPI_AUTO_LENGTH, &argv[1]);
  napi_create_string_utf8(env, payload ? payload : "", payload ? static_cast<size_t>(n) : 0, &argv[2]);
  if (napi_call_function(env, global, fn, 3, argv, result) != napi_ok) {
    e->answer = takeException(env);
    return false;
  }
  return true;
}

int32_t hostContext(void *ctx, luna_context *out) {
  OutsideUcode outside;
  Env *e = static_cast<Env *>(ctx);
  napi_value r;
  if (!callAsk(e, "context", nullptr, nullptr, 0, &r)) return 1;
  napi_env env = e->env;
  napi_value v;
  int32_t *ints[4] = {&out->cf, &out->node, &out->lane, &out->waits};
  for (uint32_t i = 0; i < 4; i++) {
    napi_get_element(env, r, i, &v);
    napi_get_value_int32(env, v, ints[i]);
  }
  napi_get_element(env, r, 4, &v);
  e->label = stringArg(env, v);
  napi_get_element(env, r, 5, &v);
  e->gid = stringArg(env, v);
  out->label = e->label.c_str();
  out->gid = e->gid.c_str();
  return 0;
}

int32_t hostRequest(void *ctx, const char *kind, const char *payload, uint64_t n, const char **answer, uint64_t *answerN) {
  OutsideUcode outside;
  Env *e = static_cast<Env *>(ctx);
  napi_value r;
  int32_t rc = callAsk(e, "request", kind, payload, n, &r) ? 0 : 1;
  if (rc == 0) e->answer = stringArg(e->env, r);
  *answer = e->answer.c_str();
  *answerN = e->answer.size();
  return rc;
}

const luna_host kHostTemplate = {nullptr, hostAlloc, hostName, hostCommit, hostFail, LUNA_UCODE_ABI_VERSION, 0, hostContext, hostRequest};

// ------------------------------------------------------------------------------ JS functions

// init(alloc, nameOf, strings[, ask]) → scratch ArrayBuffer
napi_value Init(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  if (argc < 3) {
    throwError(env, "init(alloc, nameOf, strings) expects 3 arguments");
    return nullptr;
  }
  Env *e = envOf(env);
  if (e->alloc) napi_delete_reference(env, e->alloc);
  if (e->nameOf) napi_delete_reference(env, e->nameOf);
  if (e->strings) napi_delete_reference(env, e->strings);
  napi_create_reference(env, argv[0], 1, &e->alloc);
  napi_create_reference(env, argv[1], 1, &e->nameOf);
  napi_create_reference(env, argv[2], 1, &e->strings);
  if (e->ask) napi_delete_reference(env, e->ask);
  e->ask = nullptr;
  if (argc >= 4) napi_create_reference(env, argv[3], 1, &e->ask);
  napi_value buf;
  if (e->scratchRef) {
    napi_get_reference_value(env, e->scratchRef, &buf);
    return buf;
  }
  void *data = nullptr;
  napi_create_arraybuffer(env, kScratchBytes, &data, &buf);
  memset(data, 0, kScratchBytes);
  e->scratch = static_cast<char *>(data);
  napi_create_reference(env, buf, 1, &e->scratchRef);
  return buf;
}

// entry(libraryPath, alias, kinds, ucodeName) → entry number
napi_value BindEntry(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  if (argc < 4) {
    throwError(env, "entry(library, alias, kinds, ucode) expects 4 arguments");
    return nullptr;
  }
  std::string path = stringArg(env, argv[0]), alias = stringArg(env, argv[1]), kinds = stringArg(env, argv[2]), ucode = stringArg(env, argv[3]);
  if (kinds.size() > static_cast<size_t>(kMaxParams)) {
    throwError(env, "ucode " + ucode + " has " + std::to_string(kinds.size()) + " parameters; C++ ucodes take at most " + std::to_string(kMaxParams));
    return nullptr;
  }
  void *lib = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_libsLock);
    auto it = g_libs.find(path);
    if (it != g_libs.end()) lib = it->second;
    else {
      lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!lib) {
        const char *why = dlerror();
        throwError(env, "cannot load the C++ ucode library " + path + ": " + (why ? why : "dlopen failed"));
        return nullptr;
      }
      const int32_t *abi = static_cast<const int32_t *>(dlsym(lib, "luna_ucode_abi"));
      // a version-1 library reads only the host fields it knows: it runs unchanged
      if (!abi || *abi < 1 || *abi > LUNA_UCODE_ABI_VERSION) {
        dlclose(lib);
        throwError(env, "the C++ ucode library " + path + " was built for another version of luna-ts: delete .luna-cache and run again");
        return nullptr;
      }
      g_libs[path] = lib;
    }
  }
  std::string entryName = "luna_call_" + alias, kindsName = "luna_kinds_" + alias;
  luna_entry fn = reinterpret_cast<luna_entry>(dlsym(lib, entryName.c_str()));
  const char *builtKinds = static_cast<const char *>(dlsym(lib, kindsName.c_str()));
  if (!fn || !builtKinds || kinds != builtKinds) {
    throwError(env, "the C++ ucode library " + path + " has no entry " + entryName + "(" + kinds + "): delete .luna-cache and run again");
    return nullptr;
  }
  installHandlers();
  Env *e = envOf(env);
  e->entries.push_back(Entry{fn, static_cast<int>(kinds.size()), kinds, internName(ucode)});
  napi_value out;
  napi_create_int32(env, static_cast<int32_t>(e->entries.size() - 1), &out);
  return out;
}

/**
 * A fatal signal in the ucode jumped back here: unblock it (the handler did not return), mark
 * the process corrupted, throw. An error the ucode reported first (exit() through fail) wins.
 * Errors of runtime faults start with "luna-fault:" (native.ts reports them as they are).
 */
napi_value crashed(napi_env env, Env *e, const Entry &en) {
  int sig = g_caught;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  e->guarded.clear();
  if (e->failed && e->error.rfind("luna-fault:", 0) == 0) {
    // exit() and its kin (ucenv.h): the ucode said what it did before the jump
    throwError(env, std::string("luna-fault:C++ ucode ") + en.ucode + " " + e->error.substr(11));
    return nullptr;
  }
  std::string what = signalText(sig);
  taint(" after C++ ucode ", en.ucode, (" crashed with " + what).c_str());
  throwError(env, std::string("luna-fault:") + what + " in C++ ucode " + en.ucode + " (the run stops; the process's memory may be corrupted)");
  return nullptr;
}

/** The first damaged guard of the call, as a message naming the ucode and the DF; "" if none. */
std::string checkGuards(napi_env env, Env *e, const Entry &en) {
  for (const Guarded &g : e->guarded) {
    int64_t at = damagedGuard(g.p + g.n, g.guard);
    if (at < 0) continue;
    // first: what follows may touch the corrupted heap and crash
    taint(" after C++ ucode ", en.ucode, " wrote past the end of a DF buffer");
    int param = g.param;
    if (param < 0) {
      // the output parameter this buffer became, if any
      int32_t *I = ints(e);
      for (int i = 0; i < e->nargs; i++)
        if (en.kinds[static_cast<size_t>(i)] == 'n' && I[4 * i] == LUNA_T_RAW && I[4 * i + 2] == g.ref) param = i;
    }
    std::string df = "a " + std::to_string(g.n) + "-byte buffer it created";
    if (param >= 0) {
      const char *name = hostName(e, param);
      df = std::string(g.param >= 0 ? "input" : "output") + " DF " + (name ? name : "?") + " (" + std::to_string(g.n) + " bytes)";
    }
    return std::string("C++ ucode ") + en.ucode + " wrote past the end of " + df + ": byte " + std::to_string(g.n + static_cast<uint64_t>(at)) +
           " was overwritten (the run stops; memory after the buffer may be corrupted)";
  }
  return std::string();
}

/**
 * Call `en` with `frame` under the crash guard: true and its return code in `rc`, or false when
 * a fatal signal in it jumped back here (g_caught says which; crashed() reports it). The jump
 * lands in this frame, alive for the whole call.
 */
bool guardedCall(const Entry &en, luna_frame *frame, int *rc) {
  sigjmp_buf jump;
  g_ucode = en.ucode;
  g_jump = &jump;
  if (sigsetjmp(jump, 0) == 0) {
    g_inUcode = 1;
    *rc = en.fn(frame);
    g_inUcode = 0;
    g_jump = nullptr;
    return true;
  }
  g_jump = nullptr;
  return false;
}

// call(entry, ...objects) → undefined; throws the ucode's error
// objects[i]: the string of a string parameter or string input, the Uint8Array of a raw input.
napi_value Call(napi_env env, napi_callback_info info) {
  // most ucodes have few parameters: ask for 8 arguments first (N-API fills every slot asked for)
  size_t argc = 8;
  napi_value argv[kMaxParams + 1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  if (argc > 8) {
    argc = kMaxParams + 1;
    napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  }
  Env *e = envOf(env);
  e->guarded.clear();
  int32_t index = -1;
  if (argc < 1 || napi_get_value_int32(env, argv[0], &index) != napi_ok || index < 0 || static_cast<size_t>(index) >= e->entries.size() || !e->scratch) {
    throwError(env, "call: bad entry");
    return nullptr;
  }
  const Entry &en = e->entries[static_cast<size_t>(index)];
  const int n = en.nargs;
  luna_slot slots[kMaxParams];
  int32_t *I = ints(e);
  double *D = reals(e);
  if (e->strIn.size() < static_cast<size_t>(n)) e->strIn.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; i++) {
    luna_slot &s = slots[i];
    const char k = en.kinds[static_cast<size_t>(i)];
    s.type = k == 'v' ? I[4 * i] : LUNA_T_UNSET;
    s.i = I[4 * i + 1];
    s.d = D[i];
    s.p = nullptr;
    s.n = 0;
    s.ref = -1;
    s.pad = 0;
    napi_value obj = static_cast<size_t>(i + 1) < argc ? argv[i + 1] : nullptr;
    if (k == 's' || (k == 'v' && s.type == LUNA_T_STRING)) {
      std::string &str = e->strIn[static_cast<size_t>(i)];
      size_t len = 0;
      if (obj == nullptr || napi_get_value_string_utf8(env, obj, nullptr, 0, &len) != napi_ok) {
        throwError(env, "call: parameter " + std::to_string(i + 1) + " is not a string");
        return nullptr;
      }
      str.resize(len);
      napi_get_value_string_utf8(env, obj, &str[0], len + 1, &len);
      s.p = str.c_str();
      s.n = len;
    } else if (k == 'v' && s.type == LUNA_T_RAW) {
      void *data = nullptr;
      size_t length = 0;
      napi_typedarray_type type;
      if (obj == nullptr || napi_get_typedarray_info(env, obj, &type, &length, &data, nullptr, nullptr) != napi_ok) {
        throwError(env, "call: parameter " + std::to_string(i + 1) + " is not a raw DF");
        return nullptr;
      }
      s.p = data != nullptr ? static_cast<const char *>(data) : "";
      s.n = length;
      s.ref = i;
      // a buffer created by C++ code keeps its guard: an input may be overrun too
      if (I[4 * i + 3] > 0 && data != nullptr) e->guarded.push_back(Guarded{static_cast<char *>(data), length, static_cast<uint64_t>(I[4 * i + 3]), -1, i});
    } else if (k == 'v' && s.type == LUNA_T_JS) {
      s.ref = i;
    } else if (k == 'b') {
      // a dynamic array's block: its memory, with its state in the scratch (native.ts)
      void *data = nullptr;
      size_t length = 0;
      napi_typedarray_type type;
      if (obj == nullptr || napi_get_typedarray_info(env, obj, &type, &length, &data, nullptr, nullptr) != napi_ok) {
        throwError(env, "call: parameter " + std::to_string(i + 1) + " is not a block's memory");
        return nullptr;
      }
      s.type = I[4 * i];
      s.pad = I[4 * i + 2];
      s.p = data != nullptr ? static_cast<const char *>(data) : reinterpret_cast<const char *>(e->scratch);
      s.n = length;
      s.ref = i;
    }
    if (k == 'n') I[4 * i] = LUNA_T_UNSET;
  }
  if (!g_altStack) {
    (void)&g_altStackOwner;  // constructs this thread's owner, which frees the stack at thread exit
    g_altStack = new AltStack();
  }
  luna_host host = kHostTemplate;
  host.ctx = e;
  luna_frame frame = {&host, slots, n};
  e->nargs = n;
  e->allocs = 0;
  e->failed = false;
  int rc = 0;
  if (!guardedCall(en, &frame, &rc)) return crashed(env, e, en);
  if (!e->guarded.empty()) {
    std::string overrun = checkGuards(env, e, en);
    e->guarded.clear();
    if (!overrun.empty()) {
      throwError(env, "luna-fault:" + overrun);
      return nullptr;
    }
  }
  if (rc != 0 || e->failed) {
    throwError(env, e->error.empty() ? "the C++ ucode failed" : e->error);
    return nullptr;
  }
  return nullptr;
}

// ------------------------------------------------------------------------------ planned loops stepped here
// A planned loop of C++ ucodes with int and real values (src/runtime/node/loop-inline.ts):
// stepOn runs its steps one after the other in one N-API call, each output kept in a ring in
// the loop's own buffer, and hands back to JavaScript at what needs it. On the system thread a
// step through the direct form costs the N-API transition, the marshalling and four call
// layers; here it costs the entry's call (docs/runtime.md, "Planned C++ loops stepped natively").
//
// The buffer (an ArrayBuffer JavaScript made and fills, src/runtime/node/loop-native.ts), int32
// words from its start:
constexpr int kLpSites = 0;     // sites of an iteration
constexpr int kLpRing = 1;      // iterations the ring keeps (the plan's depth + 1)
constexpr int kLpOuts = 2;      // ring slots a step (the most outputs of a site)
constexpr int kLpDesc = 3;      // int32 index of the sites' descriptions
constexpr int kLpReals = 4;     // float64 index of the real constants
constexpr int kLpTypes = 5;     // int32 index of the ring's value tags
constexpr int kLpInts = 6;      // int32 index of the ring's ints
constexpr int kLpDoubles = 7;   // float64 index of the ring's reals
constexpr int kLpTick = 8;      // in/out: the runtime's count of inline calls (1 in 16 is timed)
constexpr int kLpStatus = 9;    // out: why it stopped (kStop*)
constexpr int kLpT = 10;        // out: the iteration of the step that runs or stopped
constexpr int kLpS = 11;        // out: its site
constexpr int kLpCalls = 12;    // out: the steps called
constexpr int kLpTimed = 13;    // out: timed calls of the last iteration; (site, ns) pairs from kLpTimes
constexpr int kLpTimes = 16;
// A site's description: entry, parameter count, then 4 int32 a parameter: kind and its operands.
constexpr int kArgInt = 0;     // int a·t + b
constexpr int kArgReal = 1;    // the real constant a
constexpr int kArgInput = 2;   // output b of site a, c iterations back (in the ring)
constexpr int kArgOutput = 3;  // output a of the step
// Why stepOn stopped: every step up to the end was called; the turn's time is up; an iteration
// had a timed call and onTimed said the codes no longer all run here (or there was no onTimed);
// a step's output is neither int nor real (the scratch holds it, JavaScript converts it).
// The most sites of a loop stepped here (src/runtime/node/loop-native.ts MAX_SITES: more are
// stepped from JavaScript).
constexpr int kMaxSites = 64;
constexpr int kStopEnd = 0, kStopTime = 1, kStopTimed = 2, kStopOther = 3;

int64_t monoNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// stepOn(buffer, from, t, last, budgetNs[, onTimed]) → undefined: steps (t, 0) … (last, sites - 1),
// the ring indexed from iteration `from`; throws the ucode's error as call does, the step in
// kLpT/kLpS. onTimed() is called after an iteration with timed calls (kLpTimed of them, in
// kLpTimes): it takes their measurements, and its false stops the stepping there.
napi_value StepOn(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  void *data = nullptr;
  size_t bytes = 0;
  int32_t from = 0, t0 = 0, last = 0;
  double budget = 0;
  Env *e = envOf(env);
  if (argc < 5 || napi_get_arraybuffer_info(env, argv[0], &data, &bytes) != napi_ok || napi_get_value_int32(env, argv[1], &from) != napi_ok ||
      napi_get_value_int32(env, argv[2], &t0) != napi_ok || napi_get_value_int32(env, argv[3], &last) != napi_ok ||
      napi_get_value_double(env, argv[4], &budget) != napi_ok || !e->scratch || bytes < 4 * kLpTimes) {
    throwError(env, "stepOn: bad arguments");
    return nullptr;
  }
  napi_valuetype fnType = napi_undefined;
  napi_value onTimed = argc >= 6 && napi_typeof(env, argv[5], &fnType) == napi_ok && fnType == napi_function ? argv[5] : nullptr;
  int32_t *H = static_cast<int32_t *>(data);
  const int n = H[kLpSites], ring = H[kLpRing], outs = H[kLpOuts];
  const int32_t *desc = H + H[kLpDesc];
  const double *consts = static_cast<const double *>(data) + H[kLpReals];
  int32_t *types = H + H[kLpTypes], *rints = H + H[kLpInts];
  double *rreals = static_cast<double *>(data) + H[kLpDoubles];
  // the sites' descriptions, found once a call
  const int32_t *site[kMaxSites];
  if (n > kMaxSites || n < 1) {
    throwError(env, "stepOn: more sites than kMaxSites, or none");
    return nullptr;
  }
  for (int s = 0, at = 0; s < n; s++) {
    site[s] = desc + at;
    const int32_t entry = desc[at];
    if (entry < 0 || static_cast<size_t>(entry) >= e->entries.size() || desc[at + 1] != e->entries[static_cast<size_t>(entry)].nargs) {
      throwError(env, "stepOn: bad entry");
      return nullptr;
    }
    at += 2 + 4 * desc[at + 1];
  }
  if (!g_altStack) {
    (void)&g_altStackOwner;
    g_altStack = new AltStack();
  }
  const int64_t deadline = monoNs() + static_cast<int64_t>(budget);
  int32_t *I = ints(e);
  double *D = reals(e);
  luna_slot slots[kMaxParams];
  luna_host host = kHostTemplate;
  host.ctx = e;
  uint32_t tick = static_cast<uint32_t>(H[kLpTick]);
  int32_t calls = 0;
  H[kLpStatus] = kStopEnd;
  H[kLpTimed] = 0;
  for (int32_t t = t0; t <= last; t++) {
    const int slotBase = ((t - from) % ring) * n;
    int timed = 0;
    for (int s = 0; s < n; s++) {
      const int32_t *sd = site[s];
      const Entry &en = e->entries[static_cast<size_t>(sd[0])];
      const int m = sd[1];
      const int32_t *a = sd + 2;
      for (int i = 0; i < m; i++, a += 4) {
        luna_slot &sl = slots[i];
        sl.p = nullptr;
        sl.n = 0;
        sl.ref = -1;
        sl.pad = 0;
        sl.i = 0;
        sl.d = 0;
        switch (a[0]) {
          case kArgInt: sl.type = LUNA_T_INT; sl.i = static_cast<int32_t>(static_cast<int64_t>(a[1]) * t + a[2]); break;
          case kArgReal: sl.type = LUNA_T_REAL; sl.d = consts[a[1]]; break;
          case kArgInput: {
            const int at = (((t - a[3] - from) % ring) * n + a[1]) * outs + a[2];
            sl.type = types[at];
            sl.i = rints[at];
            sl.d = rreals[at];
            break;
          }
          default: sl.type = LUNA_T_UNSET; I[4 * i] = LUNA_T_UNSET; break;
        }
      }
      H[kLpT] = t;
      H[kLpS] = s;
      H[kLpCalls] = calls;
      // the runtime's rule for tiny codes: one call in 16 timed (src/runtime/node/runtime.ts callInline)
      const bool timeIt = (++tick & 15) == 0;
      e->guarded.clear();
      e->nargs = m;
      e->allocs = 0;
      e->failed = false;
      luna_frame frame = {&host, slots, m};
      int rc = 0;
      const int64_t began = timeIt ? monoNs() : 0;
      if (!guardedCall(en, &frame, &rc)) {
        H[kLpTick] = static_cast<int32_t>(tick);
        return crashed(env, e, en);
      }
      if (timeIt) {
        H[kLpTimes + 2 * timed] = s;
        const int64_t took = monoNs() - began;
        H[kLpTimes + 2 * timed + 1] = static_cast<int32_t>(took > INT32_MAX ? INT32_MAX : took);
        timed++;
      }
      calls++;
      if (!e->guarded.empty()) {
        std::string overrun = checkGuards(env, e, en);
        e->guarded.clear();
        if (!overrun.empty()) {
          H[kLpTick] = static_cast<int32_t>(tick);
          throwError(env, "luna-fault:" + overrun);
          return nullptr;
        }
      }
      if (rc != 0 || e->failed) {
        H[kLpTick] = static_cast<int32_t>(tick);
        throwError(env, e->error.empty() ? "the C++ ucode failed" : e->error);
        return nullptr;
      }
      // the outputs into the ring, unless one is neither int nor real: then the scratch keeps
      // them for JavaScript, which converts that step's outputs as the direct form does
      a = sd + 2;
      bool other = false;
      for (int i = 0; i < m; i++, a += 4) {
        if (a[0] != kArgOutput) continue;
        const int32_t ty = I[4 * i];
        if (ty != LUNA_T_INT && ty != LUNA_T_REAL) { other = true; continue; }
        const int at = (slotBase + s) * outs + a[1];
        types[at] = ty;
        rints[at] = I[4 * i + 1];
        rreals[at] = D[i];
      }
      // (a buffer it created: the JavaScript side holds it until that step's outputs are taken)
      if (other || e->allocs > 0) {
        H[kLpStatus] = kStopOther;
        H[kLpCalls] = calls;
        H[kLpTimed] = timed;
        H[kLpTick] = static_cast<int32_t>(tick);
        return nullptr;
      }
    }
    H[kLpCalls] = calls;
    // an iteration with a timed call: JavaScript measures it and asks the inline rule again
    // (onTimed: false, the loop's codes no longer all run here), or without onTimed it stops
    bool stopTimed = false;
    if (timed > 0) {
      if (onTimed != nullptr) {
        H[kLpT] = t;
        H[kLpTimed] = timed;
        H[kLpTick] = static_cast<int32_t>(tick);
        // (a scope a call: a turn's callbacks would otherwise pile their handles up in this one)
        napi_handle_scope scope;
        napi_open_handle_scope(env, &scope);
        napi_value global, goOn;
        bool go = false;
        const bool called = napi_get_global(env, &global) == napi_ok && napi_call_function(env, global, onTimed, 0, nullptr, &goOn) == napi_ok;
        if (called) napi_get_value_bool(env, goOn, &go);
        napi_close_handle_scope(env, scope);
        if (!called) {
          H[kLpTick] = static_cast<int32_t>(tick);
          return nullptr;
        }
        timed = 0;
        stopTimed = !go;
      } else stopTimed = true;
    }
    if (stopTimed || t == last || monoNs() > deadline) {
      H[kLpT] = t;
      H[kLpTimed] = timed;
      H[kLpStatus] = t == last ? kStopEnd : stopTimed ? kStopTimed : kStopTime;
      break;
    }
  }
  H[kLpTick] = static_cast<int32_t>(tick);
  return nullptr;
}

// exitNow(code): end the process at once (a worker thread stuck in C++ code would keep
// process.exit waiting for it for ever); the caller has flushed what it writes.
napi_value ExitNow(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t code = 1;
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  if (argc >= 1) napi_get_value_int32(env, argv[0], &code);
  _exit(code);
}

}  // namespace

NAPI_MODULE_INIT() {
  Env *e = new Env();
  e->env = env;
  napi_set_instance_data(env, e, finalizeEnv, nullptr);
  napi_property_descriptor props[] = {
      {"init", nullptr, Init, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"entry", nullptr, BindEntry, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"call", nullptr, Call, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"stepOn", nullptr, StepOn, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"exitNow", nullptr, ExitNow, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  napi_value max;
  napi_create_int32(env, kMaxParams, &max);
  napi_set_named_property(env, exports, "maxParams", max);
  return exports;
}
