// The compute ucodes of pic3d in C++ (the kernels are kernel.h), written against the original
// LuNA ucode API: extern "C" functions taking const InputDF& / OutputDF&, raw blocks through
// getData<double>() and create<double>(n). The initial cloud and its cutting into subdomains are
// C++ too (the same bits as examples/pic3d/driver.ts: they run before the first step, so their
// speed is the start-up's), and so is each subdomain's final summary; the
// reference, the chain of sums and the report are TypeScript: ucodes.ts.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include "ucenv.h"
#include "kernel.h"

using namespace luna::ucenv;
using pic3d::Bundle;

namespace {

const double *data(const InputDF &df) { return df.getSize() == 0 ? nullptr : df.getData<double>(); }

/** The 27 arriving bundles: the staying particles (position STAY), the neighbours' leaving arrays (the others). */
void bundles(const InputDF *const *dfs, Bundle *out) {
    for (int d = 0; d < 27; d++) {
        const long len = (long)(dfs[d]->getSize() / sizeof(double));
        out[d] = d == pic3d::STAY ? Bundle{data(*dfs[d]), len} : pic3d::partOf(data(*dfs[d]), len, d);
    }
}

/** Per-thread scratch, one per use (slot), kept between calls. */
std::vector<double> &scratch(long size, int slot = 0) {
    static thread_local std::vector<double> pads[8];
    std::vector<double> &pad = pads[slot];
    if ((long)pad.size() != size) pad.assign(size, 0.0);
    return pad;
}


/** Summary fields (driver.ts): sums over particles, then maxima. */
enum { COUNT = 0, MASS = 1, IDS = 2, PMOM = 3, PREF = 6, DX = 9, DV = 10, SUMMARY = 11 };

/** Math.max of JavaScript: NaN wins. */
double jsMax(double a, double b) { return a != a || b != b ? NAN : (a > b ? a : b); }

[[noreturn]] void failed(const std::string &why) {
    std::printf("pic3d: FAILED (%s)\n", why.c_str());
    std::fflush(stdout);
    ABORT("pic3d: " << why);
}

/** A number as JavaScript prints an integer-valued double, or with 17 digits. */
std::string num(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, v == (double)(long long)v && std::fabs(v) < 9e15 ? "%.0f" : "%.17g", v);
    return buf;
}


/** The deposit block L: (n+1)³ doubles, zeroed, followed by φ's n³ (copied in); its deposit part. */
double *depositBlock(int N, int F, const InputDF &phi, OutputDF &L) {
    const long n = N / F, n1 = n + 1;
    double *out = L.create<double>(n1 * n1 * n1 + n * n * n);
    std::memset(out, 0, sizeof(double) * n1 * n1 * n1);
    std::memcpy(out + n1 * n1 * n1, phi.getData<double>(), sizeof(double) * n * n * n);
    return out;
}

/** The deposit parts and the φ parts of the 27 deposit blocks around a subdomain. */
void split(int N, int F, const InputDF *const *Ls, const double **deps, const double **phis) {
    const long n1 = N / F + 1;
    for (int d = 0; d < 27; d++) {
        deps[d] = Ls[d]->getData<double>();
        phis[d] = deps[d] + n1 * n1 * n1;
    }
}

}  // namespace

#define GUARD(body) try { body; } catch (const pic3d::KernelError &e) { ABORT("pic3d: " << e.what()); }

/**
 * This thread's push results, kept between calls. Reached through a call, not named where the push
 * is inlined: in this shared library a thread_local's address is a __tls_get_addr call, which the
 * compiler repeated inside the push's loop, once a particle (~10 ms of the lanes' CPU a run at the
 * seed's parameters).
 */
[[gnu::noinline]] static pic3d::Pushed &pushScratch(int slot = 0)
{
    // per slot: a group's pushes (c_push_g) keep each subdomain's result until its packs are made
    static thread_local std::vector<pic3d::Pushed> r(1);
    if ((int)r.size() <= slot) r.resize(slot + 1);
    return r[slot];
}

/**
 * The push of the staying particles S and the arrived ones A, in the deposit's order (arrived from
 * the directions before STAY, the staying ones, the rest), with g from the own and 7 upper
 * neighbours' G (gs) or already at the nodes the cells touch (g, node (li, lj, lk) at
 * g + 3·(li·px + lj·py + lk)) -> the staying particles, the leaving array
 */
static void pushOut(int N, int F, int a, int b, int c, const double *const *gs, const double *g, long px, long py, const InputDF &S, const InputDF &A, OutputDF &stay, OutputDF &leaving)
{
    Bundle bs[27];
    const double *arrived = data(A);
    const long alen = (long)(A.getSize() / sizeof(double));
    for (int d = 0; d < 27; d++)
        bs[d] = d == pic3d::STAY ? Bundle{data(S), (long)(S.getSize() / sizeof(double))} : pic3d::partOf(arrived, alen, d);
    pic3d::Pushed &r = pushScratch();
    GUARD(if (gs) pic3d::push(N, F, a, b, c, gs, bs, 27, r); else pic3d::pushAt(N, F, a, b, c, g, px, py, bs, 27, r))
    double *to[27];
    pic3d::outgoing(r.count, stay.create<double>(r.count[pic3d::STAY] * pic3d::REC), leaving.create<double>(pic3d::leavingSize(r.count)), to);
    pic3d::scatter(r, to);
}


extern "C" {

// The start (driver.ts, the same layouts): the cloud in parts by particle id, each sorted by
// subdomain; on several nodes each node's parts keep only its own layers (pic3d.fa), or the parts
// are cut into x-slabs (pic3d_dda.fa: one DF per part and slab crosses to its node once); each
// subdomain's particles taken from every part or slab, part after part (id order, as from one
// sorted cloud).

/** Part q of B sorted by subdomain, only the particles of layers [x0, x1) (c_init_part, c_init_part_x). */
static void initPart(int N, int F, int NP, int NT, int K, int q, int B, int x0, int x1, OutputDF &part)
{
    std::string why = pic3d::badParams(N, F, NP, NT, K);
    if (why.empty() && !(B >= 1 && q >= 0)) why = "cloud part " + std::to_string(q) + " of " + std::to_string(B);
    if (why.empty() && !(0 <= x0 && x0 <= x1 && x1 <= F)) why = "cloud layers [" + std::to_string(x0) + ", " + std::to_string(x1) + ") of F=" + std::to_string(F);
    if (!why.empty()) {
        std::printf("pic3d: FAILED (%s)\n", why.c_str());
        ABORT("pic3d: " << why);
    }
    const int S = F * F * F;
    // a DF beyond the B parts holds no particle; a node without layers (more nodes than F) keeps
    // none, and draws none
    const long lo = q < B && x0 < x1 ? (long)((long long)q * NP / B) : 0, hi = q < B && x0 < x1 ? (long)((long long)(q + 1) * NP / B) : 0;
    // the records kept (those of layers [x0, x1)) drawn once, then each written in its place;
    // the others are not stored
    const int s0 = x0 * F * F, s1 = x1 * F * F;
    std::vector<double> recs;
    std::vector<int32_t> sub;
    recs.reserve((size_t)(hi - lo) * (x1 - x0) / F * pic3d::REC);
    sub.reserve((size_t)(hi - lo) * (x1 - x0) / F);
    std::vector<long> start(S + 1, 0);
    pic3d::cloudPart(NP, lo, hi, [&](long, const double *r) {
        const int s = pic3d::subdomainOf(r, N, F);
        if (s < s0 || s >= s1) return;
        recs.insert(recs.end(), r, r + pic3d::REC);
        sub.push_back(s);
        start[s + 1]++;
    });
    for (int s = 0; s < S; s++) start[s + 1] += start[s];
    double *out = part.create<double>(S + 1 + (size_t)start[S] * pic3d::REC);
    for (int s = 0; s <= S; s++) out[s] = (double)start[s];
    double *records = out + S + 1;
    for (size_t p = 0; p < sub.size(); p++)
        std::memcpy(records + start[sub[p]]++ * pic3d::REC, recs.data() + p * pic3d::REC, sizeof(double) * pic3d::REC);
}

/** Part q of B of the initial cloud (the ids of model.ts cloudRange; none when q >= B) sorted by subdomain: F³ + 1 offsets (in particles) as doubles, then the records. */
void c_init_part(int N, int F, int NP, int NT, int K, int q, int B, OutputDF &part)
{
    initPart(N, F, NP, NT, K, q, B, 0, F, part);
}

/**
 * c_init_part keeping only the particles of subdomain layers [x0, x1) (the same layout, the other
 * subdomains empty): on several nodes each node makes every part for its own layers, so no
 * particle crosses a node border before the first step (driver.ts c_init_part_x)
 */
void c_init_part_x(int N, int F, int NP, int NT, int K, int q, int B, int x0, int x1, OutputDF &part)
{
    initPart(N, F, NP, NT, K, q, B, x0, x1, part);
}

/** The x-slab a of a part of the cloud: F² + 1 offsets, then the records of subdomains (a, 0, 0) … (a, F−1, F−1). */
void c_cut(int F, int a, const InputDF &part, OutputDF &slab)
{
    const long S = (long)F * F * F, F2 = (long)F * F;
    const double *src = part.getData<double>();
    const long first = (long)src[a * F2], last = (long)src[(a + 1) * F2];
    double *out = slab.create<double>(F2 + 1 + (last - first) * pic3d::REC);
    for (long k = 0; k <= F2; k++) out[k] = src[a * F2 + k] - (double)first;
    std::memcpy(out + F2 + 1, src + S + 1 + first * pic3d::REC, sizeof(double) * (last - first) * pic3d::REC);
}

/** Subdomain s's doubles in the 4 sorted parts (offsets + 1 offsets, then records). */
static long partsSize(const InputDF *const *ps, long s)
{
    long size = 0;
    for (int q = 0; q < 4; q++) { const double *x = ps[q]->getData<double>(); size += ((long)x[s + 1] - (long)x[s]) * pic3d::REC; }
    return size;
}

/** Subdomain s's records of the 4 sorted parts, part after part, into w. */
static void gatherInto(const InputDF *const *ps, long offsets, long s, double *w)
{
    for (int q = 0; q < 4; q++) {
        const double *x = ps[q]->getData<double>();
        const long lo = offsets + 1 + (long)x[s] * pic3d::REC, hi = offsets + 1 + (long)x[s + 1] * pic3d::REC;
        if (hi > lo) std::memcpy(w, x + lo, sizeof(double) * (hi - lo));
        w += hi - lo;
    }
}

/** Subdomain s's records of each of the 4 sorted parts (offsets + 1 offsets, then records), part after part, into `stay`; their doubles. */
static long gatherParts(const InputDF &p0, const InputDF &p1, const InputDF &p2, const InputDF &p3, long offsets, long s, OutputDF &stay, double **out)
{
    const InputDF *ps[4] = {&p0, &p1, &p2, &p3};
    const long size = partsSize(ps, s);
    *out = stay.create<double>(size);
    gatherInto(ps, offsets, s, *out);
    return size;
}

/** Subdomain (a, b, c)'s first deposit, its `len` doubles of staying particles alone (nothing arrived yet) into `block` (zeros); its arrivals' array (none) into `arrived`. */
static void depositStaying(int N, int F, int a, int b, int c, const double *stay, long len, double *block, double *arrived)
{
    Bundle bs[27];
    for (int d = 0; d < 27; d++) bs[d] = d == pic3d::STAY ? Bundle{stay, len} : Bundle{nullptr, 0};
    GUARD(pic3d::deposit(N, F, a, b, c, bs, 27, block))
    const long none[27] = {0};
    double *to[27];
    pic3d::outgoing(none, nullptr, arrived, to);
}

/** The particles of subdomain (a, b, c) at step 0 from the x-slab a of each part: all staying, none leaving. */
void c_pick(int F, int b, int c, const InputDF &s0, const InputDF &s1, const InputDF &s2, const InputDF &s3, OutputDF &stay, OutputDF &leaving)
{
    double *out;
    gatherParts(s0, s1, s2, s3, (long)F * F, (long)b * F + c, stay, &out);
    leaving.create<double>(0);
}

/** The particles of subdomain (a, b, c) at step 0 straight from the parts of the cloud (one node: no slab cut). */
void c_pick_all(int F, int a, int b, int c, const InputDF &p0, const InputDF &p1, const InputDF &p2, const InputDF &p3, OutputDF &stay, OutputDF &leaving)
{
    double *out;
    gatherParts(p0, p1, p2, p3, (long)F * F * F, ((long)a * F + b) * F + c, stay, &out);
    leaving.create<double>(0);
}

/** The first step's deposit from the parts of the cloud into S, L (the deposit block, then `tail` zeros: φ or none), A (no arrivals). */
static void depositCloud(int N, int F, int a, int b, int c, const InputDF &p0, const InputDF &p1, const InputDF &p2, const InputDF &p3, OutputDF &S, OutputDF &L, OutputDF &A, long tail)
{
    double *stay;
    const long len = gatherParts(p0, p1, p2, p3, (long)F * F * F, ((long)a * F + b) * F + c, S, &stay);
    const long n1 = N / F + 1;
    const long none[27] = {0};
    depositStaying(N, F, a, b, c, stay, len, L.create<double>(n1 * n1 * n1 + tail, 0.0), A.create<double>(pic3d::leavingSize(none)));
}

/**
 * The first step's deposit on one node, straight from the parts of the cloud (fragments.ts
 * c_deposit_all): the subdomain's particles copied into S and deposited -> S, L, A (no arrivals)
 */
void c_deposit_all(int N, int F, int a, int b, int c, const InputDF &p0, const InputDF &p1, const InputDF &p2, const InputDF &p3, OutputDF &S, OutputDF &L, OutputDF &A)
{
    // the deposit block followed by the first φ, all zeros
    const long n = N / F;
    depositCloud(N, F, a, b, c, p0, p1, p2, p3, S, L, A, n * n * n);
}

/** The doubles of the arrivals' array of `bs` (a leaving array's layout). */
static long arrivedSize(const Bundle *bs)
{
    long n = pic3d::HEADER;
    for (int d = 0; d < 27; d++) if (d != pic3d::STAY) n += bs[d].len;
    return n;
}

/** The arrived particles (the neighbours' parts coming this way, `bs`) into `out` (arrivedSize doubles), in a leaving array's layout. */
static void arrivedInto(const Bundle *bs, double *out)
{
    long count[27] = {0};
    for (int d = 0; d < 27; d++) if (d != pic3d::STAY) count[d] = bs[d].len / pic3d::REC;
    double *to[27];
    pic3d::outgoing(count, nullptr, out, to);
    for (int d = 0; d < 27; d++)
        if (d != pic3d::STAY && bs[d].len) std::memcpy(to[d], bs[d].p, sizeof(double) * bs[d].len);
}

/** The arrived particles (the neighbours' parts coming this way, `bs`) into A, in a leaving array's layout. */
static void gatherArrived(const Bundle *bs, OutputDF &A)
{
    arrivedInto(bs, A.create<double>(arrivedSize(bs)));
}

/**
 * deposit(the staying particles, the 26 neighbours' leaving arrays, the subdomain's φ) -> the
 * (n+1)³ deposit block followed by φ (stencil.fah: the step's first sweep group reads both in one
 * DF), the arrived particles (a leaving array's layout)
 */
void c_deposit(int N, int F, int a, int b, int c, const InputDF &i0, const InputDF &i1, const InputDF &i2, const InputDF &i3, const InputDF &i4, const InputDF &i5, const InputDF &i6, const InputDF &i7, const InputDF &i8, const InputDF &i9, const InputDF &i10, const InputDF &i11, const InputDF &i12, const InputDF &i13, const InputDF &i14, const InputDF &i15, const InputDF &i16, const InputDF &i17, const InputDF &i18, const InputDF &i19, const InputDF &i20, const InputDF &i21, const InputDF &i22, const InputDF &i23, const InputDF &i24, const InputDF &i25, const InputDF &i26, const InputDF &phi, OutputDF &L, OutputDF &A)
{
    const InputDF *in[27] = {&i0, &i1, &i2, &i3, &i4, &i5, &i6, &i7, &i8, &i9, &i10, &i11, &i12, &i13, &i14, &i15, &i16, &i17, &i18, &i19, &i20, &i21, &i22, &i23, &i24, &i25, &i26};
    Bundle bs[27];
    bundles(in, bs);
    double *out = depositBlock(N, F, phi, L);
    GUARD(pic3d::deposit(N, F, a, b, c, bs, 27, out))
    gatherArrived(bs, A);
}

/** push(G of own and 7 upper neighbours, the staying particles, the arrived ones) -> the staying particles, the leaving array */
void c_push(int N, int F, int a, int b, int c, const InputDF &g0, const InputDF &g1, const InputDF &g2, const InputDF &g3,
    const InputDF &g4, const InputDF &g5, const InputDF &g6, const InputDF &g7, const InputDF &S, const InputDF &A, OutputDF &stay, OutputDF &leaving)
{
    const double *gs[8] = {g0.getData<double>(), g1.getData<double>(), g2.getData<double>(), g3.getData<double>(),
        g4.getData<double>(), g5.getData<double>(), g6.getData<double>(), g7.getData<double>()};
    pushOut(N, F, a, b, c, gs, nullptr, 0, 0, S, A, stay, leaving);
}

static void summarizeInto(int N, int F, int NP, int a, int b, int c, const InputDF &ref, const InputDF *const *in, double *s);
static void summarizeBundles(int N, int F, int NP, int a, int b, int c, const InputDF &ref, const Bundle *bs, double *s);

/**
 * The summary of subdomain (a, b, c) after the last step from its 27 parts (the staying particles,
 * the neighbours' leaving arrays), checked against the reference when given: driver.ts's
 * summarize, the same sums in the same order. In C++ so the workers run no TypeScript in the steps'
 * program (a TypeScript summary was optimised four times over on every thread of a 1 × 2 run).
 */
void c_final(int N, int F, int NP, int a, int b, int c, const InputDF &ref, const InputDF &i0, const InputDF &i1, const InputDF &i2, const InputDF &i3, const InputDF &i4, const InputDF &i5, const InputDF &i6, const InputDF &i7, const InputDF &i8, const InputDF &i9, const InputDF &i10, const InputDF &i11, const InputDF &i12, const InputDF &i13, const InputDF &i14, const InputDF &i15, const InputDF &i16, const InputDF &i17, const InputDF &i18, const InputDF &i19, const InputDF &i20, const InputDF &i21, const InputDF &i22, const InputDF &i23, const InputDF &i24, const InputDF &i25, const InputDF &i26, OutputDF &S)
{
    const InputDF *in[27] = {&i0, &i1, &i2, &i3, &i4, &i5, &i6, &i7, &i8, &i9, &i10, &i11, &i12, &i13, &i14, &i15, &i16, &i17, &i18, &i19, &i20, &i21, &i22, &i23, &i24, &i25, &i26};
    summarizeInto(N, F, NP, a, b, c, ref, in, S.create<double>(SUMMARY, 0.0));
}

/** c_final's summary into s (SUMMARY doubles, zero). */
static void summarizeInto(int N, int F, int NP, int a, int b, int c, const InputDF &ref, const InputDF *const *in, double *s)
{
    Bundle bs[27];
    bundles(in, bs);
    summarizeBundles(N, F, NP, a, b, c, ref, bs, s);
}

/** The summary of the 27 bundles arriving at subdomain (a, b, c) into s (SUMMARY doubles, zero). */
static void summarizeBundles(int N, int F, int NP, int a, int b, int c, const InputDF &ref, const Bundle *bs, double *s)
{
    const double *r = data(ref);
    const int own = (a * F + b) * F + c;
    // PIC3D_DUMP=dir: the subdomain's final particles into dir/a_b_c.f64 (tests compare versions)
    if (const char *dump = std::getenv("PIC3D_DUMP")) {
        const std::string file = std::string(dump) + "/" + std::to_string(a) + "_" + std::to_string(b) + "_" + std::to_string(c) + ".f64";
        FILE *f = std::fopen(file.c_str(), "wb");
        if (!f) failed("cannot write " + file);
        for (int d = 0; d < 27; d++) if (bs[d].len) std::fwrite(bs[d].p, sizeof(double), (size_t)bs[d].len, f);
        std::fclose(f);
    }
    for (int d = 0; d < 27; d++) {
        const double *p = bs[d].p;
        for (long o = 0; o < bs[d].len; o += pic3d::REC) {
            const double id = p[o];
            if (pic3d::subdomainOf(p + o, N, F) != own)
                failed("particle " + num(id) + " ended in subdomain (" + std::to_string(a) + ", " + std::to_string(b) + ", " + std::to_string(c) + "), not its own");
            s[COUNT]++; s[MASS] += p[o + 1]; s[IDS] += id;
            for (int k = 0; k < 3; k++) s[PMOM + k] += p[o + 1] * p[o + 5 + k];
            if (!r) continue;
            if (!(id == std::trunc(id) && id >= 0 && id < NP)) failed("particle id " + num(id) + " out of range");
            const double *q = r + (long)id * pic3d::REC;
            if (q[1] != p[o + 1]) failed("particle " + num(id) + " has mass " + num(p[o + 1]) + ", the reference " + num(q[1]));
            for (int k = 0; k < 3; k++) {
                s[PREF + k] += q[1] * q[5 + k];
                double dx = std::fabs(p[o + 2 + k] - q[2 + k]);
                if (dx > 0.5) dx = 1 - dx;  // across the periodic boundary
                s[DX] = jsMax(s[DX], dx);
                s[DV] = jsMax(s[DV], std::fabs(p[o + 5 + k] - q[5 + k]));
            }
        }
    }
}

/** φ = 0 at the owned nodes (the first warm start). */
void c_zero(int N, int F, OutputDF &phi)
{
    const long n = N / F;
    phi.create<double>(n * n * n, 0.0);
}

// The deep-halo sweep groups (examples/pic3d/halo.ts, fragments.ts): the 27 blocks around a
// subdomain in direction order; a step's first group reads the deposit blocks and makes the density
// around the box (R), its last one makes G as well.

/**
 * One sweep group from the density box and the 27 φ into phi (and G when given); with ghost, g at
 * the owned nodes and the upper ghost layer into scratch, returned (for the push in the same CF).
 */
static const double *group(int N, int F, int NP, int K, int H, int j, const double *rho, const double *const *phis, OutputDF &phi, OutputDF *G, bool ghost = false)
{
    const long n = N / F, n1 = n + 1;
    const int d = pic3d::haloDepth(H, (int)n, K), sweeps = d < K - j * d ? d : K - j * d;
    const long box = (n + 2 * d + 4) * (n + 2 * d + 4) * (n + 2 * d + 4);
    double *a = scratch(2 * box, 1).data();
    double *g = ghost ? scratch(3 * n1 * n1 * n1, 3).data() : G ? G->create<double>(3 * n * n * n) : nullptr;
    pic3d::jacobiDeep(N, F, NP, sweeps, rho, pic3d::rhoRadius(d, n), phis, phi.create<double>(n * n * n), g, a, a + box, ghost);
    return ghost ? g : nullptr;
}

/** The density box of the step's groups (halo rhoRadius) from the 27 deposit blocks, into R or (when no later group reads it) scratch. */
static const double *densityBox(int N, int F, int K, int H, const double *const *Ls, OutputDF *R)
{
    const long n = N / F, r = pic3d::rhoRadius(pic3d::haloDepth(H, (int)n, K), n), size = (n + 2 * r) * (n + 2 * r) * (n + 2 * r);
    double *out = R ? R->create<double>(size) : scratch(size, 2).data();
    pic3d::densityHalo(N, F, r, Ls, out);
    return out;
}

/** the first of several groups (27 deposit blocks, each with its φ) -> φ, R */
void c_sweep_first(int N, int F, int NP, int K, int H, const InputDF &l0, const InputDF &l1, const InputDF &l2, const InputDF &l3, const InputDF &l4, const InputDF &l5, const InputDF &l6, const InputDF &l7, const InputDF &l8, const InputDF &l9, const InputDF &l10, const InputDF &l11, const InputDF &l12, const InputDF &l13, const InputDF &l14, const InputDF &l15, const InputDF &l16, const InputDF &l17, const InputDF &l18, const InputDF &l19, const InputDF &l20, const InputDF &l21, const InputDF &l22, const InputDF &l23, const InputDF &l24, const InputDF &l25, const InputDF &l26, OutputDF &phi, OutputDF &R)
{
    const InputDF *in[27] = {&l0, &l1, &l2, &l3, &l4, &l5, &l6, &l7, &l8, &l9, &l10, &l11, &l12, &l13, &l14, &l15, &l16, &l17, &l18, &l19, &l20, &l21, &l22, &l23, &l24, &l25, &l26};
    const double *Ls[27], *phis[27];
    split(N, F, in, Ls, phis);
    group(N, F, NP, K, H, 0, densityBox(N, F, K, H, Ls, &R), phis, phi, nullptr);
}

/** the only group (27 deposit blocks, each with its φ) -> φ, G */
void c_sweep_only(int N, int F, int NP, int K, int H, const InputDF &l0, const InputDF &l1, const InputDF &l2, const InputDF &l3, const InputDF &l4, const InputDF &l5, const InputDF &l6, const InputDF &l7, const InputDF &l8, const InputDF &l9, const InputDF &l10, const InputDF &l11, const InputDF &l12, const InputDF &l13, const InputDF &l14, const InputDF &l15, const InputDF &l16, const InputDF &l17, const InputDF &l18, const InputDF &l19, const InputDF &l20, const InputDF &l21, const InputDF &l22, const InputDF &l23, const InputDF &l24, const InputDF &l25, const InputDF &l26, OutputDF &phi, OutputDF &G)
{
    const InputDF *in[27] = {&l0, &l1, &l2, &l3, &l4, &l5, &l6, &l7, &l8, &l9, &l10, &l11, &l12, &l13, &l14, &l15, &l16, &l17, &l18, &l19, &l20, &l21, &l22, &l23, &l24, &l25, &l26};
    const double *Ls[27], *phis[27];
    split(N, F, in, Ls, phis);
    group(N, F, NP, K, H, 0, densityBox(N, F, K, H, Ls, nullptr), phis, phi, &G);
}

/** a middle group j (R, 27 φ) -> φ */
void c_sweep(int N, int F, int NP, int K, int H, int j, const InputDF &R, const InputDF &f0, const InputDF &f1, const InputDF &f2, const InputDF &f3, const InputDF &f4, const InputDF &f5, const InputDF &f6, const InputDF &f7, const InputDF &f8, const InputDF &f9, const InputDF &f10, const InputDF &f11, const InputDF &f12, const InputDF &f13, const InputDF &f14, const InputDF &f15, const InputDF &f16, const InputDF &f17, const InputDF &f18, const InputDF &f19, const InputDF &f20, const InputDF &f21, const InputDF &f22, const InputDF &f23, const InputDF &f24, const InputDF &f25, const InputDF &f26, OutputDF &phi)
{
    const double *phis[27] = {f0.getData<double>(), f1.getData<double>(), f2.getData<double>(), f3.getData<double>(), f4.getData<double>(), f5.getData<double>(), f6.getData<double>(), f7.getData<double>(), f8.getData<double>(), f9.getData<double>(), f10.getData<double>(), f11.getData<double>(), f12.getData<double>(), f13.getData<double>(), f14.getData<double>(), f15.getData<double>(), f16.getData<double>(), f17.getData<double>(), f18.getData<double>(), f19.getData<double>(), f20.getData<double>(), f21.getData<double>(), f22.getData<double>(), f23.getData<double>(), f24.getData<double>(), f25.getData<double>(), f26.getData<double>()};
    group(N, F, NP, K, H, j, R.getData<double>(), phis, phi, nullptr);
}

/** the last group j (R, 27 φ) -> φ, G */
void c_sweep_last(int N, int F, int NP, int K, int H, int j, const InputDF &R, const InputDF &f0, const InputDF &f1, const InputDF &f2, const InputDF &f3, const InputDF &f4, const InputDF &f5, const InputDF &f6, const InputDF &f7, const InputDF &f8, const InputDF &f9, const InputDF &f10, const InputDF &f11, const InputDF &f12, const InputDF &f13, const InputDF &f14, const InputDF &f15, const InputDF &f16, const InputDF &f17, const InputDF &f18, const InputDF &f19, const InputDF &f20, const InputDF &f21, const InputDF &f22, const InputDF &f23, const InputDF &f24, const InputDF &f25, const InputDF &f26, OutputDF &phi, OutputDF &G)
{
    const double *phis[27] = {f0.getData<double>(), f1.getData<double>(), f2.getData<double>(), f3.getData<double>(), f4.getData<double>(), f5.getData<double>(), f6.getData<double>(), f7.getData<double>(), f8.getData<double>(), f9.getData<double>(), f10.getData<double>(), f11.getData<double>(), f12.getData<double>(), f13.getData<double>(), f14.getData<double>(), f15.getData<double>(), f16.getData<double>(), f17.getData<double>(), f18.getData<double>(), f19.getData<double>(), f20.getData<double>(), f21.getData<double>(), f22.getData<double>(), f23.getData<double>(), f24.getData<double>(), f25.getData<double>(), f26.getData<double>()};
    group(N, F, NP, K, H, j, R.getData<double>(), phis, phi, &G);
}

// The step's last group and the push in one CF (pic3d.fa, when the depth d ≤ n − 2): the group
// computes g at the upper ghost layer too, so the push reads no G of the 7 upper neighbours.

/** the only group and the push (27 deposit blocks, S, A) -> φ, the staying particles, the leaving array */
void c_sweep_push_only(int N, int F, int NP, int K, int H, int a, int b, int c, const InputDF &l0, const InputDF &l1, const InputDF &l2, const InputDF &l3, const InputDF &l4, const InputDF &l5, const InputDF &l6, const InputDF &l7, const InputDF &l8, const InputDF &l9, const InputDF &l10, const InputDF &l11, const InputDF &l12, const InputDF &l13, const InputDF &l14, const InputDF &l15, const InputDF &l16, const InputDF &l17, const InputDF &l18, const InputDF &l19, const InputDF &l20, const InputDF &l21, const InputDF &l22, const InputDF &l23, const InputDF &l24, const InputDF &l25, const InputDF &l26, const InputDF &S, const InputDF &A, OutputDF &phi, OutputDF &stay, OutputDF &leaving)
{
    const InputDF *in[27] = {&l0, &l1, &l2, &l3, &l4, &l5, &l6, &l7, &l8, &l9, &l10, &l11, &l12, &l13, &l14, &l15, &l16, &l17, &l18, &l19, &l20, &l21, &l22, &l23, &l24, &l25, &l26};
    const double *Ls[27], *phis[27];
    split(N, F, in, Ls, phis);
    const double *g = group(N, F, NP, K, H, 0, densityBox(N, F, K, H, Ls, nullptr), phis, phi, nullptr, true);
    pushOut(N, F, a, b, c, nullptr, g, (N / F + 1) * (N / F + 1), N / F + 1, S, A, stay, leaving);
}

/** the last group j and the push (R, 27 φ, S, A) -> φ, the staying particles, the leaving array */
void c_sweep_push_last(int N, int F, int NP, int K, int H, int j, int a, int b, int c, const InputDF &R, const InputDF &f0, const InputDF &f1, const InputDF &f2, const InputDF &f3, const InputDF &f4, const InputDF &f5, const InputDF &f6, const InputDF &f7, const InputDF &f8, const InputDF &f9, const InputDF &f10, const InputDF &f11, const InputDF &f12, const InputDF &f13, const InputDF &f14, const InputDF &f15, const InputDF &f16, const InputDF &f17, const InputDF &f18, const InputDF &f19, const InputDF &f20, const InputDF &f21, const InputDF &f22, const InputDF &f23, const InputDF &f24, const InputDF &f25, const InputDF &f26, const InputDF &S, const InputDF &A, OutputDF &phi, OutputDF &stay, OutputDF &leaving)
{
    const double *phis[27] = {f0.getData<double>(), f1.getData<double>(), f2.getData<double>(), f3.getData<double>(), f4.getData<double>(), f5.getData<double>(), f6.getData<double>(), f7.getData<double>(), f8.getData<double>(), f9.getData<double>(), f10.getData<double>(), f11.getData<double>(), f12.getData<double>(), f13.getData<double>(), f14.getData<double>(), f15.getData<double>(), f16.getData<double>(), f17.getData<double>(), f18.getData<double>(), f19.getData<double>(), f20.getData<double>(), f21.getData<double>(), f22.getData<double>(), f23.getData<double>(), f24.getData<double>(), f25.getData<double>(), f26.getData<double>()};
    const double *g = group(N, F, NP, K, H, j, R.getData<double>(), phis, phi, nullptr, true);
    pushOut(N, F, a, b, c, nullptr, g, (N / F + 1) * (N / F + 1), N / F + 1, S, A, stay, leaving);
}


// The Poisson sweeps on slabs of the grid (pic3d.fa with POISSON_SLABS, examples/pic3d/slabs.fah): SL
// slabs of whole subdomain layers along x. A step's density is summed once per subdomain layer A
// from the deposit blocks of layers A and A − 1 (the 4² of each it is given, of which the F² with
// indices below F: slabs.fah pads F < 4 with repeats); a slab's sweep group reads every layer's
// density and every slab's φ (4 given, F and SL distinct); a push reads its own slab's φ after the
// step's sweeps (the slab's ghost planes hold the rest) and computes g at the nodes its cells touch.
#define PIC3D_IN4(p) const InputDF &p##0, const InputDF &p##1, const InputDF &p##2, const InputDF &p##3
#define PIC3D_IN16(p) PIC3D_IN4(p##0), PIC3D_IN4(p##1), PIC3D_IN4(p##2), PIC3D_IN4(p##3)
#define PIC3D_ARR4(p) &p##0, &p##1, &p##2, &p##3
#define PIC3D_ARR16(p) PIC3D_ARR4(p##0), PIC3D_ARR4(p##1), PIC3D_ARR4(p##2), PIC3D_ARR4(p##3)

namespace {

/** The most subdomains a side (slabs.fah passes 4 of each). */
const int SLAB_MAX_F = 4;

/** The slabs' halo depth (slabs.fah SDEPTH): at most H and K, at least 1. */
int slabDepth(int H, int K) { const int d = H < K ? H : K; return d < 1 ? 1 : d; }

void checkSlabs(int F, int SL, int p) {
    if (F < 1 || F > SLAB_MAX_F || SL < 1 || SL > F || p < 0 || p >= SL)
        failed("slab " + std::to_string(p) + " of " + std::to_string(SL) + " on F=" + std::to_string(F) + " subdomains a side: the slabs need 1 <= SL <= F <= " + std::to_string(SLAB_MAX_F) + " (pic3d.fa sweeps on the subdomains beyond)");
}

/**
 * g at the (n+1)³ nodes the cells of subdomain (a, b, c) touch, from its slab's φ
 * (pic3d::fieldFromSlab), in this thread's scratch: valid until the next call (every slab push takes it from here)
 */
const double *slabField(int N, int F, int SL, int a, int b, int c, const InputDF &phi) {
    const long n1 = N / F + 1;
    double *g = scratch(3 * n1 * n1 * n1, 3).data();
    pic3d::fieldFromSlab(N, F, SL, a, b, c, phi.getData<double>(), g);
    return g;
}

long slabWidth(int N, int F, int SL, int p) { return (long)(pic3d::slabLayer(p + 1, F, SL) - pic3d::slabLayer(p, F, SL)) * (N / F); }

/** Scratch that only grows (every node read is written first: jacobiSlab), per thread. */
double *growing(long size) {
    static thread_local std::vector<double> buf;
    if ((long)buf.size() < size) buf.resize(size);
    return buf.data();
}

/**
 * Sweep group j of slab p into phi, from the layers' density (4 given, F distinct) and every slab's
 * φ (4 given, SL distinct; none: zeros, the first step's warm start); or, with edges (slabs.fah
 * SLAB_EDGES, rhoEdge and phiEdge not null), from its own layers' density (4, padded with its
 * last), the last planes of the layer below and the first of the layer above (rhoEdge), and its
 * own φ, the highest planes of the slab below and the lowest of the slab above (phiIn, 3), its own
 * lowest and highest planes then written into edgeOut (2).
 */
/**
 * The density at the planes [lo − r, lo + W + r) (wrapped) from every layer's deposit blocks (64
 * given, layer A's (B, C) at A·16 + B·4 + C, F distinct), into a scratch of this thread: the planes
 * a sweep group reads, each the bits c_layer_density makes for it
 */
const double *sweepDensity(int N, int F, long lo, long W, long r, const double *const *blocksIn) {
    if (F < 1 || F > SLAB_MAX_F) failed("the layers' density takes F <= " + std::to_string(SLAB_MAX_F) + " subdomains a side, not F=" + std::to_string(F));
    const double *blocks[SLAB_MAX_F * SLAB_MAX_F * SLAB_MAX_F] = {nullptr};
    for (int A = 0; A < F; A++) for (int B = 0; B < F; B++) for (int C = 0; C < F; C++)
        blocks[(A * F + B) * F + C] = blocksIn[A * 16 + B * 4 + C];
    static thread_local std::vector<double> buf;
    const long size = (W + 2 * r) * (long)N * N;
    if ((long)buf.size() < size) buf.resize(size);
    pic3d::densitySlab(N, F, lo - r, lo + W + r, blocks, buf.data(), false);
    return buf.data();
}

void slabGroup(int N, int F, int NP, int K, int H, int SL, int p, int j, const InputDF *const *rhoIn, const InputDF *const *rhoEdge, const InputDF *const *phiIn, OutputDF &phi, OutputDF *const *edgeOut, const double *const *blocksIn = nullptr) {
    checkSlabs(F, SL, p);
    const long n = N / F, NN = (long)N * N, W = slabWidth(N, F, SL, p), lo = pic3d::slabLayer(p, F, SL) * n;
    const int d = slabDepth(H, K), sweeps = d < K - j * d ? d : K - j * d;
    const long E = pic3d::slabEdge(d);
    const bool edges = rhoEdge != nullptr;
    if (edges && n < E) failed("slab edges of " + std::to_string(E) + " planes need layers of at least as many, not N/F=" + std::to_string(n));
    // the density's planes [lo − r, hi + r), each in its layer's DF or an edge
    const long r = sweeps + pic3d::GHOST_HI;
    std::vector<const double *> rhos(W + 2 * r);
    const double *dens = blocksIn ? sweepDensity(N, F, lo, W, r, blocksIn) : nullptr;
    for (long i = -r; i < W + r; i++) {
        const long x = pic3d::wrapN(lo + i, N);
        rhos[i + r] = dens ? dens + (i + r) * NN
            : !edges ? rhoIn[x / n]->getData<double>() + (x % n) * NN
            : i < 0 ? rhoEdge[0]->getData<double>() + (i + E) * NN
            : i >= W ? rhoEdge[1]->getData<double>() + (i - W) * NN
            : rhoIn[i / n]->getData<double>() + (i % n) * NN;
    }
    // the φ planes of the box [lo − sweeps − GHOST_LO, hi + sweeps + GHOST_HI)
    const long L = sweeps + pic3d::GHOST_LO;
    std::vector<const double *> pl(phiIn ? W + 2 * sweeps + pic3d::GHOST_LO + pic3d::GHOST_HI : 0);
    for (long i = -L; phiIn && i < W + sweeps + pic3d::GHOST_HI; i++) {
        if (edges) {
            pl[i + L] = i < 0 ? phiIn[1]->getData<double>() + (i + E) * NN
                : i >= W ? phiIn[2]->getData<double>() + (i - W) * NN
                : phiIn[0]->getData<double>() + (i + pic3d::GHOST_LO) * NN;
            continue;
        }
        const long x = pic3d::wrapN(lo + i, N);
        const int q = pic3d::slabOf((int)(x / n), F, SL);
        pl[i + L] = phiIn[q]->getData<double>() + (x - pic3d::slabLayer(q, F, SL) * n + pic3d::GHOST_LO) * NN;
    }
    const long planes = W + pic3d::GHOST_LO + pic3d::GHOST_HI, box = (planes + 2 * sweeps) * NN;
    double *a = growing(2 * box), *out = phi.create<double>(planes * NN);
    pic3d::jacobiSlab(N, F, NP, SL, p, sweeps, rhos.data(), r, phiIn ? pl.data() : nullptr, out, a, a + box);
    if (edgeOut) {
        std::memcpy(edgeOut[0]->create<double>(E * NN), out + pic3d::GHOST_LO * NN, sizeof(double) * E * NN);
        std::memcpy(edgeOut[1]->create<double>(E * NN), out + (pic3d::GHOST_LO + W - E) * NN, sizeof(double) * E * NN);
    }
}

}  // namespace

extern "C" {

/** A run with fewer than one slab stops, named (pic3d.fa calls it only then). */
void c_slabs_check(int SL)
{
    if (SL < 1) failed("POISSON_SLABS=" + std::to_string(SL) + ": the Poisson sweeps need at least one slab");
}

/** Subdomain (a, b, c)'s deposit from its 27 inputs (STAY: its staying particles) -> L (the deposit block alone), A (the arrived particles); returns the block. */
static const double *depositSubdomain(int N, int F, int a, int b, int c, const InputDF *const *in, OutputDF &L, OutputDF &A)
{
    Bundle bs[27];
    bundles(in, bs);
    const long n1 = N / F + 1;
    double *out = L.create<double>(n1 * n1 * n1, 0.0);
    GUARD(pic3d::deposit(N, F, a, b, c, bs, 27, out))
    gatherArrived(bs, A);
    return out;
}

/** deposit(the staying particles, the 26 neighbours' leaving arrays) -> the (n+1)³ deposit block alone (the slabs hold φ), the arrived particles */
void c_deposit_blk(int N, int F, int a, int b, int c, const InputDF &i0, const InputDF &i1, const InputDF &i2, const InputDF &i3, const InputDF &i4, const InputDF &i5, const InputDF &i6, const InputDF &i7, const InputDF &i8, const InputDF &i9, const InputDF &i10, const InputDF &i11, const InputDF &i12, const InputDF &i13, const InputDF &i14, const InputDF &i15, const InputDF &i16, const InputDF &i17, const InputDF &i18, const InputDF &i19, const InputDF &i20, const InputDF &i21, const InputDF &i22, const InputDF &i23, const InputDF &i24, const InputDF &i25, const InputDF &i26, OutputDF &L, OutputDF &A)
{
    const InputDF *in[27] = {&i0, &i1, &i2, &i3, &i4, &i5, &i6, &i7, &i8, &i9, &i10, &i11, &i12, &i13, &i14, &i15, &i16, &i17, &i18, &i19, &i20, &i21, &i22, &i23, &i24, &i25, &i26};
    depositSubdomain(N, F, a, b, c, in, L, A);
}

/**
 * c_deposit_blk where the layer above is on another node (slabs.fah FACE_UP): also the block's
 * upper face alone, what that layer's density reads of it -> L, A, the face ((n+1)² doubles)
 */
void c_deposit_blk_f(int N, int F, int a, int b, int c, const InputDF &i0, const InputDF &i1, const InputDF &i2, const InputDF &i3, const InputDF &i4, const InputDF &i5, const InputDF &i6, const InputDF &i7, const InputDF &i8, const InputDF &i9, const InputDF &i10, const InputDF &i11, const InputDF &i12, const InputDF &i13, const InputDF &i14, const InputDF &i15, const InputDF &i16, const InputDF &i17, const InputDF &i18, const InputDF &i19, const InputDF &i20, const InputDF &i21, const InputDF &i22, const InputDF &i23, const InputDF &i24, const InputDF &i25, const InputDF &i26, OutputDF &L, OutputDF &A, OutputDF &face)
{
    const InputDF *in[27] = {&i0, &i1, &i2, &i3, &i4, &i5, &i6, &i7, &i8, &i9, &i10, &i11, &i12, &i13, &i14, &i15, &i16, &i17, &i18, &i19, &i20, &i21, &i22, &i23, &i24, &i25, &i26};
    const long n = N / F, f2 = (n + 1) * (n + 1);
    const double *block = depositSubdomain(N, F, a, b, c, in, L, A);
    std::memcpy(face.create<double>(f2), pic3d::blockFace(block, n), sizeof(double) * f2);
}

/**
 * The deposits of the 4 subdomains of column (a, b) in one CF (slabs.fah, F = 4), each exactly as
 * c_deposit_blk makes it (the same bundles in the same order): the leaving arrays of the 9 columns
 * around (a, b) (IN's order of (dx, dy), c at 4·column + c), the column's staying particles (4)
 * -> the 4 deposit blocks, the 4 arrived particles' arrays
 */
/** The 4 deposits of column (a, b) (c_deposit_col), and with `faces` their upper faces into it. */
static void depositColumn(int N, int F, int a, int b, const InputDF *const *xs, const InputDF *const *ss, OutputDF *const *Ls, OutputDF *const *As, OutputDF *faces)
{
    if (F != 4) failed("the deposits by column take F = 4 subdomains a side, not F=" + std::to_string(F));
    const long n = N / F, f2 = (n + 1) * (n + 1);
    double *fs = faces ? faces->create<double>(4 * f2) : nullptr;
    for (int c = 0; c < 4; c++) {
        // direction d = (column, dz), dz = 0, 1, 2 coming from c + 1, c, c − 1
        const InputDF *in[27];
        for (int d = 0; d < 27; d++) in[d] = d == pic3d::STAY ? ss[c] : xs[(d / 3) * 4 + (c + 1 - d % 3 + 4) % 4];
        const double *block = depositSubdomain(N, F, a, b, c, in, *Ls[c], *As[c]);
        if (fs) std::memcpy(fs + c * f2, pic3d::blockFace(block, n), sizeof(double) * f2);
    }
}

void c_deposit_col(int N, int F, int a, int b, PIC3D_IN16(x), PIC3D_IN16(y), PIC3D_IN4(z), PIC3D_IN4(s),
    OutputDF &L0, OutputDF &L1, OutputDF &L2, OutputDF &L3, OutputDF &A0, OutputDF &A1, OutputDF &A2, OutputDF &A3)
{
    const InputDF *xs[36] = {PIC3D_ARR16(x), PIC3D_ARR16(y), PIC3D_ARR4(z)}, *ss[4] = {PIC3D_ARR4(s)};
    OutputDF *Ls[4] = {&L0, &L1, &L2, &L3}, *As[4] = {&A0, &A1, &A2, &A3};
    depositColumn(N, F, a, b, xs, ss, Ls, As, nullptr);
}

/**
 * c_deposit_col where the layer above is on another node (slabs.fah FACE_UP): also the 4 blocks'
 * upper faces, what that layer's density reads of them -> the 4 blocks, the 4 arrived particles'
 * arrays, the faces (4·(n+1)² doubles, c's at c·(n+1)²)
 */
void c_deposit_col_f(int N, int F, int a, int b, PIC3D_IN16(x), PIC3D_IN16(y), PIC3D_IN4(z), PIC3D_IN4(s),
    OutputDF &L0, OutputDF &L1, OutputDF &L2, OutputDF &L3, OutputDF &A0, OutputDF &A1, OutputDF &A2, OutputDF &A3, OutputDF &faces)
{
    const InputDF *xs[36] = {PIC3D_ARR16(x), PIC3D_ARR16(y), PIC3D_ARR4(z)}, *ss[4] = {PIC3D_ARR4(s)};
    OutputDF *Ls[4] = {&L0, &L1, &L2, &L3}, *As[4] = {&A0, &A1, &A2, &A3};
    depositColumn(N, F, a, b, xs, ss, Ls, As, &faces);
}

/** The first step's deposit on one node from the parts of the cloud (c_deposit_all) -> S, the deposit block alone, A */
void c_deposit_all_blk(int N, int F, int a, int b, int c, const InputDF &p0, const InputDF &p1, const InputDF &p2, const InputDF &p3, OutputDF &S, OutputDF &L, OutputDF &A)
{
    depositCloud(N, F, a, b, c, p0, p1, p2, p3, S, L, A, 0);
}

/**
 * The first step's deposits of the 4 subdomains of column (a, b) on one node in one CF (slabs.fah
 * SLABCOLS, F = 4: 16 CFs in place of 64 while the lanes wait for their first values), each exactly
 * as c_deposit_all_blk makes it -> the 4 S, the 4 deposit blocks, the 4 A (c at c)
 */
void c_deposit_all_col(int N, int F, int a, int b, const InputDF &p0, const InputDF &p1, const InputDF &p2, const InputDF &p3,
    OutputDF &S0, OutputDF &S1, OutputDF &S2, OutputDF &S3, OutputDF &L0, OutputDF &L1, OutputDF &L2, OutputDF &L3,
    OutputDF &A0, OutputDF &A1, OutputDF &A2, OutputDF &A3)
{
    if (F != 4) failed("the deposits by column take F = 4 subdomains a side, not F=" + std::to_string(F));
    OutputDF *Ss[4] = {&S0, &S1, &S2, &S3}, *Ls[4] = {&L0, &L1, &L2, &L3}, *As[4] = {&A0, &A1, &A2, &A3};
    for (int c = 0; c < 4; c++) depositCloud(N, F, a, b, c, p0, p1, p2, p3, *Ss[c], *Ls[c], *As[c], 0);
}

/**
 * The layer's density from its 16 blocks and 16 of the layer below ((B, C) at B·4 + C): whole
 * blocks, or (`faces`) the blocks' upper faces alone
 */
static const double *layerDensity(int N, int F, int A, const double *const *own, const double *const *below, OutputDF &rho, bool faces)
{
    if (F < 1 || F > SLAB_MAX_F) failed("the layers' density takes F <= " + std::to_string(SLAB_MAX_F) + " subdomains a side, not F=" + std::to_string(F));
    const long n = N / F;
    const double *blocks[SLAB_MAX_F * SLAB_MAX_F * SLAB_MAX_F] = {nullptr};
    const int Am = (A + F - 1) % F;
    for (int B = 0; B < F; B++) for (int C = 0; C < F; C++) {
        blocks[(Am * F + B) * F + C] = below[B * 4 + C];
        blocks[(A * F + B) * F + C] = own[B * 4 + C];
    }
    double *out = rho.create<double>(n * N * N);
    pic3d::densitySlab(N, F, A * n, A * n + n, blocks, out, faces);
    return out;
}

/** The 16 DFs' doubles. */
static void data16(const InputDF *const *dfs, const double **out)
{
    for (int i = 0; i < 16; i++) out[i] = dfs[i]->getData<double>();
}

/** The density at the n planes of subdomain layer A from the deposit blocks of layers A and A − 1 (4² each, (B, C) at B·4 + C) -> n·N² doubles */
void c_layer_density(int N, int F, int A, PIC3D_IN16(l), PIC3D_IN16(m), OutputDF &rho)
{
    const InputDF *own[16] = {PIC3D_ARR16(l)}, *below[16] = {PIC3D_ARR16(m)};
    const double *o[16], *b[16];
    data16(own, o);
    data16(below, b);
    layerDensity(N, F, A, o, b, rho, false);
}

/** The layer's density (layerDensity) and its first and last E planes (empty when no slab across a node border reads them: lo, hi 0). */
static void layerDensityEdges(int N, int F, int A, int E, int lo, int hi, const double *const *own, const double *const *below, OutputDF &rho, OutputDF &first, OutputDF &last, bool faces)
{
    const double *r = layerDensity(N, F, A, own, below, rho, faces);
    const long n = N / F, NN = (long)N * N;
    if ((lo || hi) && !(E >= 1 && E <= n)) failed("slab edges of " + std::to_string(E) + " planes need layers of at least as many, not N/F=" + std::to_string(n));
    if (lo) std::memcpy(first.create<double>(E * NN), r, sizeof(double) * E * NN); else first.create<double>(0);
    if (hi) std::memcpy(last.create<double>(E * NN), r + (n - E) * NN, sizeof(double) * E * NN); else last.create<double>(0);
}

/**
 * The layer's density as c_layer_density makes it, and its first and last E planes (empty when no
 * slab across a node border reads them: lo, hi 0) -> n·N², E·N², E·N² doubles
 */
void c_layer_density_e(int N, int F, int A, int E, int lo, int hi, PIC3D_IN16(l), PIC3D_IN16(m), OutputDF &rho, OutputDF &first, OutputDF &last)
{
    const InputDF *own[16] = {PIC3D_ARR16(l)}, *below[16] = {PIC3D_ARR16(m)};
    const double *o[16], *b[16];
    data16(own, o);
    data16(below, b);
    layerDensityEdges(N, F, A, E, lo, hi, o, b, rho, first, last, false);
}

/**
 * c_layer_density_e with the layer below on another node (slabs.fah FACE_UP): of its blocks only
 * their upper faces, a subdomain's a DF (cols 0: c_deposit_blk_f) or a column's 4 a DF, each named
 * at its 4 (B, C) (cols 1: c_deposit_col_f) -> the same bits as the whole blocks
 */
void c_layer_density_f(int N, int F, int A, int E, int lo, int hi, int cols, PIC3D_IN16(l), PIC3D_IN16(m), OutputDF &rho, OutputDF &first, OutputDF &last)
{
    if (cols && F != 4) failed("the faces by column take F = 4 subdomains a side, not F=" + std::to_string(F));
    const InputDF *own[16] = {PIC3D_ARR16(l)}, *below[16] = {PIC3D_ARR16(m)};
    const long f2 = (N / F + 1) * (N / F + 1);
    const double *o[16], *b[16];
    data16(own, o);
    data16(below, b);
    if (cols) for (int B = 0; B < 4; B++) for (int C = 0; C < 4; C++) b[B * 4 + C] += C * f2;
    layerDensityEdges(N, F, A, E, lo, hi, o, b, rho, first, last, true);
}

/** sweep group j of slab p (every layer's density, every slab's φ) -> φ */
void c_slab_group(int N, int F, int NP, int K, int H, int SL, int p, int j, PIC3D_IN4(r), PIC3D_IN4(q), OutputDF &phi)
{
    const InputDF *rs[4] = {PIC3D_ARR4(r)}, *qs[4] = {PIC3D_ARR4(q)};
    slabGroup(N, F, NP, K, H, SL, p, j, rs, nullptr, qs, phi, nullptr);
}

/** the first step's first group of slab p (φ from zeros) -> φ */
void c_slab_group0(int N, int F, int NP, int K, int H, int SL, int p, PIC3D_IN4(r), OutputDF &phi)
{
    const InputDF *rs[4] = {PIC3D_ARR4(r)};
    slabGroup(N, F, NP, K, H, SL, p, 0, rs, nullptr, nullptr, phi, nullptr);
}

#define PIC3D_IN64(p) PIC3D_IN16(p##0), PIC3D_IN16(p##1), PIC3D_IN16(p##2), PIC3D_IN16(p##3)
#define PIC3D_ARR64(p) PIC3D_ARR16(p##0), PIC3D_ARR16(p##1), PIC3D_ARR16(p##2), PIC3D_ARR16(p##3)

/**
 * sweep group j of slab p from every layer's deposit blocks (64: the planes it reads summed in the
 * group, slabs.fah SWEEP_DENSITY) and every slab's φ -> φ
 */
void c_slab_group_d(int N, int F, int NP, int K, int H, int SL, int p, int j, PIC3D_IN64(l), PIC3D_IN4(q), OutputDF &phi)
{
    const InputDF *ls[64] = {PIC3D_ARR64(l)}, *qs[4] = {PIC3D_ARR4(q)};
    const double *blocks[64];
    for (int i = 0; i < 64; i++) blocks[i] = ls[i]->getData<double>();
    slabGroup(N, F, NP, K, H, SL, p, j, nullptr, nullptr, qs, phi, nullptr, blocks);
}

/** the first step's group of slab p from every layer's deposit blocks (64), φ from zeros -> φ */
void c_slab_group0_d(int N, int F, int NP, int K, int H, int SL, int p, PIC3D_IN64(l), OutputDF &phi)
{
    const InputDF *ls[64] = {PIC3D_ARR64(l)};
    const double *blocks[64];
    for (int i = 0; i < 64; i++) blocks[i] = ls[i]->getData<double>();
    slabGroup(N, F, NP, K, H, SL, p, 0, nullptr, nullptr, nullptr, phi, nullptr, blocks);
}

/**
 * sweep group j of slab p across nodes (slabs.fah SLAB_EDGES): its own layers' density (4), the
 * last planes of the layer below and the first of the layer above, its own φ, the highest planes
 * of the slab below and the lowest of the slab above -> φ, its lowest planes, its highest planes
 */
void c_slab_group_e(int N, int F, int NP, int K, int H, int SL, int p, int j, PIC3D_IN4(r), const InputDF &rb, const InputDF &ra,
    const InputDF &qo, const InputDF &qb, const InputDF &qa, OutputDF &phi, OutputDF &lower, OutputDF &upper)
{
    const InputDF *rs[4] = {PIC3D_ARR4(r)}, *re[2] = {&rb, &ra}, *qs[3] = {&qo, &qb, &qa};
    OutputDF *eo[2] = {&lower, &upper};
    slabGroup(N, F, NP, K, H, SL, p, j, rs, re, qs, phi, eo);
}

/** the first step's first group of slab p across nodes (φ from zeros) -> φ, its lowest planes, its highest planes */
void c_slab_group0_e(int N, int F, int NP, int K, int H, int SL, int p, PIC3D_IN4(r), const InputDF &rb, const InputDF &ra, OutputDF &phi, OutputDF &lower, OutputDF &upper)
{
    const InputDF *rs[4] = {PIC3D_ARR4(r)}, *re[2] = {&rb, &ra};
    OutputDF *eo[2] = {&lower, &upper};
    slabGroup(N, F, NP, K, H, SL, p, 0, rs, re, nullptr, phi, eo);
}

/**
 * push(its slab's φ after the step's sweeps, the staying particles, the arrived ones) -> the
 * staying particles, the leaving array; g at the nodes its cells touch from that φ first
 */
void c_push_slab(int N, int F, int SL, int a, int b, int c, const InputDF &phi, const InputDF &S, const InputDF &A, OutputDF &stay, OutputDF &leaving)
{
    checkSlabs(F, SL, 0);
    const long n1 = N / F + 1;
    pushOut(N, F, a, b, c, nullptr, slabField(N, F, SL, a, b, c, phi), n1 * n1, n1, S, A, stay, leaving);
}


/**
 * The pushes of the 4 subdomains of column (a, b) in one CF (pic3d.fa's light columns: 4 short
 * CFs a step become one), each exactly as c_push_slab makes it: its slab's φ, the 4 staying
 * particles' arrays, the 4 arrived -> the 4 staying, the 4 leaving arrays (c at c)
 */
void c_push_col(int N, int F, int SL, int a, int b, const InputDF &phi, PIC3D_IN4(s), PIC3D_IN4(x),
    OutputDF &S0, OutputDF &S1, OutputDF &S2, OutputDF &S3, OutputDF &X0, OutputDF &X1, OutputDF &X2, OutputDF &X3)
{
    if (F != 4) failed("the pushes by column take F = 4 subdomains a side, not F=" + std::to_string(F));
    const InputDF *ss[4] = {PIC3D_ARR4(s)}, *xs[4] = {PIC3D_ARR4(x)};
    OutputDF *So[4] = {&S0, &S1, &S2, &S3}, *Xo[4] = {&X0, &X1, &X2, &X3};
    for (int c = 0; c < 4; c++) c_push_slab(N, F, SL, a, b, c, phi, *ss[c], *xs[c], *So[c], *Xo[c]);
}

}  // extern "C"

// The groups (slabs.fah ROWS, F = 4): a light row's 16 subdomains, a centre row's light columns,
// each centre column. A group is deposited and pushed by one CF, and what it makes of a kind is one
// pack (examples/pic3d/packs.ts: k, then for each part its subdomain's number, offset and length in
// doubles, then the parts). Every subdomain is computed as the CF of one subdomain computes it
// (c_deposit_blk, c_push_slab, c_deposit_all_blk, c_pick_all), so the same bits (groups.ts in
// TypeScript).
#define PIC3D_IN3(p) const InputDF &p##0, const InputDF &p##1, const InputDF &p##2
#define PIC3D_ARR3(p) &p##0, &p##1, &p##2
#define PIC3D_IN9(p) PIC3D_IN3(p##0), PIC3D_IN3(p##1), PIC3D_IN3(p##2)
#define PIC3D_ARR9(p) PIC3D_ARR3(p##0), PIC3D_ARR3(p##1), PIC3D_ARR3(p##2)
#define PIC3D_IN12(p) PIC3D_IN4(p##0), PIC3D_IN4(p##1), PIC3D_IN4(p##2)
#define PIC3D_ARR12(p) PIC3D_ARR4(p##0), PIC3D_ARR4(p##1), PIC3D_ARR4(p##2)

namespace {

/** The parts of some packs by subdomain number (a pack named more than once is read once). */
class Packs {
 public:
    Packs(int F, const InputDF *const *packs, int n) : F_(F), parts_((size_t)F * F * F, Bundle{nullptr, -1}) {
        for (int i = 0; i < n; i++) add(*packs[i]);
    }
    /** The part of subdomain (a, b, c), indices wrapped below F. */
    Bundle at(int a, int b, int c) const {
        const int id = (wrap(a) * F_ + wrap(b)) * F_ + wrap(c);
        if (parts_[id].len < 0) failed("subdomain " + std::to_string(id) + " is in none of the packs given");
        return parts_[id];
    }
 private:
    int wrap(int i) const { return ((i % F_) + F_) % F_; }
    void add(const InputDF &df) {
        const long size = (long)(df.getSize() / sizeof(double));
        const double *all = size ? df.getData<double>() : nullptr;
        const double k = size ? all[0] : -1;
        if (!(k >= 0 && k == (long)k && 1 + 3 * (long)k <= size)) failed("a pack of " + std::to_string(size) + " doubles names " + num(k) + " parts");
        for (long i = 0; i < (long)k; i++) {
            const double id = all[1 + 3 * i], off = all[2 + 3 * i], len = all[3 + 3 * i];
            if (!(id >= 0 && id == (long)id && id < (double)parts_.size() && off >= 1 + 3 * k && len >= 0 && off + len <= size))
                failed("a pack's part " + std::to_string(i) + " (subdomain " + num(id) + ", " + num(len) + " doubles at " + num(off) + ") lies outside its " + std::to_string(size) + " doubles or the " + std::to_string(parts_.size()) + " subdomains");
            if (parts_[(long)id].len < 0) parts_[(long)id] = Bundle{all + (long)off, (long)len};
        }
    }
    int F_;
    std::vector<Bundle> parts_;
};

/** Makes `out` a pack of k parts of `sizes` doubles for subdomains `ids` (zero-filled when `zero`); the parts' starts into `parts`. */
void packOut(OutputDF &out, const int *ids, const long *sizes, int k, double **parts, bool zero)
{
    long total = 1 + 3 * (long)k;
    for (int i = 0; i < k; i++) total += sizes[i];
    double *all = zero ? out.create<double>(total, 0.0) : out.create<double>(total);
    all[0] = k;
    for (long i = 0, off = 1 + 3 * (long)k; i < k; off += sizes[i], i++) {
        all[1 + 3 * i] = ids[i];
        all[2 + 3 * i] = (double)off;
        all[3 + 3 * i] = (double)sizes[i];
        parts[i] = all + off;
    }
}

/** Whether index i of F passes through the centre (slabs.fah CENTRE). */
bool centre(int F, int i) { return i == F / 2 - 1 || i == F / 2; }

/** A group's most subdomains (a light row's). */
const int GROUP_MAX = 16;

/**
 * Group g of row a (F = 4): a light row's 16 subdomains (g = 0), a centre row's light columns 0
 * and 3 (g = 0) or its centre column g (g = 1, 2), (b, c) in order into subs, their numbers into
 * ids; their count.
 */
int groupOf(int F, int a, int g, int (*subs)[2], int *ids)
{
    if (F != 4) failed("the groups take F = 4 subdomains a side, not F=" + std::to_string(F));
    int cols[4], nc = 0;
    if (!centre(F, a) && g == 0) for (int b = 0; b < 4; b++) cols[nc++] = b;
    else if (centre(F, a) && g == 0) { cols[nc++] = 0; cols[nc++] = 3; }
    else if (centre(F, a) && (g == 1 || g == 2)) cols[nc++] = g;
    if (nc == 0) failed("row " + std::to_string(a) + " has no group " + std::to_string(g));
    int k = 0;
    for (int i = 0; i < nc; i++)
        for (int c = 0; c < F; c++, k++) { subs[k][0] = cols[i]; subs[k][1] = c; ids[k] = (a * F + cols[i]) * F + c; }
    return k;
}

/** The 27 bundles arriving at subdomain (a, b, c): its staying particles from `stays`, its neighbours' parts of their leaving arrays from `leaving`. */
void subdomainBundles(const Packs &leaving, const Packs &stays, int a, int b, int c, Bundle *bs)
{
    for (int i = 0; i < 3; i++) for (int j = 0; j < 3; j++) for (int k = 0; k < 3; k++) {
        const int d = (i * 3 + j) * 3 + k;
        if (d == pic3d::STAY) { bs[d] = stays.at(a, b, c); continue; }
        const Bundle x = leaving.at(a + 1 - i, b + 1 - j, c + 1 - k);
        bs[d] = pic3d::partOf(x.p, x.len, d);
    }
}

/** The deposits of group g of row a (the leaving packs of the 3 rows around, its staying pack) -> its blocks' pack, its arrivals' pack, and with `faces` its blocks' upper faces' pack. */
void depositGroup(int N, int F, int a, int g, const InputDF *const *xs, const InputDF &S, OutputDF &L, OutputDF &A, OutputDF *faces)
{
    int subs[GROUP_MAX][2], ids[GROUP_MAX];
    const int k = groupOf(F, a, g, subs, ids);
    const long n = N / F, n1 = n + 1;
    const InputDF *sp = &S;
    const Packs leaving(F, xs, 9), stays(F, &sp, 1);
    static thread_local std::vector<Bundle> bundles;
    bundles.resize((size_t)27 * k);
    long blockSizes[GROUP_MAX], arrivedSizes[GROUP_MAX], faceSizes[GROUP_MAX];
    for (int i = 0; i < k; i++) {
        subdomainBundles(leaving, stays, a, subs[i][0], subs[i][1], &bundles[27 * i]);
        blockSizes[i] = n1 * n1 * n1;
        arrivedSizes[i] = arrivedSize(&bundles[27 * i]);
        faceSizes[i] = n1 * n1;
    }
    double *blocks[GROUP_MAX], *arrived[GROUP_MAX], *fs[GROUP_MAX];
    // the blocks zero-filled (the deposit adds into them); the arrivals written whole
    packOut(L, ids, blockSizes, k, blocks, true);
    packOut(A, ids, arrivedSizes, k, arrived, false);
    if (faces) packOut(*faces, ids, faceSizes, k, fs, false);
    for (int i = 0; i < k; i++) {
        GUARD(pic3d::deposit(N, F, a, subs[i][0], subs[i][1], &bundles[27 * i], 27, blocks[i]))
        arrivedInto(&bundles[27 * i], arrived[i]);
        if (faces) std::memcpy(fs[i], pic3d::blockFace(blocks[i], n), sizeof(double) * n1 * n1);
    }
}

}  // namespace

extern "C" {

/** Group g of row a's deposits: 9 leaving packs (slabs.fah XNB), its staying pack -> its blocks, its arrivals. */
void c_deposit_g(int N, int F, int a, int g, PIC3D_IN9(x), const InputDF &S, OutputDF &L, OutputDF &A)
{
    const InputDF *xs[9] = {PIC3D_ARR9(x)};
    depositGroup(N, F, a, g, xs, S, L, A, nullptr);
}

/** c_deposit_g where the layer above is on another node (slabs.fah FACE_UP): also the blocks' upper faces, what that layer's density reads of them. */
void c_deposit_g_f(int N, int F, int a, int g, PIC3D_IN9(x), const InputDF &S, OutputDF &L, OutputDF &A, OutputDF &faces)
{
    const InputDF *xs[9] = {PIC3D_ARR9(x)};
    depositGroup(N, F, a, g, xs, S, L, A, &faces);
}

/** The first step's deposits of group g of row a on one node, from the cloud's 4 parts -> its staying pack, its blocks, its arrivals (none). */
void c_deposit_all_g(int N, int F, int a, int g, PIC3D_IN4(p), OutputDF &S, OutputDF &L, OutputDF &A)
{
    const InputDF *ps[4] = {PIC3D_ARR4(p)};
    int subs[GROUP_MAX][2], ids[GROUP_MAX];
    const int k = groupOf(F, a, g, subs, ids);
    const long n1 = N / F + 1, none[27] = {0};
    long staySizes[GROUP_MAX], blockSizes[GROUP_MAX], arrivedSizes[GROUP_MAX];
    for (int i = 0; i < k; i++) { staySizes[i] = partsSize(ps, ids[i]); blockSizes[i] = n1 * n1 * n1; arrivedSizes[i] = pic3d::leavingSize(none); }
    double *stays[GROUP_MAX], *blocks[GROUP_MAX], *arrived[GROUP_MAX];
    packOut(S, ids, staySizes, k, stays, false);
    packOut(L, ids, blockSizes, k, blocks, true);
    packOut(A, ids, arrivedSizes, k, arrived, false);
    for (int i = 0; i < k; i++) {
        gatherInto(ps, (long)F * F * F, ids[i], stays[i]);
        depositStaying(N, F, a, subs[i][0], subs[i][1], stays[i], staySizes[i], blocks[i], arrived[i]);
    }
}

/** The particles of group g of row a at step 0, from the cloud's 4 parts (or a node's parts of its layers): all staying, none leaving. */
void c_pick_g(int F, int a, int g, PIC3D_IN4(p), OutputDF &stay, OutputDF &leaving)
{
    const InputDF *ps[4] = {PIC3D_ARR4(p)};
    int subs[GROUP_MAX][2], ids[GROUP_MAX];
    const int k = groupOf(F, a, g, subs, ids);
    long sizes[GROUP_MAX], empty[GROUP_MAX] = {0};
    for (int i = 0; i < k; i++) sizes[i] = partsSize(ps, ids[i]);
    double *stays[GROUP_MAX], *none[GROUP_MAX];
    packOut(stay, ids, sizes, k, stays, false);
    for (int i = 0; i < k; i++) gatherInto(ps, (long)F * F * F, ids[i], stays[i]);
    packOut(leaving, ids, empty, k, none, false);
}

/**
 * The pushes of group g of row a: its slab's φ after the step's sweeps, its staying pack, its
 * arrivals' pack -> its staying pack, its leaving pack (each subdomain pushed as c_push_slab pushes
 * it, in the deposit's order)
 */
void c_push_g(int N, int F, int SL, int a, int g, const InputDF &phi, const InputDF &S, const InputDF &A, OutputDF &stay, OutputDF &leaving)
{
    checkSlabs(F, SL, 0);
    int subs[GROUP_MAX][2], ids[GROUP_MAX];
    const int k = groupOf(F, a, g, subs, ids);
    const InputDF *sp = &S, *ap = &A;
    const Packs stays(F, &sp, 1), arrivals(F, &ap, 1);
    const long n1 = N / F + 1;
    long staySizes[GROUP_MAX], leavingSizes[GROUP_MAX];
    for (int i = 0; i < k; i++) {
        const int b = subs[i][0], c = subs[i][1];
        const double *gs = slabField(N, F, SL, a, b, c, phi);
        Bundle bs[27];
        const Bundle arrived = arrivals.at(a, b, c);
        for (int d = 0; d < 27; d++) bs[d] = d == pic3d::STAY ? stays.at(a, b, c) : pic3d::partOf(arrived.p, arrived.len, d);
        // each subdomain's result in a scratch slot of its own until the packs are made
        pic3d::Pushed &r = pushScratch(i);
        GUARD(pic3d::pushAt(N, F, a, b, c, gs, n1 * n1, n1, bs, 27, r))
        staySizes[i] = r.count[pic3d::STAY] * pic3d::REC;
        leavingSizes[i] = pic3d::leavingSize(r.count);
    }
    double *stayParts[GROUP_MAX], *leavingParts[GROUP_MAX];
    packOut(stay, ids, staySizes, k, stayParts, false);
    packOut(leaving, ids, leavingSizes, k, leavingParts, false);
    for (int i = 0; i < k; i++) {
        const pic3d::Pushed &r = pushScratch(i);
        double *to[27];
        pic3d::outgoing(r.count, stayParts[i], leavingParts[i], to);
        pic3d::scatter(r, to);
    }
}

/** Every layer's deposit blocks from the rows' deposit packs (12, slabs.fah LALL): layer A's (B, C) at A·16 + B·4 + C. */
static void allBlocks(int F, const InputDF *const *ls, const double **blocks)
{
    if (F != 4) failed("the groups take F = 4 subdomains a side, not F=" + std::to_string(F));
    const Packs packs(F, ls, 12);
    for (int A = 0; A < 4; A++) for (int B = 0; B < 4; B++) for (int C = 0; C < 4; C++) blocks[A * 16 + B * 4 + C] = packs.at(A, B, C).p;
}

/** sweep group j of slab p from every row's deposit packs (12) and every slab's φ (4) -> φ (as c_slab_group_d) */
void c_slab_group_dg(int N, int F, int NP, int K, int H, int SL, int p, int j, PIC3D_IN12(l), PIC3D_IN4(q), OutputDF &phi)
{
    const InputDF *ls[12] = {PIC3D_ARR12(l)}, *qs[4] = {PIC3D_ARR4(q)};
    const double *blocks[64];
    allBlocks(F, ls, blocks);
    slabGroup(N, F, NP, K, H, SL, p, j, nullptr, nullptr, qs, phi, nullptr, blocks);
}

/** the first step's group of slab p from every row's deposit packs (12), φ from zeros -> φ (as c_slab_group0_d) */
void c_slab_group0_dg(int N, int F, int NP, int K, int H, int SL, int p, PIC3D_IN12(l), OutputDF &phi)
{
    const InputDF *ls[12] = {PIC3D_ARR12(l)};
    const double *blocks[64];
    allBlocks(F, ls, blocks);
    slabGroup(N, F, NP, K, H, SL, p, 0, nullptr, nullptr, nullptr, phi, nullptr, blocks);
}

/** Layer A's 16 parts ((B, C) at B·4 + C) from 3 packs. */
static void layerParts(int F, const InputDF *const *dfs, int A, const double **out)
{
    if (F != 4) failed("the groups take F = 4 subdomains a side, not F=" + std::to_string(F));
    const Packs packs(F, dfs, 3);
    for (int B = 0; B < 4; B++) for (int C = 0; C < 4; C++) out[B * 4 + C] = packs.at(A, B, C).p;
}

/** Layer A's density from its deposit packs and the layer below's deposit packs, or (`faces`) their faces' packs (3 each), and its edges. */
static void layerDensityGroups(int N, int F, int A, int E, int lo, int hi, const InputDF *const *own, const InputDF *const *below, OutputDF &rho, OutputDF &first, OutputDF &last, bool faces)
{
    const double *ob[16], *bb[16];
    layerParts(F, own, A, ob);
    layerParts(F, below, A + F - 1, bb);
    layerDensityEdges(N, F, A, E, lo, hi, ob, bb, rho, first, last, faces);
}

/** Layer A's density from its deposit packs (3) and those of the layer below (3), and its first and last E planes (empty when lo, hi 0) -> n·N², E·N², E·N² doubles (as c_layer_density_e) */
void c_layer_density_g(int N, int F, int A, int E, int lo, int hi, PIC3D_IN3(o), PIC3D_IN3(m), OutputDF &rho, OutputDF &first, OutputDF &last)
{
    const InputDF *own[3] = {PIC3D_ARR3(o)}, *below[3] = {PIC3D_ARR3(m)};
    layerDensityGroups(N, F, A, E, lo, hi, own, below, rho, first, last, false);
}

/** c_layer_density_g with the layer below on another node (slabs.fah FACE_UP): of its blocks only their upper faces' packs (3) -> the same bits. */
void c_layer_density_gf(int N, int F, int A, int E, int lo, int hi, PIC3D_IN3(o), PIC3D_IN3(m), OutputDF &rho, OutputDF &first, OutputDF &last)
{
    const InputDF *own[3] = {PIC3D_ARR3(o)}, *below[3] = {PIC3D_ARR3(m)};
    layerDensityGroups(N, F, A, E, lo, hi, own, below, rho, first, last, true);
}

/**
 * Row a's 16 summaries in one CF (slabs.fah ROWS, F = 4), added as driver.ts's c_combine4 adds them
 * by column and then the columns' by row (sums, then maxima): the reference, the leaving packs of
 * rows a + 1, a, a − 1 (9, slabs.fah XNB), the row's staying packs (3) -> the row's summary
 */
void c_final_g(int N, int F, int NP, int a, const InputDF &ref, PIC3D_IN9(x), PIC3D_IN3(s), OutputDF &sum)
{
    if (F != 4) failed("the summaries by row take F = 4 subdomains a side, not F=" + std::to_string(F));
    const InputDF *xs[9] = {PIC3D_ARR9(x)}, *ss[3] = {PIC3D_ARR3(s)};
    const Packs leaving(F, xs, 9), stays(F, ss, 3);
    double *out = sum.create<double>(SUMMARY, 0.0);
    const auto add = [](double *to, const double *from) {
        for (int k = 0; k < DX; k++) to[k] += from[k];
        for (int k = DX; k < SUMMARY; k++) to[k] = jsMax(to[k], from[k]);
    };
    for (int b = 0; b < 4; b++) {
        double col[SUMMARY] = {0};
        for (int c = 0; c < 4; c++) {
            Bundle bs[27];
            subdomainBundles(leaving, stays, a, b, c, bs);
            double y1[SUMMARY] = {0};
            summarizeBundles(N, F, NP, a, b, c, ref, bs, y1);
            add(col, y1);
        }
        add(out, col);
    }
}
}


// pic3d_dda.fa's kernels (examples/pic3d/arrays.ts): each subdomain's particles in its block of a
// dynamic array, moved by the destination form: the push writes every particle back in place and
// names, per leaving particle, the neighbour's array it goes to (the 26 handles, by direction).

/** The block's particles, as the kernels take a bundle of them. */
static Bundle blockBundle(DdaBlock &P)
{
    return Bundle{P.data<double>(), (long)(P.getNumel() * P.getElsize() / sizeof(double))};
}

/** deposit(the block: the particles that stayed and those delivered from the neighbours, the subdomain's φ) -> the deposit block followed by φ */
void c_deposit_dda(int N, int F, int a, int b, int c, DdaBlock &P, const InputDF &, const InputDF &phi, OutputDF &L)
{
    const Bundle bs[1] = {blockBundle(P)};
    double *out = depositBlock(N, F, phi, L);
    GUARD(pic3d::deposit(N, F, a, b, c, bs, 1, out))
}

/**
 * The push's particles written back into the block in place, each one leaving for direction d
 * given the neighbour's array of that direction (T: the 26 in direction order, STAY left out)
 * -> the count that stays
 */
static void moveInBlock(DdaBlock &P, const pic3d::Pushed &r, const InputDF &T, OutputDF &ready)
{
    const long len = (long)(P.getNumel() * P.getElsize() / sizeof(double));
    if (len) std::memcpy(P.data<double>(), r.moved.data(), len * sizeof(double));
    int32_t *to = P.destinations(T);
    for (size_t q = 0; q < r.dir.size(); q++) {
        const int d = r.dir[q];
        if (d != pic3d::STAY) to[q] = d < pic3d::STAY ? d : d - 1;
    }
    ready.setValue((int)r.count[pic3d::STAY]);
}

/** push(G of own and 7 upper neighbours, the block, the list of the 26 neighbours' arrays by direction) -> the count that stays */
void c_push_dda(int N, int F, int a, int b, int c, const InputDF &g0, const InputDF &g1, const InputDF &g2, const InputDF &g3,
    const InputDF &g4, const InputDF &g5, const InputDF &g6, const InputDF &g7, DdaBlock &P, const InputDF &T, OutputDF &ready)
{
    const double *gs[8] = {g0.getData<double>(), g1.getData<double>(), g2.getData<double>(), g3.getData<double>(),
        g4.getData<double>(), g5.getData<double>(), g6.getData<double>(), g7.getData<double>()};
    const Bundle bs[1] = {blockBundle(P)};
    pic3d::Pushed &r = pushScratch();
    GUARD(pic3d::push(N, F, a, b, c, gs, bs, 1, r))
    moveInBlock(P, r, T, ready);
}

// With the Poisson sweeps on slabs of the grid (pic3d_dda.fa with slabs.fah, as pic3d.fa): the
// deposit makes the block alone, and the push takes g from its slab's φ (c_deposit_blk,
// c_push_slab, with the particles in the block).

static double *depositOnly(int N, int F, int a, int b, int c, DdaBlock &P, OutputDF &L)
{
    const Bundle bs[1] = {blockBundle(P)};
    const long n1 = N / F + 1;
    double *out = L.create<double>(n1 * n1 * n1, 0.0);
    GUARD(pic3d::deposit(N, F, a, b, c, bs, 1, out))
    return out;
}

/** deposit(the block's particles) -> the (n+1)³ deposit block alone (the slabs hold φ) */
void c_deposit_dda_blk(int N, int F, int a, int b, int c, DdaBlock &P, const InputDF &, OutputDF &L)
{
    depositOnly(N, F, a, b, c, P, L);
}

/** c_deposit_dda_blk where the layer above is on another node (slabs.fah FACE_UP): also the block's upper face -> L, the face ((n+1)² doubles) */
void c_deposit_dda_blk_f(int N, int F, int a, int b, int c, DdaBlock &P, const InputDF &, OutputDF &L, OutputDF &face)
{
    const long n = N / F, f2 = (n + 1) * (n + 1);
    const double *block = depositOnly(N, F, a, b, c, P, L);
    std::memcpy(face.create<double>(f2), pic3d::blockFace(block, n), sizeof(double) * f2);
}

/** push(its slab's φ after the step's sweeps, the block, the 26 neighbours' arrays by direction) -> the count that stays; g from that φ first */
void c_push_dda_slab(int N, int F, int SL, int a, int b, int c, const InputDF &phi, DdaBlock &P, const InputDF &T, OutputDF &ready)
{
    checkSlabs(F, SL, 0);
    const long n1 = N / F + 1;
    const double *g = slabField(N, F, SL, a, b, c, phi);
    const Bundle bs[1] = {blockBundle(P)};
    pic3d::Pushed &r = pushScratch();
    GUARD(pic3d::pushAt(N, F, a, b, c, g, n1 * n1, n1, bs, 1, r))
    moveInBlock(P, r, T, ready);
}

}
