// 2D stencils on CUDA cores in every precision (ELEM: stencil_real.cuh): one kernel for both the
// unblocked role (DEPTH=1) and temporal blocking (DEPTH=t): a tile plus a halo of DEPTH*RAD (periodic
// wrap) sits in shared memory, DEPTH steps run there on shrinking regions (ping-pong buffers, in the
// storage type: every step is rounded to storage, as the unblocked kernel's) and only the last step is
// written to global memory, so DRAM traffic stays ~2 x ELEM bytes per point per launch.
// A block walks TPB tiles along y. TPB > 1: the next tile's input is copied into a second buffer with
// cp.async while the current one is computed, so loads and arithmetic overlap within a block and no
// register stages the copy (the high-order stencils, whose registers allow few blocks per SM).
// TPB = 1: the loads are staged in registers, all in flight before the first store (the small
// stencils, many blocks per SM). The field is (ny, nx), x fastest. Each thread computes a strip of
// V points along y, keeping the input column in registers (reuse along y).
// VEC 1: the tiles are copied in 16-byte vectors (2, 4 or 8 elements) where the field's row length is
// a multiple of a vector (else element by element): each shared row then starts XO pad columns left of
// the tile, so that its first element's global column is a multiple of a vector; a vector never
// straddles the periodic seam. VEC 0: element by element, no pad. NOWRAP 1 (with VEC): the tiles inside
// the field copied at offsets from their corner, without the wrap's tests and branches (edge tiles wrap).
// Compile-time macros (set by stencil.py): RAD, STAR (0 box | 1 star), DEPTH, BX, BY (output tile),
// V (strip length, divides BY), NTHREADS, MINB (minimum blocks per SM, 0: the compiler's choice),
// TPB, WSMEM (weights in shared memory: stencil_strip.cuh), VEC, VS (depth 1: the sums in vector strips,
// below; V is then the rows of a strip, VW = 16 / ELEM its columns).
// Weights: dense (2*RAD+1)^2 array (offset order y, x); off-star entries are never read.

#define DIMS 2
#define H (DEPTH * RAD)
#define SXO (BX + 2 * H)                   // the columns a tile needs
#ifndef VEC
#define VEC 0
#endif
#if VEC
#define XO ((VW - H % VW) % VW)            // pad columns left of the tile
#define SX ((XO + SXO + VW - 1) / VW * VW) // row pitch: whole vectors
#else
#define XO 0
#define SX SXO
#endif
#ifndef NOWRAP
#define NOWRAP 0
#endif
#define LY (BY + 2 * H)
#define SY (LY + (DEPTH > 1 ? V : 0))   // slack rows for partial strips of the inner steps
#define TILE (SY * SX)
#define NBUF (TPB > 1 ? 2 : 1)

#include "stencil_strip.cuh"
#include "stencil_async.cuh"
#ifndef VS
#define VS 0
#endif
#if VS
#include "stencil_vec.cuh"
static_assert(DEPTH == 1 && VEC && BX % VW == 0, "VS: depth 1, 16-byte copies, whole vectors per tile row");

// VS 1 (depth 1): the tile's sums in vector strips (stencil_vec.cuh), one per work item of V rows and
// VW columns, each output row a 16-byte store. `src`: the tile, column 0 = global column gx0 - H.
template <typename W>
__device__ __forceinline__ void vector_strips(const real* src, real* out, const W& w, int gy0, int gx0, int ny,
                                              int nx) {
  constexpr int NVC = BX / VW;
  for (int i = threadIdx.x; i < BY / V * NVC; i += NTHREADS) {
    const int y = i / NVC * V, gx = gx0 + i % NVC * VW;
    const real* p = src + y * SX + H + i % NVC * VW;   // tile row y: global row gy0 + y - H
    real* row = out + (size_t)(gy0 + y) * nx;           // output row 0 of the strip
    vector_strip(w, [&](int) { return p; }, [&](int o, const acc_t (&sums)[VW]) {
      if (gy0 + y + o < ny && gx < nx) store_vec(row + (size_t)o * nx, sums, gx, nx);
    });
  }
}
#endif

// Fill `buf` (a shared tile, column 0 = global column gx0 - H - XO) with the input tile whose output
// corner is (gy0, gx0): TPB > 1, one commit group of cp.async copies; TPB = 1, loads staged in
// registers, all in flight before the first store.
__device__ __forceinline__ void load_tile(real* buf, const real* __restrict__ in, int gy0, int gx0, int ny,
                                          int nx) {
#if VEC
  static_assert(BX % VW == 0, "VEC needs a tile width BX of whole 16-byte vectors");
  if (nx % VW == 0) {
    constexpr int NC = SX / VW;
    const int x0 = gx0 - H - XO;
    // NOWRAP: a tile inside the field (all but the edge blocks; the same for the whole block) is copied
    // without the wrap, its vectors at int offsets from its corner
    const bool inside = NOWRAP && gy0 >= H && gy0 - H + LY <= ny && x0 >= 0 && x0 + SX <= nx &&
                        nx <= 2147483647 / LY;
    const real* corner = in + (long long)(gy0 - H) * nx + x0;
    auto near = [&](int i) { return corner + ((unsigned)i / NC * nx + (unsigned)i % NC * VW); };   // vector i
    auto wrapped = [&](int i) {   // vector i of any tile
      return in + (size_t)wrap(gy0 - H + i / NC, ny) * nx + wrap(x0 + i % NC * VW, nx);
    };
#if TPB > 1
    if (inside) {
      for (int i = threadIdx.x; i < LY * NC; i += NTHREADS) copy_async16(buf + i * VW, near(i));
    } else {
      for (int i = threadIdx.x; i < LY * NC; i += NTHREADS) copy_async16(buf + i * VW, wrapped(i));
    }
    async_commit();
#else
    constexpr int NV = (LY * NC + NTHREADS - 1) / NTHREADS;
    uint4 stage[NV];
    if (inside) {
#pragma unroll
      for (int j = 0, i = threadIdx.x; j < NV; ++j, i += NTHREADS)
        if (i < LY * NC) stage[j] = __ldg(reinterpret_cast<const uint4*>(near(i)));
    } else {
#pragma unroll
      for (int j = 0, i = threadIdx.x; j < NV; ++j, i += NTHREADS)
        if (i < LY * NC) stage[j] = __ldg(reinterpret_cast<const uint4*>(wrapped(i)));
    }
#pragma unroll
    for (int j = 0, i = threadIdx.x; j < NV; ++j, i += NTHREADS)
      if (i < LY * NC) *reinterpret_cast<uint4*>(buf + i * VW) = stage[j];
#endif
    return;
  }
#endif
  buf += XO;
#if TPB > 1
  for (int i = threadIdx.x; i < LY * SXO; i += NTHREADS)
    copy_async(buf + i / SXO * SX + i % SXO, in + (size_t)wrap(gy0 - H + i / SXO, ny) * nx + wrap(gx0 - H + i % SXO, nx));
  async_commit();
#else
  constexpr int NLOAD = (LY * SXO + NTHREADS - 1) / NTHREADS;
  real stage[NLOAD];
#pragma unroll
  for (int j = 0, i = threadIdx.x; j < NLOAD; ++j, i += NTHREADS)
    if (i < LY * SXO) stage[j] = __ldg(in + (size_t)wrap(gy0 - H + i / SXO, ny) * nx + wrap(gx0 - H + i % SXO, nx));
#pragma unroll
  for (int j = 0, i = threadIdx.x; j < NLOAD; ++j, i += NTHREADS)
    if (i < LY * SXO) buf[i / SXO * SX + i % SXO] = stage[j];
#endif
}

extern "C" __global__ void __launch_bounds__(NTHREADS, MINB)
stencil_cc(const real* __restrict__ in, real* __restrict__ out, const Weights wts,
           int nz, int ny, int nx) {
  extern __shared__ real smem[];   // NBUF input buffers, then (DEPTH > 1) the ping-pong partner
  WEIGHTS(w, wts);
  const int gx0 = blockIdx.x * BX;
  const int t0 = blockIdx.y * TPB, ntiles = min(TPB, (ny + BY - 1) / BY - t0);
  load_tile(smem, in, t0 * BY, gx0, ny, nx);

#pragma unroll 1
  for (int k = 0; k < ntiles; ++k) {
    const int gy0 = (t0 + k) * BY;
    if (k + 1 < ntiles) {
      load_tile(smem + ((k + 1) & 1) * TILE, in, gy0 + BY, gx0, ny, nx);
      async_wait<1>();
    } else {
      async_wait<0>();
    }
    __syncthreads();
    real* src = smem + (k & 1) * TILE + XO;   // column 0: global column gx0 - H
    real* dst = smem + NBUF * TILE + XO;
#if VS
    vector_strips(src, out, w, gy0, gx0, ny, nx);
    __syncthreads();   // the next tile's copies may overwrite this tile's input buffer
    continue;
#endif
#pragma unroll 1
    for (int s = 1; s <= DEPTH; ++s) {
      const int h = (DEPTH - s) * RAD, lo = H - h, nxr = BX + 2 * h, nyr = BY + 2 * h;
      const int nstrips = (nyr + V - 1) / V;
      for (int i = threadIdx.x; i < nstrips * nxr; i += NTHREADS) {
        const int x = lo + i % nxr, y = lo + i / nxr * V;
        acc_t acc[V];
        sums(acc, w, [&](int, int dx) { return rows(src + y * SX + x + dx); });
        if (s == DEPTH) {
          write_strip(out, acc, gy0 + y - H, gx0 + x - H, ny, nx);
        } else {
#pragma unroll
          for (int v = 0; v < V; ++v)
            if (y + v < lo + nyr) dst[(y + v) * SX + x] = to_real(acc[v]);
        }
      }
      __syncthreads();   // also: the next tile's copies may overwrite this tile's input buffer
      real* t = src; src = dst; dst = t;
    }
  }
}
