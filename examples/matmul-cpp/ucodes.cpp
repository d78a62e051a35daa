// The compute ucodes of matmul-cpp, written against the original LuNA ucode API: extern "C"
// functions taking const InputDF& / OutputDF&, raw blocks through getData<double>() and
// create<double>(n). This file compiles unchanged with the original LuNA.
#include "ucenv.h"
#include "kernel.h"

using namespace luna::ucenv;

extern "C" {

/** c = a * b for bs x bs blocks. */
void c_mul(int bs, const InputDF &a, const InputDF &b, OutputDF &c)
{
    if (a.getSize() != sizeof(double) * bs * bs || b.getSize() != a.getSize())
        ABORT("c_mul: blocks of " << a.getSize() << " and " << b.getSize() << " bytes, expected " << sizeof(double) * bs * bs);
    double *z = c.create<double>(bs * bs, 0.0);
    block_mul(bs, a.getData<double>(), b.getData<double>(), z);
}

/** s = x + y (element-wise). */
void c_add(int bs, const InputDF &x, const InputDF &y, OutputDF &s)
{
    block_add((long)bs * bs, x.getData<double>(), y.getData<double>(), s.create<double>(bs * bs));
}

/** y = x, sharing the buffer (no copy). */
void c_share(const InputDF &x, OutputDF &y)
{
    y = x;
}

}
