// Trivial C++ fragments for bench/cpp.ts: the C++ twins of examples/chain and
// examples/independent's ucodes (without the busy-wait: the benchmark runs them with us = 0).
#include "ucenv.h"

extern "C" {
void c_start(OutputDF &x) { x = 0; }
void c_step(const InputDF &prev, int us, OutputDF &next) { (void)us; next = prev.get_int() + 1; }
void c_work(int i, int us) { (void)i; (void)us; }
}
