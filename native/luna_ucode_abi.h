/*
 * The plain-C boundary between the luna-ts runtime (the luna_ucode addon) and a compiled C++
 * ucode library (the user's code plus the generated glue, built with ucenv.h). Only C types
 * cross it, so the addon and the library may come from different compilers; C++ objects
 * (DF, exceptions) never leave the library.
 *
 * A call: the addon fills one luna_slot per parameter, calls the library's entry point
 * `int luna_call_<alias>(luna_frame *)`; the glue builds DFs over the slots, calls the user's
 * function, hands every output back through host->commit while its DFs are still alive, and
 * returns 0 (or reports the error through host->fail and returns non-zero).
 *
 * Version 2 appends host calls to luna_host (a ucode's context and requests to its node): a
 * version-1 library reads only the fields before them, so it loads and runs unchanged; a
 * version-2 library checks host->version before using them.
 */
#ifndef LUNA_UCODE_ABI_H
#define LUNA_UCODE_ABI_H

#include <stdint.h>

#define LUNA_UCODE_ABI_VERSION 2

/* Value tags, the same numbers as src/ucode/value.ts (T_INT … T_JS). */
enum {
  LUNA_T_UNSET = 0,
  LUNA_T_INT = 1,
  LUNA_T_REAL = 2,
  LUNA_T_STRING = 3,
  LUNA_T_RAW = 4,
  LUNA_T_JS = 5,
  /* not a value: a block parameter's state, committed back at the end of the call */
  LUNA_T_BLOCK = 6
};

/*
 * A `block` parameter (a dynamic array's block held by the CF) in its slot: `p` the block's
 * memory, `n` the memory's length, `d` the block's size in bytes (<= n), `i` its element count,
 * `pad` the element size, `type` its defragmentation (LUNA_BLOCK_UNORDERED or _ORDERED) in its
 * low 8 bits, the block's index among its node's blocks in bits 8-19 and their count - 1 in bits
 * 20-30 (both 0 for an array of one block a node: the value is then the order alone). The
 * glue commits the state the ucode left (type LUNA_T_BLOCK; `i` the count, `d` the size, `ref`
 * the memory host->alloc gave when the block outgrew its own, else -1; `pad` the memory
 * host->alloc gave for the elements' destinations, an int32 per element the block held when the
 * ucode asked for them, -2 for a marked one; else -1).
 */
enum { LUNA_BLOCK_UNORDERED = 1, LUNA_BLOCK_ORDERED = 2 };

typedef struct luna_slot {
  int32_t type;   /* LUNA_T_* (value and name parameters); unused for int/real/string ones */
  int32_t i;      /* int */
  double d;       /* real */
  const char *p;  /* string bytes (NUL-terminated) or raw bytes */
  uint64_t n;     /* string length without the NUL, or raw byte length */
  int32_t ref;    /* raw/js: the JavaScript object holding the bytes (host table index), -1: none */
  int32_t pad;
} luna_slot;

/* The running CF as its ucode sees it (version 2): strings valid until the next host call. */
typedef struct luna_context {
  int32_t cf;         /* its number on this node, as the trace records it (cfStart.cf) */
  int32_t node;       /* this node's rank */
  int32_t lane;       /* the lane the call runs on, as the trace records it (1..T) */
  int32_t waits;      /* 1: the import says it may wait for its node (`: WAITS`, a block) */
  const char *label;  /* the CF's label with its indices, `x[3]` */
  const char *gid;    /* its global id, `3_5_0` */
} luna_context;

typedef struct luna_host {
  void *ctx;
  /* Zero-filled shared memory the runtime owns (a SharedArrayBuffer); NULL when it cannot. */
  void *(*alloc)(void *ctx, uint64_t bytes, int32_t *ref);
  /* Display name of the DF of parameter `param` (valid until the call returns). */
  const char *(*name)(void *ctx, int32_t param);
  /* Store the value of output parameter `param`. */
  void (*commit)(void *ctx, int32_t param, const luna_slot *value);
  /* Report the error that ends the call (the entry point then returns non-zero). */
  void (*fail)(void *ctx, const char *message);
  /* ---- version 2 (absent from a version-1 host: check `version` first) */
  int32_t version;
  int32_t reserved;
  /* Fill `out` with the running CF's context; non-zero when it cannot (message by `error`). */
  int32_t (*context)(void *ctx, luna_context *out);
  /*
   * Ask this node's system thread (a handler a layer registered for `kind`) and wait for the
   * answer; the wait is traced as the handler's kind and booked as W. The payload and the answer
   * are JSON texts (payload NULL or empty: none). Returns 0 with the answer in *answer (valid
   * until the next host call), or non-zero with the refusal or the reason in *answer.
   */
  int32_t (*request)(void *ctx, const char *kind, const char *payload, uint64_t payload_n, const char **answer, uint64_t *answer_n);
} luna_host;

typedef struct luna_frame {
  const luna_host *host;
  luna_slot *args;
  int32_t nargs;
} luna_frame;

typedef int (*luna_entry)(luna_frame *);

#endif
