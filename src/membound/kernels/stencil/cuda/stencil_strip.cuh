// What the CUDA-core stencil kernels share: the element types and the periodic wrap (stencil_real.cuh,
// ELEM), the weight index, the weights (WEIGHTS) and the update of a strip of V output points along y.
// Set DIMS, RAD, STAR (0 box | 1 star), V, SX (the row pitch of the shared-memory tiles), NTHREADS,
// WSMEM and ELEM before including it. Values are read as `real` and summed in `acc_t`. Weights: dense
// (2*RAD+1)^DIMS array (z, y, x), a kernel argument passed by value (struct Weights): every thread
// reads the same constant-bank words, which the compiler keeps in uniform registers or uses as DFMA
// operands, so they take no per-thread registers. WSMEM 1: copied to shared memory (volatile, each
// strip reads each weight once, a broadcast load; the kernel must pass a barrier before the first use).
#pragma once

#include "stencil_real.cuh"

#define KW (2 * RAD + 1)
#define NW (DIMS == 3 ? KW * KW * KW : KW * KW)

struct Weights {
  acc_t w[NW];
};

#if WSMEM
#define WEIGHTS(w, wts)                                                               \
  volatile __shared__ acc_t w[NW];                                                   \
  for (int o = threadIdx.x; o < NW; o += NTHREADS) w[o] = wts.w[o] /* read after the kernel's first barrier */
#else
#define WEIGHTS(w, wts) const auto& w = wts.w
#endif

__device__ __forceinline__ constexpr int widx(int dz, int dy, int dx) {
  return DIMS == 3 ? ((dz + RAD) * KW + dy + RAD) * KW + dx + RAD : (dy + RAD) * KW + dx + RAD;
}

// acc[v] += every term of the stencil's (dz, dx) column at the strip's V points; `col(j)` is the
// input at the strip's first point shifted by (dz, j, dx), j in [-RAD, V + RAD). Off-star columns add
// nothing.
// A column of a shared-memory tile with row pitch SX, from `p` (the strip's first point).
__device__ __forceinline__ auto rows(const real* p) {
  return [p](int j) { return to_acc(p[j * SX]); };
}

template <typename W, typename Col>
__device__ __forceinline__ void strip(acc_t (&acc)[V], const W& w, const Col& col, int dz, int dx) {
  if (STAR && dz != 0 && dx != 0) return;
  if (!STAR || (dz == 0 && dx == 0)) {        // the whole dy range of this (dz, dx) column
    acc_t c[V + 2 * RAD];
#pragma unroll
    for (int j = 0; j < V + 2 * RAD; ++j) c[j] = col(j - RAD);
#pragma unroll
    for (int dy = -RAD; dy <= RAD; ++dy) {
      const acc_t wt = w[widx(dz, dy, dx)];
#pragma unroll
      for (int v = 0; v < V; ++v) acc[v] = fma(wt, c[v + RAD + dy], acc[v]);
    }
  } else {                                     // star arm off the y axis: dy = 0 only
    const acc_t wt = w[widx(dz, 0, dx)];
#pragma unroll
    for (int v = 0; v < V; ++v) acc[v] = fma(wt, col(v), acc[v]);
  }
}

// The strip's V outputs: acc[v] = all the stencil's terms, with `cols(dz, dx)` the column accessor
// (as `col` of strip) of offset (dz, dx); 2D: dz = 0.
template <typename W, typename Cols>
__device__ __forceinline__ void sums(acc_t (&acc)[V], const W& w, const Cols& cols) {
#pragma unroll
  for (int v = 0; v < V; ++v) acc[v] = 0;
#pragma unroll
  for (int dz = (DIMS == 3 ? -RAD : 0); dz <= (DIMS == 3 ? RAD : 0); ++dz)
#pragma unroll
    for (int dx = -RAD; dx <= RAD; ++dx) strip(acc, w, cols(dz, dx), dz, dx);
}

// Write a finished strip into `plane` (ny x nx, x fastest) at column gx from row gy: the points
// inside the domain, rounded to storage.
__device__ __forceinline__ void write_strip(real* plane, const acc_t (&acc)[V], int gy, int gx, int ny, int nx) {
  if (gx >= nx) return;
  real* p = plane + (size_t)gy * nx + gx;   // one 64-bit address, then a row's stride per point
#pragma unroll
  for (int v = 0; v < V; ++v, p += nx)
    if (gy + v < ny) *p = to_real(acc[v]);
}
