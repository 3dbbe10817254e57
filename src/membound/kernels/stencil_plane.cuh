// What the z-streaming kernels (stencil_cc3.cu, stencil_tc3.cu) share: loading one input plane's tile
// with its halo (periodic wrap) into registers, then into shared memory, so the next plane's loads are
// in flight while the current one is computed. Set TILE_W x TILE_H (the tile with halo), TILE_PITCH
// (its row pitch in shared memory), HALO and NTHREADS, and define wrap() and `real` (stencil_real.cuh),
// before including it; TILE_VALUE(v), what the tile holds of an input value v (default: v itself).
#pragma once

#ifndef TILE_VALUE
#define TILE_VALUE(v) (v)
#endif

#define NLOAD ((TILE_W * TILE_H + NTHREADS - 1) / NTHREADS)

// Issue the loads of input plane gz's tile (with halo) into registers.
__device__ __forceinline__ void fetch(real (&r)[NLOAD], const real* __restrict__ in, int gz, int gy0,
                                      int gx0, int ny, int nx) {
  const real* plane = in + (size_t)gz * ny * nx;
#pragma unroll
  for (int j = 0; j < NLOAD; ++j) {
    const int i = threadIdx.x + j * NTHREADS;
    if (i < TILE_W * TILE_H) {
      const int x = i % TILE_W, y = i / TILE_W;
      r[j] = __ldg(plane + (size_t)wrap(gy0 - HALO + y, ny) * nx + wrap(gx0 - HALO + x, nx));
    }
  }
}

__device__ __forceinline__ void put(const real (&r)[NLOAD], real* tile) {
#pragma unroll
  for (int j = 0; j < NLOAD; ++j) {
    const int i = threadIdx.x + j * NTHREADS;
#if TILE_PITCH == TILE_W
    if (i < TILE_W * TILE_H) tile[i] = TILE_VALUE(r[j]);
#else
    if (i < TILE_W * TILE_H) tile[i / TILE_W * TILE_PITCH + i % TILE_W] = TILE_VALUE(r[j]);
#endif
  }
}
