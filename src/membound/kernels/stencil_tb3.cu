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
// length along y), NTHREADS, WSMEM. Weights: dense (2*RAD+1)^3 array (offset order z, y, x).

#define DIMS 3
#define H (DEPTH * RAD)
#define SX (BX + 2 * H)
#define SY (BY + 2 * H)
#define PLANE (SX * SY)
#define NS (2 * RAD + 2)   // ring slots per stage

#include "stencil_strip.cuh"
#include "stencil_async.cuh"

extern "C" __global__ void __launch_bounds__(NTHREADS, MINB)
stencil_tb3(const real* __restrict__ in, real* __restrict__ out, const Weights wts,
            int nz, int ny, int nx) {
  // DEPTH rings of NS planes (stage 0: input; stage s: step s), then V rows of slack for the reads
  // of a last partial strip (discarded results)
  extern __shared__ real smem[];
  WEIGHTS(w, wts);
  const int gx0 = blockIdx.x * BX, gy0 = blockIdx.y * BY, z0 = blockIdx.z * BZ;
  const int z1 = min(z0 + BZ, nz);
  const int first = z0 - H, last_in = z1 - 1 + H, last = last_in + DEPTH - 1;
  auto slot = [&](int stage, int p) { return smem + (stage * NS + (p - first + NS * DEPTH) % NS) * PLANE; };
  auto load = [&](int p) {
    const real* plane = in + (size_t)wrap(p, nz) * ny * nx;
    real* dst = slot(0, p);
    for (int i = threadIdx.x; i < PLANE; i += NTHREADS) {
      const int x = i % SX, y = i / SX;
      copy_async(dst + i, plane + (size_t)wrap(gy0 - H + y, ny) * nx + wrap(gx0 - H + x, nx));
    }
    async_commit();
  };

  load(first);
#pragma unroll 1
  for (int i = first; i <= last; ++i) {
    async_wait<0>();
    __syncthreads();
    if (i + 1 <= last_in) load(i + 1);   // in flight during this iteration's stages
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
