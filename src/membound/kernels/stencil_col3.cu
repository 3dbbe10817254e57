// 3D stencils on CUDA cores in every precision (ELEM: stencil_real.cuh) at depth 1, without shared
// memory or barriers: each thread owns VY rows x VX columns of the domain over a segment of BZ planes
// and walks it along z. Its own rows of each input plane are loaded D planes ahead into registers (VX
// elements of a row as one vector); the halo (RAD columns either side, RAD rows above and below) is
// loaded when the plane is summed, from lines the neighbouring threads load as their own (L1 or L2
// hits). Each input plane is added into the 2*RAD+1 output planes it is a term of (acc, a ring of
// partial sums); output plane zi - RAD is complete after input plane zi and stored. The terms of an
// output are summed in the order of stencil_strip.cuh's `sums` (dz, dx, dy).
// Compile-time macros (set by stencil_plan.py): RAD, STAR (0 box | 1 star), a block's BX x BY x BZ
// outputs, VX (VX * ELEM = 2, 4, 8 or 16 bytes) x VY a thread's, NTHREADS = BX / VX * BY / VY, D (planes
// ahead, >= 1), HA (0: the halo loaded when summed, 1: D planes ahead as well), MINB (0: the compiler's choice). The field's nx must be a multiple of VX. Weights: dense
// (2*RAD+1)^3 array (z, y, x).

#define DIMS 3
#define V 1
#define SX 1
#define NTX (BX / VX)
static_assert(BX % VX == 0 && BY % VY == 0 && NTHREADS == NTX * (BY / VY), "a block: BX / VX x BY / VY threads");
#include "stencil_strip.cuh"

#ifndef HA
#define HA 0
#endif
#define NQ (D + 1)                                  // the own-row ring: the plane summed and D ahead
#define KZ (2 * RAD + 1)                            // the output planes an input plane is a term of
#define GCD(a, b) ((b) == 0 ? (a) : (b) == 1 || (a) == 1 ? 1 : (a) % (b) == 0 ? (b) : (b) % (a) == 0 ? (a) : 1)
#define U (NQ * KZ / GCD(NQ, KZ))                   // planes per unrolled step: both rings' indices static
#define VB (VX * ELEM)                              // bytes of a thread's row vector

template <int B> struct word;
template <> struct word<2> { typedef unsigned short type; };
template <> struct word<4> { typedef unsigned type; };
template <> struct word<8> { typedef uint2 type; };
template <> struct word<16> { typedef uint4 type; };
typedef typename word<VB>::type vword;
static_assert(VB == 2 || VB == 4 || VB == 8 || VB == 16, "VX * ELEM must be 2, 4, 8 or 16 bytes");

struct Row { real v[VX]; };
// VX elements of `row` from column x0: one vector load, or (nx no multiple of VX) one load each, wrapped
__device__ __forceinline__ Row load_row(const real* row, int x0, int nx, bool vec) {
  Row r;
  if (vec) {
    const vword w = __ldg(reinterpret_cast<const vword*>(row + x0));
    memcpy(r.v, &w, VB);
  } else {
#pragma unroll
    for (int i = 0; i < VX; ++i) r.v[i] = row[wrap(x0 + i, nx)];
  }
  return r;
}

struct Nb { Row r[VY + 2 * RAD]; real xl[VY + 2 * RAD][RAD], xr[VY + 2 * RAD][RAD]; };   // a plane around a thread
__device__ __forceinline__ constexpr bool mine(int j) { return j >= RAD && j < VY + RAD; }   // row j: the thread's own
__device__ __forceinline__ constexpr bool arm(int j) { return mine(j) || !STAR; }   // its x halo is a term (star: own rows)

extern "C" __global__ void __launch_bounds__(NTHREADS, MINB)
stencil_col3(const real* __restrict__ in, real* __restrict__ out, const Weights wts, int nz, int ny, int nx) {
  const auto& w = wts.w;
  const int x0 = blockIdx.x * BX + threadIdx.x % NTX * VX;
  const int y0 = blockIdx.y * BY + threadIdx.x / NTX * VY;
  const int z0 = blockIdx.z * BZ, z1 = min(z0 + BZ, nz);
  if (x0 >= nx || y0 >= ny) return;
  int xh[2 * RAD], yh[VY + 2 * RAD];               // halo columns (wrapped), every row (wrapped)
#pragma unroll
  for (int i = 0; i < RAD; ++i) { xh[i] = wrap(x0 - RAD + i, nx); xh[RAD + i] = wrap(x0 + VX + i, nx); }
#pragma unroll
  for (int j = 0; j < VY + 2 * RAD; ++j) yh[j] = wrap(y0 - RAD + j, ny);
  const bool vec = nx % VX == 0;
  auto plane = [&](int zi) { return in + (size_t)wrap(zi, nz) * ny * nx; };

  Nb ring[NQ];                                     // planes zi .. zi + D (slot: plane index % NQ)
  auto ahead = [&](Nb& nb, int zi) {               // own rows, and with HA the halo, of plane zi
    const real* src = plane(zi);
#pragma unroll
    for (int j = 0; j < VY + 2 * RAD; ++j) {
      const real* row = src + (size_t)yh[j] * nx;
      if (HA || mine(j)) nb.r[j] = load_row(row, x0, nx, vec);
      if (HA && arm(j))
#pragma unroll
        for (int i = 0; i < RAD; ++i) { nb.xl[j][i] = row[xh[i]]; nb.xr[j][i] = row[xh[RAD + i]]; }
    }
  };
  acc_t acc[KZ][VY][VX];                           // acc[(zo - z0 + 2 RAD) % KZ]: output plane zo
  const int np = z1 - z0 + 2 * RAD;                // input planes z0 - RAD .. z1 + RAD - 1
#pragma unroll
  for (int q = 0; q < D; ++q) ahead(ring[q], z0 - RAD + q);
#pragma unroll
  for (int k = 0; k < KZ; ++k)
#pragma unroll
    for (int j = 0; j < VY; ++j)
#pragma unroll
      for (int i = 0; i < VX; ++i) acc[k][j][i] = 0;

#pragma unroll 1
  for (int p0 = 0; p0 < np; p0 += U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {                  // input plane p = p0 + u: zi = z0 - RAD + p
      const int p = p0 + u;
      if (p >= np) break;
      const real* src = plane(z0 - RAD + p);
      if (p + D < np) ahead(ring[(u + D) % NQ], z0 - RAD + p + D);
      const Nb& nb = ring[u % NQ];
      // the plane's values around the thread's rows: c[j][i], row y0 - RAD + j, column x0 - RAD + i
      acc_t c[VY + 2 * RAD][VX + 2 * RAD];
#pragma unroll
      for (int j = 0; j < VY + 2 * RAD; ++j) {
        const real* row = src + (size_t)yh[j] * nx;
        const Row r = HA || mine(j) ? nb.r[j] : load_row(row, x0, nx, vec);
#pragma unroll
        for (int i = 0; i < VX; ++i) c[j][RAD + i] = to_acc(r.v[i]);
        if (arm(j))
#pragma unroll
          for (int i = 0; i < RAD; ++i) {
            c[j][i] = to_acc(HA ? nb.xl[j][i] : row[xh[i]]);
            c[j][RAD + VX + i] = to_acc(HA ? nb.xr[j][i] : row[xh[RAD + i]]);
          }
      }
#pragma unroll
      for (int dz = -RAD; dz <= RAD; ++dz) {       // into output zo = zi - dz, slot (p + RAD - dz) % KZ
        const int k = (u + RAD - dz) % KZ;
#pragma unroll
        for (int dx = -RAD; dx <= RAD; ++dx)
#pragma unroll
          for (int dy = -RAD; dy <= RAD; ++dy) {
            if (STAR && (dz != 0) + (dy != 0) + (dx != 0) > 1) continue;
            const acc_t wt = w[widx(dz, dy, dx)];
#pragma unroll
            for (int j = 0; j < VY; ++j)
#pragma unroll
              for (int i = 0; i < VX; ++i) acc[k][j][i] = fma(wt, c[RAD + j + dy][RAD + i + dx], acc[k][j][i]);
          }
      }
      const int zo = z0 - 2 * RAD + p, k = u % KZ;   // complete: dz = +RAD was its last term
      if (zo >= z0) {
        real* dst = out + (size_t)zo * ny * nx;
#pragma unroll
        for (int j = 0; j < VY; ++j) {
          if (y0 + j >= ny) break;
          real* row = dst + (size_t)(y0 + j) * nx + x0;
          Row r;
#pragma unroll
          for (int i = 0; i < VX; ++i) r.v[i] = to_real(acc[k][j][i]);
          if (vec) {
            vword wv;
            memcpy(&wv, r.v, VB);
            *reinterpret_cast<vword*>(row) = wv;
          } else {
#pragma unroll
            for (int i = 0; i < VX; ++i)
              if (x0 + i < nx) row[i] = r.v[i];
          }
        }
      }
#pragma unroll
      for (int j = 0; j < VY; ++j)
#pragma unroll
        for (int i = 0; i < VX; ++i) acc[k][j][i] = 0;
    }
  }
}
