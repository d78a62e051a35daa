// ucenv.h — the C++ ucode API of LuNA (luna::ucenv: DF, InputDF, OutputDF, ABORT) for luna-ts.
//
// A ucode is a function `extern "C" void c_f(int, double, const char *, const InputDF &,
// OutputDF &)` with parameters in the order and kinds of its `import` line (docs/language.md
// §7.9). A DF holds nothing, an int, a real, a string, raw bytes, or (luna-ts) a JavaScript
// value made by a TypeScript ucode. Raw bytes are the very shared memory the runtime and
// TypeScript ucodes see: getData() of an input points into it and create() of an output
// allocates it there, so no byte is copied on the way in or out. `DF = DF` and copy() share the
// value. Misuse (a wrong accessor, a DF with no value) throws luna::ucenv::Error, which stops
// the run naming the fragment, like ABORT(msg) and any other C++ exception.
//
// Lifetime: the bytes of input DFs and of DFs created during a call belong to the runtime; a
// DF must not be kept (e.g. in a static variable) after the ucode returns: once the runtime has
// freed a DF its buffer is reused for a later DF's value, as the original's memory after delete.
#ifndef LUNA_UCENV_H
#define LUNA_UCENV_H

#include <atomic>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>
#if defined(__GNUC__) || defined(__clang__)
#include <cxxabi.h>
#endif
#if defined(__GLIBC__) || defined(__linux__)
#include <stdio_ext.h>
#endif

#include "luna_ucode_abi.h"

namespace luna {
namespace ucenv {

enum ValueType { TYPE_UNDEFINED = 0, TYPE_INT, TYPE_REAL, TYPE_STRING, TYPE_VALUE, TYPE_NAME, TYPE_JS };

/** Misuse of a DF, or any error of the API: stops the run with its message. */
class Error : public std::exception {
 public:
  explicit Error(std::string message) : message_(std::move(message)) {}
  const char *what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

/** Thrown by ABORT(msg). */
class Abort : public Error {
 public:
  Abort(const std::string &message, const char *file, int line) : Error(message), file_(file), line_(line) {}
  const char *file() const noexcept { return file_; }
  int line() const noexcept { return line_; }

 private:
  const char *file_;
  int line_;
};

class DF;

namespace detail {

/** The call running on this thread (set by the glue around the user's function). */
inline thread_local luna_frame *current = nullptr;

/** Shared bytes of a string, raw or JavaScript value; reference-counted like the original's. */
struct Buf {
  std::atomic<long> rc{1};
  char *data = nullptr;
  uint64_t size = 0;   // bytes (a string's include its NUL)
  int32_t ref = -1;    // the runtime's object holding the bytes (valid during the call)
  bool heap = false;   // data was malloc'ed here
  bool pinned = false; // lives in the glue's frame (inputs): never deleted
};

inline void retain(Buf *b) noexcept {
  if (b) b->rc.fetch_add(1, std::memory_order_relaxed);
}
inline void release(Buf *b) noexcept {
  if (b && b->rc.fetch_sub(1, std::memory_order_acq_rel) == 1 && !b->pinned) {
    if (b->heap) std::free(b->data);
    delete b;
  }
}

/** Zero-filled bytes: shared memory of the runtime during a call, the C heap otherwise. */
inline Buf *allocate(uint64_t bytes) {
  Buf *b = new Buf();
  b->size = bytes;
  luna_frame *f = current;
  if (f && f->host && f->host->alloc) {
    b->data = static_cast<char *>(f->host->alloc(f->host->ctx, bytes, &b->ref));
    if (!b->data) {
      delete b;
      throw Error("cannot allocate " + std::to_string(bytes) + " bytes of shared memory for a DF");
    }
  } else {
    b->data = static_cast<char *>(std::calloc(bytes ? bytes : 1, 1));
    b->heap = true;
    if (!b->data) {
      delete b;
      throw Error("cannot allocate " + std::to_string(bytes) + " bytes for a DF");
    }
  }
  return b;
}

inline std::string quoted(const char *s, uint64_t n) {
  std::string out = "\"";
  out.append(s, n > 40 ? 40 : n);
  if (n > 40) out += "...";
  return out + "\"";
}

inline std::string demangle(const char *name) {
#if defined(__GNUC__) || defined(__clang__)
  int status = 0;
  char *d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status == 0 && d) {
    std::string s(d);
    std::free(d);
    return s;
  }
#endif
  return name;
}

template <class T>
struct is_string : std::false_type {};
template <>
struct is_string<std::string> : std::true_type {};

}  // namespace detail

class DF {
 public:
  DF() noexcept {}
  DF(const DF &o) noexcept : type_(o.type_), param_(o.param_), num_(o.num_), buf_(o.buf_) { detail::retain(buf_); }
  DF(DF &&o) noexcept : type_(o.type_), param_(o.param_), num_(o.num_), buf_(o.buf_) {
    o.buf_ = nullptr;
    o.type_ = TYPE_UNDEFINED;
  }
  template <class T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
  DF(T v) noexcept { set_int(static_cast<int>(v)); }
  template <class T, typename std::enable_if<std::is_floating_point<T>::value, int>::type = 0>
  DF(T v) noexcept { set_real(static_cast<double>(v)); }
  DF(const std::string &s) { set_string(s.data(), s.size()); }
  DF(const char *s) { set_string(s, std::strlen(s)); }
  /** Raw bytes, copied (tag VALUE). */
  DF(const void *data, size_t size) { set_raw(data, size); }
  ~DF() { detail::release(buf_); }

  /** Share o's value (no copy). An output stays the output it is. */
  DF &operator=(const DF &o) noexcept {
    if (this != &o) {
      detail::retain(o.buf_);
      detail::release(buf_);
      type_ = o.type_;
      num_ = o.num_;
      buf_ = o.buf_;
    }
    return *this;
  }
  template <class T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>
  DF &operator=(T v) { return *this = DF(v); }
  DF &operator=(const std::string &s) { return *this = DF(s); }
  DF &operator=(const char *s) { return *this = DF(s); }

  /** Share o's value, like `*this = o` (the original's copy(df)). */
  void copy(const DF &o) noexcept { *this = o; }

  // --------------------------------------------------------------------------- raw data
  /**
   * A raw buffer of `bytes` bytes (tag VALUE) in the runtime's shared memory, uninitialised as in
   * the original LuNA: it may be the memory of a DF freed earlier, holding that DF's bytes (the
   * runtime recycles freed buffers instead of zero-filling fresh pages). create<T>(n, init)
   * fills it.
   */
  void *create(size_t bytes) {
    detail::Buf *b = detail::allocate(bytes);
    reset();
    type_ = TYPE_VALUE;
    buf_ = b;
    return b->data;
  }
  template <class T>
  T *create(size_t n) { return static_cast<T *>(create(n * sizeof(T))); }
  template <class T>
  T *create(size_t n, const T &init) {
    T *p = create<T>(n);
    for (size_t i = 0; i < n; i++) p[i] = init;
    return p;
  }
  template <class T>
  T *getData() { return static_cast<T *>(data_of(sizeof(T), "getData")); }
  template <class T>
  const T *getData() const { return static_cast<const T *>(const_cast<DF *>(this)->data_of(sizeof(T), "getData")); }
  void *get_data() { return data_of(1, "get_data"); }
  const void *get_data() const { return const_cast<DF *>(this)->data_of(1, "get_data"); }
  size_t get_size() const {
    if (type_ != TYPE_VALUE) fail_type("get_size");
    return static_cast<size_t>(buf_->size);
  }

  // --------------------------------------------------------------------------- typed values
  template <class T>
  void setValue(const T &v) {
    if constexpr (std::is_same<T, int>::value) set_int(v);
    else if constexpr (std::is_same<T, double>::value) set_real(v);
    else if constexpr (detail::is_string<T>::value) set_string(v.data(), v.size());
    else throw Error(std::string("setValue<") + detail::demangle(typeid(T).name()) + "> on DF " + getName() + ": only int, double and std::string values can be set");
  }
  template <class T>
  T getValue() const {
    if constexpr (std::is_same<T, int>::value) return get_int();
    else if constexpr (std::is_same<T, double>::value) return get_real();
    else if constexpr (detail::is_string<T>::value) return get_string();
    else throw Error(std::string("getValue<") + detail::demangle(typeid(T).name()) + "> on DF " + getName() + ": only int, double and std::string values can be read");
  }
  int get_int() const {
    if (type_ != TYPE_INT) fail_type("get_int");
    return num_.i;
  }
  double get_real() const {
    if (type_ != TYPE_REAL) fail_type("get_real");
    return num_.d;
  }
  std::string get_string() const {
    if (type_ != TYPE_STRING) fail_type("get_string");
    return std::string(buf_->data, buf_->size - 1);
  }
  /** Converting reads: numbers to numbers, a string holding a whole number text, anything to a string. */
  int cast_int() const {
    switch (type_) {
      case TYPE_INT: return num_.i;
      case TYPE_REAL: return static_cast<int>(num_.d);
      case TYPE_STRING: return static_cast<int>(parse("cast_int"));
      default: fail_type("cast_int");
    }
  }
  double cast_real() const {
    switch (type_) {
      case TYPE_INT: return num_.i;
      case TYPE_REAL: return num_.d;
      case TYPE_STRING: return parse("cast_real");
      default: fail_type("cast_real");
    }
  }
  std::string cast_string() const {
    switch (type_) {
      case TYPE_INT: return std::to_string(num_.i);
      case TYPE_REAL: return std::to_string(num_.d);
      case TYPE_STRING: return get_string();
      default: fail_type("cast_string");
    }
  }

  // --------------------------------------------------------------------------- inspection
  /** Bytes: int 4, real 8, string length + 1, raw its length. */
  size_t getSize() const {
    switch (type_) {
      case TYPE_INT: return 4;
      case TYPE_REAL: return 8;
      case TYPE_STRING:
      case TYPE_VALUE: return static_cast<size_t>(buf_->size);
      case TYPE_JS: return 8;
      default: fail_type("getSize");
    }
  }
  bool is_set() const noexcept { return type_ != TYPE_UNDEFINED; }
  bool is_unset() const noexcept { return type_ == TYPE_UNDEFINED; }
  ValueType get_type() const noexcept { return static_cast<ValueType>(type_); }
  /** DF<int>(7), DF<real>(0.500000), DF<string>(text), DF<size=N>(hex bytes…) */
  std::string to_string() const {
    switch (type_) {
      case TYPE_INT: return "DF<int>(" + std::to_string(num_.i) + ")";
      case TYPE_REAL: return "DF<real>(" + std::to_string(num_.d) + ")";
      case TYPE_STRING: return "DF<string>(" + get_string() + ")";
      case TYPE_VALUE: {
        static const char hex[] = "0123456789abcdef";
        std::string s = "DF<size=" + std::to_string(buf_->size) + ">(";
        uint64_t shown = buf_->size < 32 ? buf_->size : 32;
        for (uint64_t i = 0; i < shown; i++) {
          unsigned char c = static_cast<unsigned char>(buf_->data[i]);
          s += hex[c >> 4];
          s += hex[c & 15];
        }
        return s + (shown < buf_->size ? "...)" : ")");
      }
      case TYPE_JS: return "DF<js>()";
      default: return "DF<undefined>()";
    }
  }
  /** The DF's name as the program writes it (x[3]) for parameters of the running ucode; "(df)" otherwise. */
  std::string getName() const {
    luna_frame *f = detail::current;
    if (param_ >= 0 && f && f->host && f->host->name && param_ < f->nargs) {
      const char *n = f->host->name(f->host->ctx, param_);
      if (n) return n;
    }
    return "(df)";
  }

  // --------------------------------------------------------------------------- arithmetic
  explicit operator bool() const { return type_ == TYPE_REAL ? num_.d != 0 : cast_int() != 0; }
  friend DF operator+(const DF &a, const DF &b) { return a.arith(b, '+'); }
  friend DF operator-(const DF &a, const DF &b) { return a.arith(b, '-'); }
  friend DF operator*(const DF &a, const DF &b) { return a.arith(b, '*'); }
  friend DF operator/(const DF &a, const DF &b) { return a.arith(b, '/'); }
  friend DF operator%(const DF &a, const DF &b) {
    if (a.type_ != TYPE_INT || b.type_ != TYPE_INT) a.fail_op(b, "%");
    if (b.num_.i == 0) throw Error("integer division by zero (DF " + a.getName() + " % DF " + b.getName() + ")");
    return DF(a.num_.i % b.num_.i);
  }
  friend DF operator<(const DF &a, const DF &b) { return DF(static_cast<int>(a.number(b, "<") < b.number(a, "<"))); }
  friend DF operator<=(const DF &a, const DF &b) { return DF(static_cast<int>(a.number(b, "<=") <= b.number(a, "<="))); }
  friend DF operator>(const DF &a, const DF &b) { return DF(static_cast<int>(a.number(b, ">") > b.number(a, ">"))); }
  friend DF operator>=(const DF &a, const DF &b) { return DF(static_cast<int>(a.number(b, ">=") >= b.number(a, ">="))); }
  friend DF operator==(const DF &a, const DF &b) { return DF(static_cast<int>(a.number(b, "==") == b.number(a, "=="))); }
  friend DF operator!=(const DF &a, const DF &b) { return DF(static_cast<int>(a.number(b, "!=") != b.number(a, "!="))); }
  friend DF operator&&(const DF &a, const DF &b) { return DF(static_cast<int>(a.number(b, "&&") != 0 && b.number(a, "&&") != 0)); }

  // --------------------------------------------------------------------------- glue (internal)
  /** @internal input parameter `param` over the runtime's slot, with a Buf of the glue's frame */
  void bind_input_(const luna_slot &s, detail::Buf &pinned, int32_t param) noexcept {
    param_ = param;
    switch (s.type) {
      case LUNA_T_INT: type_ = TYPE_INT; num_.i = s.i; return;
      case LUNA_T_REAL: type_ = TYPE_REAL; num_.d = s.d; return;
      case LUNA_T_STRING: type_ = TYPE_STRING; pinned.size = s.n + 1; break;
      case LUNA_T_RAW: type_ = TYPE_VALUE; pinned.size = s.n; break;
      case LUNA_T_JS: type_ = TYPE_JS; pinned.size = 0; break;
      default: type_ = TYPE_UNDEFINED; return;
    }
    pinned.data = const_cast<char *>(s.p);
    pinned.ref = s.ref;
    pinned.pinned = true;
    buf_ = &pinned;
    detail::retain(buf_);
  }
  /** @internal output parameter `param` */
  void bind_output_(int32_t param) noexcept { param_ = param; }
  /** @internal the parameter of the running call this DF is (or copies), -1 for none */
  int32_t param_index_() const noexcept { return param_; }
  /** @internal the slot of this DF's value (valid while the DF lives) */
  luna_slot slot_() const noexcept {
    luna_slot s{};
    s.ref = -1;
    switch (type_) {
      case TYPE_INT: s.type = LUNA_T_INT; s.i = num_.i; break;
      case TYPE_REAL: s.type = LUNA_T_REAL; s.d = num_.d; break;
      case TYPE_STRING: s.type = LUNA_T_STRING; s.p = buf_->data; s.n = buf_->size - 1; break;
      case TYPE_VALUE: s.type = LUNA_T_RAW; s.p = buf_->data; s.n = buf_->size; s.ref = buf_->ref; break;
      case TYPE_JS: s.type = LUNA_T_JS; s.ref = buf_->ref; break;
      default: s.type = LUNA_T_UNSET;
    }
    return s;
  }

 private:
  int32_t type_ = TYPE_UNDEFINED;
  int32_t param_ = -1;
  union Num {
    int32_t i;
    double d;
  } num_{0};
  detail::Buf *buf_ = nullptr;

  void reset() noexcept {
    detail::release(buf_);
    buf_ = nullptr;
    type_ = TYPE_UNDEFINED;
  }
  void set_int(int v) noexcept {
    reset();
    type_ = TYPE_INT;
    num_.i = v;
  }
  void set_real(double v) noexcept {
    reset();
    type_ = TYPE_REAL;
    num_.d = v;
  }
  void set_string(const char *s, size_t n) {
    detail::Buf *b = new detail::Buf();
    b->data = static_cast<char *>(std::malloc(n + 1));
    if (!b->data) {
      delete b;
      throw Error("cannot allocate a string of " + std::to_string(n) + " bytes");
    }
    std::memcpy(b->data, s, n);
    b->data[n] = 0;
    b->size = n + 1;
    b->heap = true;
    reset();
    type_ = TYPE_STRING;
    buf_ = b;
  }
  void set_raw(const void *data, size_t size) {
    detail::Buf *b = detail::allocate(size);
    if (size) std::memcpy(b->data, data, size);
    reset();
    type_ = TYPE_VALUE;
    buf_ = b;
  }
  void *data_of(size_t elem, const char *op) {
    if (type_ != TYPE_VALUE) fail_type(op);
    if (buf_->size % elem != 0)
      throw Error(std::string(op) + "() on DF " + getName() + ": its " + std::to_string(buf_->size) + " bytes are not a whole number of " + std::to_string(elem) + "-byte elements");
    return buf_->data;
  }
  std::string held() const {
    switch (type_) {
      case TYPE_INT: return "int " + std::to_string(num_.i);
      case TYPE_REAL: return "real " + std::to_string(num_.d);
      case TYPE_STRING: return "string " + detail::quoted(buf_->data, buf_->size - 1);
      case TYPE_VALUE: return "raw " + std::to_string(buf_->size) + " bytes";
      case TYPE_JS: return "a JavaScript value (set by a TypeScript ucode)";
      default: return "no value yet";
    }
  }
  [[noreturn]] void fail_type(const char *op) const {
    if (type_ == TYPE_UNDEFINED) throw Error(std::string(op) + "() on DF " + getName() + ": the DF has no value yet");
    throw Error(std::string(op) + "() on DF " + getName() + " which holds " + held());
  }
  [[noreturn]] void fail_op(const DF &b, const char *op) const {
    throw Error(std::string("operator ") + op + " on DF " + getName() + " (" + held() + ") and DF " + b.getName() + " (" + b.held() + "): only int and real DFs");
  }
  double number(const DF &other, const char *op) const {
    if (type_ == TYPE_INT) return num_.i;
    if (type_ == TYPE_REAL) return num_.d;
    fail_op(other, op);
  }
  double parse(const char *op) const {
    const char *s = buf_->data;
    char *end = nullptr;
    double v = std::strtod(s, &end);
    while (end && (*end == ' ' || *end == '\t' || *end == '\n')) end++;
    if (end == s || !end || *end != 0) throw Error(std::string(op) + "() on DF " + getName() + ": cannot convert " + held() + " to a number");
    return v;
  }
  DF arith(const DF &b, char op) const {
    const char ops[2] = {op, 0};
    if (type_ == TYPE_INT && b.type_ == TYPE_INT) {
      int x = num_.i, y = b.num_.i;
      switch (op) {
        case '+': return DF(x + y);
        case '-': return DF(x - y);
        case '*': return DF(x * y);
        default:
          if (y == 0) throw Error("integer division by zero (DF " + getName() + " / DF " + b.getName() + ")");
          return DF(x / y);
      }
    }
    double x = number(b, ops), y = b.number(*this, ops);
    switch (op) {
      case '+': return DF(x + y);
      case '-': return DF(x - y);
      case '*': return DF(x * y);
      default: return DF(x / y);
    }
  }
};

typedef DF InputDF;
typedef DF OutputDF;

/** A DF sharing df's value (the original's copy(df)). */
inline DF copy(const DF &df) { return DF(df); }

/**
 * The block of a distributed dynamic array that the CF holds (luna-ts, docs/dda.md), as a `block`
 * parameter gives it: `extern "C" void c_push(DdaBlock &P, …)` — named as the TypeScript block
 * is, and not `Block`, which programs use for their own types beside `using namespace
 * luna::ucenv`. The operations of seed 002 under the TypeScript block's names. The elements are the runtime's shared memory (no copy in or
 * out). remElement only marks: the marked elements stay readable and counted until the call
 * ends, when they are removed by the array's defragmentation. A pointer into the block is valid
 * until resize() or the end of the call.
 */
class DdaBlock {
 public:
  DdaBlock() noexcept {}
  DdaBlock(const DdaBlock &) = delete;
  DdaBlock &operator=(const DdaBlock &) = delete;

  /** n more elements at the end: their address (the memory is not cleared), or nullptr when the block has no room (resize first). */
  void *addElement(size_t n) {
    if ((n_ + n) * elsize_ > size_) return nullptr;
    char *at = p_ + n_ * elsize_;
    n_ += n;
    return at;
  }
  template <class T>
  T *addElements(size_t n) { check_item(sizeof(T), "addElements"); return static_cast<T *>(addElement(n)); }
  /** One element copied from `el` (getElsize() bytes): its address in the block, or nullptr. */
  void *addElement(const void *el) {
    void *at = addElement(static_cast<size_t>(1));
    if (at) std::memcpy(at, el, elsize_);
    return at;
  }
  /** One element copied from a value whose type has exactly the element's size. */
  template <class T, typename std::enable_if<!std::is_pointer<T>::value && !std::is_integral<T>::value, int>::type = 0>
  T *addElement(const T &el) {
    if (sizeof(T) != elsize_) throw Error("addElement of a " + std::to_string(sizeof(T)) + "-byte value on a block of " + std::to_string(elsize_) + "-byte elements");
    return static_cast<T *>(addElement(static_cast<const void *>(&el)));
  }
  /** Marks element idx for removal at the end of the call. */
  void remElement(size_t idx) {
    if (idx >= n_) throw Error("remElement(" + std::to_string(idx) + ") of a block of " + std::to_string(n_) + " elements");
    marked_.push_back(static_cast<uint64_t>(idx));
  }
  /**
   * The block's size in bytes; false (nothing changed) when the live elements would not fit.
   * Beyond its memory the elements move to new shared memory: pointers taken before are stale.
   */
  bool resize(size_t bytes) {
    if (bytes < n_ * elsize_) return false;
    if (bytes > mem_) {
      Buf *b = allocate(bytes);
      std::memcpy(b->data, p_, n_ * elsize_);
      if (grown_) release(grown_);
      grown_ = b;
      p_ = b->data;
      mem_ = bytes;
    }
    size_ = bytes;
    return true;
  }
  size_t getMaxNumel() const noexcept { return static_cast<size_t>(size_ / elsize_); }
  size_t getNumel() const noexcept { return static_cast<size_t>(n_); }
  size_t getMaxSize() const noexcept { return static_cast<size_t>(size_); }
  size_t getElsize() const noexcept { return elsize_; }
  /** Which of its node's blocks of the array this is (0 with one a node; LuNA's `P[j]`), and how many the node has. */
  size_t getBlockIndex() const noexcept { return index_; }
  size_t getBlocksPerNode() const noexcept { return blocks_; }
  /** How many distinct elements are marked for removal. */
  size_t getMarked() const {
    std::vector<uint64_t> m(marked_);
    std::sort(m.begin(), m.end());
    return static_cast<size_t>(std::unique(m.begin(), m.end()) - m.begin());
  }
  /** The live elements (marked ones included until the call ends). */
  void *data() noexcept { return p_; }
  const void *data() const noexcept { return p_; }
  template <class T>
  T *data() { check_item(sizeof(T), "data"); return reinterpret_cast<T *>(p_); }
  /**
   * The destination node of each element, getNumel() of them, all -1 at first: an element given
   * another node's number leaves the block when the call ends and reaches that node's block at
   * the array's next global operation (as the TypeScript block's destinations()). -1 or this
   * node: it stays. Elements added afterwards stay. The same array for the whole call; the
   * runtime packs the leaving elements, one part per destination, in one pass.
   */
  int32_t *destinations() {
    if (dests_ && !targets_.empty()) throw Error("destinations() of the block: asked with targets before, without now");
    return dests_for({});
  }
  /**
   * The same, with each entry k an index into `targets`: other arrays of the same element size,
   * each a value parameter of this ucode holding an array's handle (the DF a `dynamic`
   * declaration names, or a copy of its value); element i goes to targets[d[i]]'s array on that
   * array's home node, as the TypeScript block's destinations(to) sends it — a particle code's
   * neighbouring subdomains, one array each. -1 stays.
   */
  int32_t *destinations(const DF *const *targets, size_t k) {
    std::vector<int32_t> params(k);
    for (size_t t = 0; t < k; t++) {
      const int32_t p = targets[t] ? targets[t]->param_index_() : -1;
      if (p < 0) throw Error("destinations of the block: target " + std::to_string(t) + " is not a parameter of this ucode (pass the value parameters holding the arrays' handles)");
      params[t] = p;
    }
    if (dests_ && params != targets_) throw Error("destinations of the block: asked again with other targets in the same call");
    return dests_for(std::move(params));
  }
  int32_t *destinations(std::initializer_list<const DF *> targets) { return destinations(targets.begin(), targets.size()); }
  /**
   * The same with the targets in one value parameter: a list of arrays' handles (a TypeScript
   * ucode made it, e.g. the 26 neighbours' once per subdomain), entry k naming its k-th array.
   * One DF read a call instead of one per target.
   */
  int32_t *destinations(const DF &targetList) {
    const int32_t p = targetList.param_index_();
    if (p < 0) throw Error("destinations of the block: the target list is not a parameter of this ucode");
    const std::vector<int32_t> params{p, LIST};
    if (dests_ && params != targets_) throw Error("destinations of the block: asked again with other targets in the same call");
    return dests_for(params);
  }
  /** Element idx's address. */
  void *element(size_t idx) {
    if (idx >= n_) throw Error("element(" + std::to_string(idx) + ") of a block of " + std::to_string(n_) + " elements");
    return p_ + idx * elsize_;
  }

  /** @internal the glue binds the block of a slot, and commits what the ucode left */
  void bind_(const luna_slot &s) noexcept {
    p_ = const_cast<char *>(s.p);
    mem_ = s.n;
    size_ = static_cast<uint64_t>(s.d);
    n_ = static_cast<uint64_t>(s.i);
    elsize_ = static_cast<uint32_t>(s.pad);
    ordered_ = (s.type & 0xff) == LUNA_BLOCK_ORDERED;
    index_ = static_cast<size_t>((s.type >> 8) & 0xfff);
    blocks_ = static_cast<size_t>((s.type >> 20) & 0x7ff) + 1;
  }
  luna_slot commit_() {
    if (dests_) {
      // removal wins over a destination; the runtime removes and packs in one pass (DdaBlock.settle)
      // (marks past them stay: defragment() below moves only elements past them)
      int32_t *d = reinterpret_cast<int32_t *>(dests_->data);
      std::vector<uint64_t> rest;
      for (uint64_t m : marked_) if (m < destn_) d[m] = -2; else rest.push_back(m);
      marked_.swap(rest);
    }
    defragment();
    luna_slot s{};
    s.type = LUNA_T_BLOCK;
    s.i = static_cast<int32_t>(n_);
    s.d = static_cast<double>(size_);
    s.ref = grown_ ? grown_->ref : -1;
    s.pad = dests_ ? dests_->ref : -1;
    return s;
  }
  ~DdaBlock() { if (grown_) release(grown_); if (dests_) release(dests_); }

 private:
  using Buf = detail::Buf;
  static Buf *allocate(uint64_t bytes) { return detail::allocate(bytes); }
  static void release(Buf *b) noexcept { detail::release(b); }

  void check_item(size_t item, const char *what) const {
    if (elsize_ % item != 0) throw Error(std::string(what) + " of " + std::to_string(item) + "-byte items over a block of " + std::to_string(elsize_) + "-byte elements (not a multiple)");
  }

  /** the count word of a target list: one parameter holding the list (destinations(targetList)) */
  static constexpr int32_t LIST = -1;
  /**
   * The destinations' memory, as the glue reads it (src/ucode/cpp/native.ts): the n entries,
   * then the targets' parameter indices, then their count k — (n + k + 1) int32s; or the list's
   * parameter and LIST.
   */
  int32_t *dests_for(std::vector<int32_t> params) {
    if (!dests_) {
      const bool list = params.size() == 2 && params[1] == LIST;
      const size_t k = list ? 1 : params.size();
      dests_ = allocate((n_ + k + 1) * sizeof(int32_t));
      if (!dests_->data) throw Error("cannot allocate the destinations of " + std::to_string(n_) + " elements");
      destn_ = n_;
      int32_t *d = reinterpret_cast<int32_t *>(dests_->data);
      std::fill_n(d, destn_, -1);
      std::copy(params.begin(), params.begin() + k, d + destn_);
      d[destn_ + k] = list ? LIST : static_cast<int32_t>(k);
      targets_ = std::move(params);
    }
    return reinterpret_cast<int32_t *>(dests_->data);
  }

  /** The two algorithms of seed 002 §3.3, as the TypeScript block runs them (src/ucode/dda.ts). */
  void defragment() {
    if (marked_.empty()) return;
    std::sort(marked_.begin(), marked_.end());
    marked_.erase(std::unique(marked_.begin(), marked_.end()), marked_.end());
    const uint64_t es = elsize_;
    if (!ordered_) {
      // each hole, ascending, takes the last live element; marked ones at the tail are dropped first
      uint64_t n = n_;
      size_t j = marked_.size() - 1;
      for (size_t i = 0; i <= j && i < marked_.size(); i++) {
        const uint64_t hole = marked_[i];
        while (j > i && marked_[j] == n - 1) { n--; j--; }
        n--;
        if (hole < n) std::memmove(p_ + hole * es, p_ + n * es, es);
      }
      n_ = n;
    } else {
      // the runs of live elements between marked ones shift down, each once
      uint64_t to = marked_[0];
      for (size_t i = 0; i < marked_.size(); i++) {
        const uint64_t from = marked_[i] + 1;
        const uint64_t end = i + 1 < marked_.size() ? marked_[i + 1] : n_;
        if (end > from) { std::memmove(p_ + to * es, p_ + from * es, (end - from) * es); to += end - from; }
      }
      n_ = to;
    }
    marked_.clear();
  }

  char *p_ = nullptr;
  uint64_t mem_ = 0, size_ = 0, n_ = 0;
  uint32_t elsize_ = 1;
  bool ordered_ = false;
  size_t index_ = 0, blocks_ = 1;
  Buf *grown_ = nullptr;
  Buf *dests_ = nullptr;
  uint64_t destn_ = 0;
  /** the parameters destinations(targets) named, in order (empty: entries are nodes) */
  std::vector<int32_t> targets_;
  std::vector<uint64_t> marked_;
};

/** Unused by ucodes; the original's header exposes it. */
enum BlockRetStatus { UNDEFINED = 0, CONTINUE, MIGRATE, WAIT, EXIT, STEAL };

// ------------------------------------------------------------------------------- the glue
namespace detail {

template <class F>
struct sig {
  static constexpr int arity = -1;
};
template <class R, class... A>
struct sig<R (*)(A...)> {
  static constexpr int arity = sizeof...(A);
  using args = std::tuple<A...>;
};
template <class R, class... A>
struct sig<R (*)(A...) noexcept> : sig<R (*)(A...)> {};

/** Whether a C++ parameter of type P takes a LuNA parameter of kind k (i r s v n). */
template <class P>
constexpr bool accepts(char k) {
  using B = typename std::remove_cv<typename std::remove_reference<P>::type>::type;
  constexpr bool lref = std::is_lvalue_reference<P>::value;
  constexpr bool constant = std::is_const<typename std::remove_reference<P>::type>::value;
  constexpr bool byValueOrConstRef = !std::is_reference<P>::value || (lref && constant);
  switch (k) {
    case 'i':
    case 'r': return std::is_arithmetic<B>::value && byValueOrConstRef;
    case 's': return (std::is_same<B, const char *>::value || std::is_same<B, std::string>::value || std::is_same<B, std::string_view>::value) && byValueOrConstRef;
    case 'v': return std::is_same<B, DF>::value && (!std::is_reference<P>::value || lref);
    case 'n': return std::is_same<B, DF>::value && lref && !constant;
    case 'b': return std::is_same<B, DdaBlock>::value && lref && !constant;
    default: return false;
  }
}

template <class F>
constexpr int arity() { return sig<F>::arity; }

template <class F, int I>
constexpr bool param_ok(char k) {
  if constexpr (sig<F>::arity <= I) return false;
  else return accepts<typename std::tuple_element<I, typename sig<F>::args>::type>(k);
}

template <class F, char... K, size_t... I>
constexpr bool all_ok(std::index_sequence<I...>) {
  if constexpr (sig<F>::arity != static_cast<int>(sizeof...(K))) return false;
  else return (param_ok<F, static_cast<int>(I)>(K) && ... && true);
}

template <char K, class P>
struct conv {
  using B = typename std::remove_cv<typename std::remove_reference<P>::type>::type;
  static decltype(auto) get(const luna_slot &s, DF &df, DdaBlock &block) {
    if constexpr (K == 'b') return static_cast<DdaBlock &>(block);
    else if constexpr (K == 'v' || K == 'n') return static_cast<DF &>(df);
    else if constexpr (K == 'i') return static_cast<B>(s.i);
    else if constexpr (K == 'r') return static_cast<B>(s.d);
    else if constexpr (std::is_same<B, const char *>::value) return s.p;
    else return B(s.p, static_cast<size_t>(s.n));
  }
};

template <char... K, class R, class... A, size_t... I>
void call_user(R (*fn)(A...), luna_frame *f, DF *dfs, DdaBlock *blocks, std::index_sequence<I...>) {
  fn(conv<K, A>::get(f->args[I], dfs[I], blocks[I])...);
}

inline void fail(luna_frame *f, const std::string &message) { f->host->fail(f->host->ctx, message.c_str()); }

inline const char *base_name(const char *path) {
  const char *b = path;
  for (const char *p = path; *p; p++)
    if (*p == '/' || *p == '\\') b = p + 1;
  return b;
}

/** Flush C stdio's stdout when it holds data (checking first costs no lock). */
inline void flush_stdout() {
#if defined(__GLIBC__) || defined(__linux__)
  if (__fpending(stdout) == 0) return;
#endif
  std::fflush(stdout);
}

/** Restores the thread's current call however the user's function leaves. */
struct CallScope {
  luna_frame *prev;
  explicit CallScope(luna_frame *f) noexcept : prev(current) { current = f; }
  ~CallScope() { current = prev; }
};

/**
 * The entry point body: DFs over the slots, the user's function, outputs committed while their
 * DFs live, every exception turned into the call's error. Flushes C stdio so C++ output keeps
 * its order with the runtime's direct writes.
 */
template <char... K, class F>
int invoke(luna_frame *f, F fn) {
  constexpr size_t N = sizeof...(K);
  if constexpr (!all_ok<F, K...>(std::make_index_sequence<N>{})) {
    fail(f, "internal: parameter kinds do not match");
    return 1;
  } else {
    constexpr char kinds[N + 1] = {K..., 0};
    Buf pinned[N ? N : 1];
    DF dfs[N ? N : 1];
    DdaBlock blocks[N ? N : 1];
    for (size_t i = 0; i < N; i++) {
      if (kinds[i] == 'v') dfs[i].bind_input_(f->args[i], pinned[i], static_cast<int32_t>(i));
      else if (kinds[i] == 'n') dfs[i].bind_output_(static_cast<int32_t>(i));
      else if (kinds[i] == 'b') blocks[i].bind_(f->args[i]);
    }
    int rc = 0;
    {
      CallScope scope(f);
      try {
        call_user<K...>(fn, f, dfs, blocks, std::make_index_sequence<N>{});
        for (size_t i = 0; i < N; i++) {
          if (kinds[i] == 'b') {
            luna_slot s = blocks[i].commit_();
            f->host->commit(f->host->ctx, static_cast<int32_t>(i), &s);
          }
          if (kinds[i] != 'n' || dfs[i].is_unset()) continue;
          luna_slot s = dfs[i].slot_();
          f->host->commit(f->host->ctx, static_cast<int32_t>(i), &s);
        }
      } catch (const Abort &e) {
        fail(f, std::string(e.what()) + " (ABORT at " + base_name(e.file()) + ":" + std::to_string(e.line()) + ")");
        rc = 1;
      } catch (const Error &e) {
        fail(f, e.what());
        rc = 1;
      } catch (const std::exception &e) {
        fail(f, "C++ exception " + demangle(typeid(e).name()) + ": " + e.what());
        rc = 1;
      } catch (...) {
        fail(f, "C++ exception of an unknown type");
        rc = 1;
      }
    }
    flush_stdout();
    return rc;
  }
}

}  // namespace detail

// ------------------------------------------------------------------------ the ucode context
// What a running ucode may know of its fragment and ask of its node (luna-ts, ABI version 2;
// the TypeScript ucodes' context() in docs/language.md). Only during a call.

/** The running CF. */
struct Context {
  int cf;             // its number on this node, as the trace records it
  int node;           // this node's rank
  int lane;           // the lane the call runs on, as the trace records it (1..T)
  bool waits;         // its import may wait for the node (`: WAITS`, a block parameter)
  std::string label;  // `x[3]`
  std::string gid;    // its global id
};

/** A request the node refused (or could not make): the ucode may catch it. */
class RequestFailed : public Error {
 public:
  using Error::Error;
};

namespace detail {
inline const luna_host *host_v2(const char *what) {
  luna_frame *f = current;
  if (!f || !f->host) throw Error(std::string("ucenv::") + what + "() is available only while a ucode runs");
  if (f->host->version < 2) throw Error(std::string("ucenv::") + what + "() needs a newer luna-ts runtime (ABI version 2)");
  return f->host;
}
}  // namespace detail

/** The running CF's context. */
inline Context context() {
  const luna_host *h = detail::host_v2("context");
  luna_context c{};
  if (h->context(h->ctx, &c) != 0) throw Error("ucenv::context(): the runtime gave no context");
  return Context{c.cf, c.node, c.lane, c.waits != 0, c.label ? c.label : "", c.gid ? c.gid : ""};
}

/**
 * Ask this node (the handler a layer registered for `kind`) and wait for the answer, booked as
 * a wait of the handler's kind (W in SLOW). `payload` and the answer are JSON texts. Only for
 * imports that may wait (`: WAITS`). Throws RequestFailed with the refusal.
 */
inline std::string request(const std::string &kind, const std::string &payload = std::string()) {
  const luna_host *h = detail::host_v2("request");
  const char *answer = nullptr;
  uint64_t n = 0;
  int32_t rc = h->request(h->ctx, kind.c_str(), payload.data(), payload.size(), &answer, &n);
  std::string text(answer ? answer : "", answer ? static_cast<size_t>(n) : 0);
  if (rc != 0) throw RequestFailed(text);
  return text;
}

}  // namespace ucenv
}  // namespace luna

// The original exposes these at global scope too.
using luna::ucenv::DF;
using luna::ucenv::InputDF;
using luna::ucenv::OutputDF;
using luna::ucenv::DdaBlock;
using luna::ucenv::BlockRetStatus;
namespace ucenv = luna::ucenv;

// exit() and its kin called by a ucode would end the whole node without a word. The library is
// linked with --wrap for them (src/ucode/cpp/build.ts): during a call they report what the
// ucode did and raise SIGABRT, which the runtime's handler turns into the call's error (naming
// the fragment); outside a call they do what they would have done. Weak: every glue unit
// includes this header.
#include <csignal>
extern "C" {
[[noreturn]] void __real_exit(int) __attribute__((weak));
[[noreturn]] void __real__exit(int) __attribute__((weak));
[[noreturn]] void __real__Exit(int) __attribute__((weak));
[[noreturn]] void __real_quick_exit(int) __attribute__((weak));
}
namespace luna {
namespace ucenv {
namespace detail {
[[noreturn]] inline void exit_called(const char *what, int code, void (*real)(int)) {
  if (luna_frame *f = current) {
    std::fflush(stdout);
    f->host->fail(f->host->ctx, ("luna-fault:called " + std::string(what) + "(" + std::to_string(code) + "): a ucode must not end the process").c_str());
    std::raise(SIGABRT);
  }
  if (real) real(code);
  std::_Exit(code);
}
}  // namespace detail
}  // namespace ucenv
}  // namespace luna
extern "C" {
__attribute__((weak, noreturn)) void __wrap_exit(int code) { luna::ucenv::detail::exit_called("exit", code, __real_exit); }
__attribute__((weak, noreturn)) void __wrap__exit(int code) { luna::ucenv::detail::exit_called("_exit", code, __real__exit); }
__attribute__((weak, noreturn)) void __wrap__Exit(int code) { luna::ucenv::detail::exit_called("_Exit", code, __real__Exit); }
__attribute__((weak, noreturn)) void __wrap_quick_exit(int code) { luna::ucenv::detail::exit_called("quick_exit", code, __real_quick_exit); }
}

/** Stop the run with a message: ABORT("n must be positive, got " << n) */
#ifndef ABORT
#define ABORT(msg)                                                                    \
  do {                                                                                \
    ::std::ostringstream luna_abort_text_;                                            \
    luna_abort_text_ << msg;                                                          \
    throw ::luna::ucenv::Abort(luna_abort_text_.str(), __FILE__, __LINE__);           \
  } while (0)
#endif

#endif
