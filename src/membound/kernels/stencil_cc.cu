// FP64 stencils on CUDA cores: one kernel for both the unblocked role (DEPTH=1) and temporal
// blocking (DEPTH=t): a block loads its output tile plus a halo of DEPTH*RAD (periodic wrap) into
// shared memory, runs DEPTH steps there on shrinking regions (ping-pong buffers) and writes only
// the last step to global memory, so DRAM traffic stays ~2 x 8 bytes per point per launch.
// The field is (nz, ny, nx), x fastest; 2D runs with nz = 1. Each thread computes a strip of V
// points along y, keeping the input column in registers (reuse along y).
// Compile-time macros (set by stencil.py): DIMS (2|3), RAD, STAR (0 box | 1 star), DEPTH,
// BX, BY, BZ (output tile), V (strip length, divides BY), NTHREADS.
// Weights: dense (2*RAD+1)^DIMS array (offset order z, y, x); off-star entries are never read.

#define H (DEPTH * RAD)
#define RZ (DIMS == 3 ? RAD : 0)
#define HZ (DIMS == 3 ? H : 0)
#define SX (BX + 2 * H)
#define LY (BY + 2 * H)
#define SY (LY + (DEPTH > 1 ? V : 0))   // slack rows for partial strips of the inner steps
#define NLOAD ((SZ * LY * SX + NTHREADS - 1) / NTHREADS)
#define SZ (BZ + 2 * HZ)

#include "stencil_strip.cuh"

extern "C" __global__ void __launch_bounds__(NTHREADS)
stencil_cc(const double* __restrict__ in, double* __restrict__ out, const double* __restrict__ wts,
           int nz, int ny, int nx) {
  extern __shared__ double smem[];
  double* src = smem;
  double* dst = smem + SZ * SY * SX;
  double w[NW];
#pragma unroll
  for (int o = 0; o < NW; ++o) w[o] = wts[o];
  const int gx0 = blockIdx.x * BX, gy0 = blockIdx.y * BY, gz0 = blockIdx.z * BZ;

  double stage[NLOAD];          // all of a thread's loads in flight before the first store
#pragma unroll
  for (int j = 0; j < NLOAD; ++j) {
    const int i = threadIdx.x + j * NTHREADS;
    if (i < SZ * LY * SX) {
      const int x = i % SX, rest = i / SX, y = rest % LY, z = rest / LY;
      const int gx = wrap(gx0 - H + x, nx), gy = wrap(gy0 - H + y, ny), gz = wrap(gz0 - HZ + z, nz);
      stage[j] = __ldg(in + ((size_t)gz * ny + gy) * nx + gx);
    }
  }
#pragma unroll
  for (int j = 0; j < NLOAD; ++j) {
    const int i = threadIdx.x + j * NTHREADS;
    if (i < SZ * LY * SX) {
      const int x = i % SX, rest = i / SX, y = rest % LY, z = rest / LY;
      src[(z * SY + y) * SX + x] = stage[j];
    }
  }
  __syncthreads();

#pragma unroll 1
  for (int s = 1; s <= DEPTH; ++s) {
    const int h = (DEPTH - s) * RAD, hz = DIMS == 3 ? h : 0;
    const int xlo = H - h, nxr = BX + 2 * h, ylo = H - h, nyr = BY + 2 * h, zlo = HZ - hz;
    const int nstrips = (nyr + V - 1) / V;
    const int total = (BZ + 2 * hz) * nstrips * nxr;
    for (int i = threadIdx.x; i < total; i += NTHREADS) {
      const int x = xlo + i % nxr, rest = i / nxr;
      const int y = ylo + (rest % nstrips) * V, z = zlo + rest / nstrips;
      double acc[V];
#pragma unroll
      for (int v = 0; v < V; ++v) acc[v] = 0.0;
#pragma unroll
      for (int dz = -RZ; dz <= RZ; ++dz) {
#pragma unroll
        for (int dx = -RAD; dx <= RAD; ++dx) strip(acc, w, src + ((z + dz) * SY + y) * SX + x + dx, dz, dx);
      }
      if (s == DEPTH) {
        const int gx = gx0 + x - H, gz = gz0 + z - HZ;
        if (gx < nx && gz < nz) {
#pragma unroll
          for (int v = 0; v < V; ++v) {
            const int gy = gy0 + y - H + v;
            if (gy < ny) out[((size_t)gz * ny + gy) * nx + gx] = acc[v];
          }
        }
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v)
          if (y + v < ylo + nyr) dst[(z * SY + y + v) * SX + x] = acc[v];
      }
    }
    __syncthreads();
    double* t = src; src = dst; dst = t;
  }
}
