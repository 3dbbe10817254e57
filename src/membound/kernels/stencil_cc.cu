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
// Compile-time macros (set by stencil.py): RAD, STAR (0 box | 1 star), DEPTH, BX, BY (output tile),
// V (strip length, divides BY), NTHREADS, MINB (minimum blocks per SM, 0: the compiler's choice),
// TPB, WSMEM (weights in shared memory: stencil_strip.cuh).
// Weights: dense (2*RAD+1)^2 array (offset order y, x); off-star entries are never read.

#define DIMS 2
#define H (DEPTH * RAD)
#define SX (BX + 2 * H)
#define LY (BY + 2 * H)
#define SY (LY + (DEPTH > 1 ? V : 0))   // slack rows for partial strips of the inner steps
#define TILE (SY * SX)
#define NBUF (TPB > 1 ? 2 : 1)
#define NLOAD ((LY * SX + NTHREADS - 1) / NTHREADS)

#include "stencil_strip.cuh"
#include "stencil_async.cuh"

// Fill `buf` with the input tile whose output corner is (gy0, gx0): TPB > 1, one commit group of
// cp.async copies; TPB = 1, loads staged in registers.
__device__ __forceinline__ void load_tile(real* buf, const real* __restrict__ in, int gy0, int gx0, int ny,
                                          int nx) {
#if TPB > 1
  for (int i = threadIdx.x; i < LY * SX; i += NTHREADS)
    copy_async(buf + i, in + (size_t)wrap(gy0 - H + i / SX, ny) * nx + wrap(gx0 - H + i % SX, nx));
  async_commit();
#else
  real stage[NLOAD];
#pragma unroll
  for (int j = 0, i = threadIdx.x; j < NLOAD; ++j, i += NTHREADS)
    if (i < LY * SX) stage[j] = __ldg(in + (size_t)wrap(gy0 - H + i / SX, ny) * nx + wrap(gx0 - H + i % SX, nx));
#pragma unroll
  for (int j = 0, i = threadIdx.x; j < NLOAD; ++j, i += NTHREADS)
    if (i < LY * SX) buf[i] = stage[j];
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
    real* src = smem + (k & 1) * TILE;
    real* dst = smem + NBUF * TILE;
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
