// The block kernels of heat3d-cpp in C++, against the original LuNA ucode API: a block is a raw
// DF of nx*ny*nz doubles, (x, y, z) at ((x*ny) + y)*nz + z; coefficients are 2 doubles per point
// (alpha, beta after it); the forward sweep passes 2 doubles per line of the block's face, the
// backward sweep 1. The same operations in the same order as heat3d's TypeScript kernels (and
// its sequential solver), so the results agree to the last bit.
#include "ucenv.h"
#include <cmath>

using namespace luna::ucenv;

namespace {

struct Block { int x0, y0, z0, nx, ny, nz; };

void extent(int n, int p, int k, int &lo, int &hi) { lo = (int)((long)k * n / p); hi = (int)((long)(k + 1) * n / p); }

Block blockOf(int n, int px, int py, int pz, int b)
{
    if (n < px || n < py || n < pz || b < 0 || b >= px * py * pz) ABORT("heat3d: block " << b << " of " << px << "x" << py << "x" << pz << " on " << n << "^3 points");
    Block k;
    int hi;
    extent(n, px, b / (py * pz), k.x0, hi); k.nx = hi - k.x0;
    extent(n, py, (b / pz) % py, k.y0, hi); k.ny = hi - k.y0;
    extent(n, pz, b % pz, k.z0, hi); k.nz = hi - k.z0;
    return k;
}

/** The lines of a block along direction d: count, length, first point of line f, step. */
struct Lines {
    int count, len, step, d, ny, nz;
    long base(int f) const { return d == 0 ? f : d == 1 ? (long)(f / nz) * ny * nz + f % nz : (long)f * nz; }
};

Lines linesOf(const Block &k, int d)
{
    if (d == 0) return Lines{k.ny * k.nz, k.nx, k.ny * k.nz, d, k.ny, k.nz};
    if (d == 1) return Lines{k.nx * k.nz, k.ny, k.nz, d, k.ny, k.nz};
    return Lines{k.nx * k.ny, k.nz, 1, d, k.ny, k.nz};
}

double initial(int n, int i, int j, int k)
{
    const double h = 1.0 / (n + 1), pi = M_PI;
    return std::sin(pi * (i + 1) * h) * std::sin(pi * (j + 1) * h) * std::sin(pi * (k + 1) * h);
}

} // namespace

extern "C" {

void c_init_block(int n, int px, int py, int pz, int b, OutputDF &u)
{
    Block k = blockOf(n, px, py, pz, b);
    double *a = u.create<double>((long)k.nx * k.ny * k.nz);
    for (int x = 0; x < k.nx; x++)
        for (int y = 0; y < k.ny; y++)
            for (int z = 0; z < k.nz; z++) a[((long)x * k.ny + y) * k.nz + z] = initial(n, k.x0 + x, k.y0 + y, k.z0 + z);
}

void c_forward(int n, int px, int py, int pz, int d, int b, double sigma, const InputDF &u, const InputDF &fin, OutputDF &co, OutputDF &fout)
{
    Block k = blockOf(n, px, py, pz, b);
    Lines L = linesOf(k, d);
    const long points = (long)k.nx * k.ny * k.nz;
    const double *a = u.getData<double>(), *f = fin.getSize() ? fin.getData<double>() : nullptr;
    double *c = co.create<double>(2 * points), *out = fout.create<double>(2L * L.count);
    const double cc = 1 + 2 * sigma;
    for (int l = 0; l < L.count; l++) {
        double al = f ? f[2 * l] : 0, be = f ? f[2 * l + 1] : 0;
        long i = L.base(l);
        for (int m = 0; m < L.len; m++, i += L.step) {
            const double den = cc - sigma * al;
            al = sigma / den;
            be = (a[i] + sigma * be) / den;
            c[2 * i] = al;
            c[2 * i + 1] = be;
        }
        out[2 * l] = al;
        out[2 * l + 1] = be;
    }
}

void c_backward(int n, int px, int py, int pz, int d, int b, const InputDF &co, const InputDF &bin, OutputDF &v, OutputDF &bout)
{
    Block k = blockOf(n, px, py, pz, b);
    Lines L = linesOf(k, d);
    const long points = (long)k.nx * k.ny * k.nz;
    const double *c = co.getData<double>(), *after = bin.getSize() ? bin.getData<double>() : nullptr;
    double *out = v.create<double>(points), *first = bout.create<double>(L.count);
    for (int l = 0; l < L.count; l++) {
        double y = after ? after[l] : 0;
        long i = L.base(l) + (long)(L.len - 1) * L.step;
        for (int m = L.len - 1; m >= 0; m--, i -= L.step) {
            y = c[2 * i] * y + c[2 * i + 1];
            out[i] = y;
        }
        first[l] = y;
    }
}

void c_check_block(int n, int px, int py, int pz, int b, int stages, double sigma, const InputDF &u, OutputDF &ok)
{
    Block k = blockOf(n, px, py, pz, b);
    const long points = (long)k.nx * k.ny * k.nz;
    if ((long)u.getSize() != points * (long)sizeof(double)) ABORT("heat3d: block " << b << " has " << u.getSize() << " bytes, expected " << points * sizeof(double));
    const double *a = u.getData<double>();
    const double s = std::sin(M_PI / (2 * (n + 1))), g = std::pow(1 + 4 * sigma * s * s, stages);
    for (int x = 0; x < k.nx; x++)
        for (int y = 0; y < k.ny; y++)
            for (int z = 0; z < k.nz; z++) {
                const double want = initial(n, k.x0 + x, k.y0 + y, k.z0 + z) / g, got = a[((long)x * k.ny + y) * k.nz + z];
                if (!(std::fabs(got - want) <= 1e-9 * (1 + std::fabs(want))))
                    ABORT("heat3d: block " << b << ", point (" << k.x0 + x << ", " << k.y0 + y << ", " << k.z0 + z << "): " << got << ", the scheme gives " << want);
            }
    ok = 1;
}

}
