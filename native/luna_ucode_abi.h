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
 */
#ifndef LUNA_UCODE_ABI_H
#define LUNA_UCODE_ABI_H

#include <stdint.h>

#define LUNA_UCODE_ABI_VERSION 1

/* Value tags, the same numbers as src/ucode/value.ts (T_INT … T_JS). */
enum {
  LUNA_T_UNSET = 0,
  LUNA_T_INT = 1,
  LUNA_T_REAL = 2,
  LUNA_T_STRING = 3,
  LUNA_T_RAW = 4,
  LUNA_T_JS = 5
};

typedef struct luna_slot {
  int32_t type;   /* LUNA_T_* (value and name parameters); unused for int/real/string ones */
  int32_t i;      /* int */
  double d;       /* real */
  const char *p;  /* string bytes (NUL-terminated) or raw bytes */
  uint64_t n;     /* string length without the NUL, or raw byte length */
  int32_t ref;    /* raw/js: the JavaScript object holding the bytes (host table index), -1: none */
  int32_t pad;
} luna_slot;

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
} luna_host;

typedef struct luna_frame {
  const luna_host *host;
  luna_slot *args;
  int32_t nargs;
} luna_frame;

typedef int (*luna_entry)(luna_frame *);

#endif
