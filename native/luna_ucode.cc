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
// A crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) while a C++ ucode runs on a thread ends the
// process with a message naming the ucode, written by a signal handler on an alternate stack;
// at any other time the signal goes to the handler that was there before (V8 uses SIGSEGV for
// WebAssembly bounds checks).
#include <dlfcn.h>
#include <node_api.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "luna_ucode_abi.h"

namespace {

constexpr int kMaxParams = 64;
// Scratch layout (shared with src/ucode/cpp/native.ts): per parameter 4 int32 (type, int, ref,
// spare) from byte 0, then per parameter one float64 (real).
constexpr size_t kIntsBytes = kMaxParams * 4 * sizeof(int32_t);
constexpr size_t kScratchBytes = kIntsBytes + kMaxParams * sizeof(double);

// ------------------------------------------------------------------------------ crash guard
thread_local volatile sig_atomic_t g_inUcode = 0;
thread_local const std::string *g_crashText = nullptr;
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

void onFatalSignal(int sig, siginfo_t *info, void *uctx) {
  if (g_inUcode && g_crashText != nullptr) {
    // Only async-signal-safe calls: write(2) of preformatted text, then _exit.
    static const char head[] = "luna: error: ";
    writeAll(head, sizeof head - 1);
    const char *what = signalText(sig);
    writeAll(what, strlen(what));
    writeAll(g_crashText->data(), g_crashText->size());
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

void installHandlers() {
  std::call_once(g_handlersOnce, [] {
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
  std::string crashText;
};

struct Env {
  napi_env env = nullptr;
  std::vector<Entry> entries;
  char *scratch = nullptr;
  napi_ref scratchRef = nullptr;
  napi_ref alloc = nullptr;    // (bytes) => Uint8Array over a new SharedArrayBuffer
  napi_ref nameOf = nullptr;   // (param) => display name of the DF
  napi_ref strings = nullptr;  // array: string outputs by parameter
  // the call in progress
  int nargs = 0;
  int allocs = 0;
  std::string error;
  bool failed = false;
  std::string name;
  std::vector<std::string> strIn;
};

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
  if (napi_get_typedarray_info(env, result, &type, &length, &data, nullptr, nullptr) != napi_ok) return nullptr;
  *ref = e->nargs + e->allocs++;
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

const luna_host kHostTemplate = {nullptr, hostAlloc, hostName, hostCommit, hostFail};

// ------------------------------------------------------------------------------ JS functions

// init(alloc, nameOf, strings) → scratch ArrayBuffer
napi_value Init(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
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
      if (!abi || *abi != LUNA_UCODE_ABI_VERSION) {
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
  e->entries.push_back(Entry{fn, static_cast<int>(kinds.size()), kinds,
                             " in C++ ucode " + ucode + ": the process stops (output the ucode had not flushed and this node's trace are lost)\n"});
  napi_value out;
  napi_create_int32(env, static_cast<int32_t>(e->entries.size() - 1), &out);
  return out;
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
    } else if (k == 'v' && s.type == LUNA_T_JS) {
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
  g_crashText = &en.crashText;
  g_inUcode = 1;
  int rc = en.fn(&frame);
  g_inUcode = 0;
  if (rc != 0 || e->failed) {
    throwError(env, e->error.empty() ? "the C++ ucode failed" : e->error);
    return nullptr;
  }
  return nullptr;
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
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  napi_value max;
  napi_create_int32(env, kMaxParams, &max);
  napi_set_named_property(env, exports, "maxParams", max);
  return exports;
}
