// 3D stencils on CUDA cores in every precision (ELEM: stencil_real.cuh; the stage rings hold the
// storage type, every step rounded to storage) with temporal blocking by streaming along z (2.5D blocking, the
// design of EBISU, ICS '23): a block owns a BX x BY column of the domain over BZ output planes and
// runs DEPTH steps as a pipeline of stages along z. Stage 0 is a ring of input planes (tile plus a
// halo of H = DEPTH*RAD in x and y, periodic wrap), filled by cp.async one plane ahead; stage s
// (1..DEPTH) computes one plane of step s per iteration on a region with halo (DEPTH-s)*RAD into its
// own ring, and stage DEPTH writes to global memory. Stage s lags stage s-1 by RAD+1 planes, so
// every plane it reads was written before the iteration's one barrier, and a ring of 2*RAD+2 slots
// is never overwritten while read. Each input plane is read once per block: DRAM traffic stays
// ~2 x ELEM bytes per point per DEPTH steps; redundant work is the x/y halo of the inner stages and
// the 2*DEPTH*RAD + DEPTH - 1 extra iterations per block.
// Compile-time macros (set by stencil.py): RAD, STAR (0 box | 1 star), DEPTH, BX, BY, BZ, V (strip
// length along y), NTHREADS, WSMEM, VEC (1: input planes copied in 16-byte vectors through L1, each
// shared row XO pad columns left of the tile, as stencil_cc3's), PF (input planes in flight: stage 0's
// ring has 2*RAD+1+PF slots). Weights: dense (2*RAD+1)^3 array (offset order z, y, x).

#define DIMS 3
#define H (DEPTH * RAD)
#ifndef VEC
#define VEC 0
#endif
#ifndef PF
#define PF 1
#endif
#if VEC
#define XO ((VW - H % VW) % VW)   // pad columns left of the tile
#define SX ((XO + BX + 2 * H + VW - 1) / VW * VW)
#else
#define XO 0
#define SX (BX + 2 * H)
#endif
#define SY (BY + 2 * H)
#define PLANE (SX * SY)
#define NS (2 * RAD + 2)          // ring slots of stages 1..DEPTH
#define NS0 (2 * RAD + 1 + PF)    // ring slots of stage 0, the input

#include "stencil_strip.cuh"
#include "stencil_async.cuh"

extern "C" __global__ void __launch_bounds__(NTHREADS, MINB)
stencil_tb3(const real* __restrict__ in, real* __restrict__ out, const Weights wts,
            int nz, int ny, int nx) {
  // a ring of NS0 input planes, DEPTH - 1 rings of NS planes (stage s: step s), then V rows of slack
  // for the reads of a last partial strip (discarded results); slot() points at a plane's column 0
  // (global column gx0 - H), XO elements into its shared row
  extern __shared__ real smem[];
  WEIGHTS(w, wts);
  const int gx0 = blockIdx.x * BX, gy0 = blockIdx.y * BY, z0 = blockIdx.z * BZ;
  const int z1 = min(z0 + BZ, nz);
  const int first = z0 - H, last_in = z1 - 1 + H, last = last_in + DEPTH - 1;
  auto slot = [&](int stage, int p) {
    const int k = p - first + NS0 * NS * DEPTH;   // >= 0 for every plane a stage touches
    return smem + XO + (stage ? NS0 + (stage - 1) * NS + k % NS : k % NS0) * PLANE;
  };
#if VEC
  constexpr int NOFF = (PLANE / VW + NTHREADS - 1) / NTHREADS;
  // this thread's vectors of a plane (wrapped row * nx + wrapped column): the same in every plane. stencil_plane.cuh's
  // plane_offsets computes the same, but through it ptxas emits other code for the whole kernel (not timed)
  int off[NOFF];
#pragma unroll
  for (int j = 0; j < NOFF; ++j) {
    const int i = threadIdx.x + j * NTHREADS;
    off[j] = wrap(gy0 - H + i / (SX / VW), ny) * nx + wrap(gx0 - H - XO + i % (SX / VW) * VW, nx);
  }
#endif
  auto load = [&](int p) {   // input plane p into its slot (p past last_in: an empty group)
    if (p <= last_in) {
      const real* plane = in + (size_t)wrap(p, nz) * ny * nx;
      real* dst = slot(0, p) - XO;
#if VEC   // its own loop, not stencil_plane.cuh's fetch_async: through fetch_async fp64 3d27pt at depth 3 ran
          // 11.6% slower on an H100 (same copies, other code; docs/kernels_stencil.md)
      if (nx % VW == 0) {   // tested once a plane
#pragma unroll
        for (int j = 0; j < NOFF; ++j)
          if (threadIdx.x + j * NTHREADS < PLANE / VW)
            copy_async16_l1(dst + (threadIdx.x + j * NTHREADS) * VW, plane + off[j]);
      } else {
#pragma unroll
        for (int j = 0; j < NOFF; ++j) {
          const int i = threadIdx.x + j * NTHREADS;
          if (i >= PLANE / VW) break;
          const real* row = plane + (size_t)wrap(gy0 - H + i / (SX / VW), ny) * nx;
          const int x = gx0 - H - XO + i % (SX / VW) * VW;
#pragma unroll
          for (int v = 0; v < VW; ++v) copy_async(dst + i * VW + v, row + wrap(x + v, nx));
        }
      }
#else
      for (int i = threadIdx.x; i < PLANE; i += NTHREADS) {
        const int x = i % SX, y = i / SX;
        copy_async(dst + i, plane + (size_t)wrap(gy0 - H + y, ny) * nx + wrap(gx0 - H + x, nx));
      }
#endif
    }
    async_commit();
  };

#pragma unroll 1
  for (int p = first; p < first + PF; ++p) load(p);
#pragma unroll 1
  for (int i = first; i <= last; ++i) {
    async_wait<PF - 1>();   // plane i has landed (this thread's copies) ...
    __syncthreads();        // ... everyone's, and every read of plane i + PF - NS0 (its slot is refilled next) is done
    load(i + PF);           // in flight during this iteration's stages
#pragma unroll 1
    for (int s = 1; s <= DEPTH; ++s) {
      const int q = i - s * RAD - (s - 1), h = (DEPTH - s) * RAD;
      if (q < z0 - h || q >= z1 + h) continue;
      const int lo = H - h, nxr = BX + 2 * h, nyr = BY + 2 * h, nstrips = (nyr + V - 1) / V;
      for (int j = threadIdx.x; j < nstrips * nxr; j += NTHREADS) {
        const int x = lo + j % nxr, y = lo + j / nxr * V;
        acc_t acc[V];
        sums(acc, w, [&](int dz, int dx) { return rows(slot(s - 1, q + dz) + y * SX + x + dx); });
        if (s == DEPTH) {
          write_strip(out + (size_t)q * ny * nx, acc, gy0 + y - H, gx0 + x - H, ny, nx);
        } else {
          real* dst = slot(s, q) + y * SX + x;
#pragma unroll
          for (int v = 0; v < V; ++v)
            if (y + v < lo + nyr) dst[v * SX] = to_real(acc[v]);
        }
      }
    }
  }
}
