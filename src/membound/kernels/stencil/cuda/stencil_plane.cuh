// What the z-streaming kernels (stencil_cc3.cu, stencil_tc3.cu) share: loading one input plane's tile
// with its halo (periodic wrap) into registers, then into shared memory, so the next plane's loads are
// in flight while the current one is computed. Set TILE_W x TILE_H (the tile with halo), TILE_PITCH
// (its row pitch in shared memory), HALO and NTHREADS, and define wrap() and `real` (stencil_real.cuh),
// before including it; TILE_VALUE(v), what the tile holds of an input value v (default: v itself).
// PLANE_VEC 1 (TILE_VALUE itself, TILE_PITCH = TILE_W a multiple of VW elements, the tile's first
// column gx0 - HALO - XO a multiple of VW): whole 16-byte vectors, each wrapped as one where nx is a
// multiple of VW (else assembled element by element), at offsets in the plane that plane_offsets wraps
// once per block (the rows and columns of a tile are the same in every plane). A kernel keeps
// `stage_t r[NSTAGE]` in flight; or, PLANE_ASYNC defined (PLANE_VEC and stencil_async.cuh), has
// fetch_async copy planes by cp.async.
#pragma once

#ifndef TILE_VALUE
#define TILE_VALUE(v) (v)
#endif

#define NLOAD ((TILE_W * TILE_H + NTHREADS - 1) / NTHREADS)

#if PLANE_VEC
typedef uint4 stage_t;
#define NVEC (TILE_W / VW * TILE_H)
#define NSTAGE ((NVEC + NTHREADS - 1) / NTHREADS)
static_assert(TILE_PITCH == TILE_W && TILE_W % VW == 0, "PLANE_VEC: rows of whole vectors, no gap");

// This thread's vectors of the tile: their offsets (wrapped row * nx + wrapped column) in a plane.
__device__ __forceinline__ void plane_offsets(int (&off)[NSTAGE], int gy0, int gx0, int ny, int nx) {
#pragma unroll
  for (int j = 0; j < NSTAGE; ++j) {
    const int i = threadIdx.x + j * NTHREADS;
    off[j] = i < NVEC ? wrap(gy0 - HALO + i / (TILE_W / VW), ny) * nx +
                            wrap(gx0 - HALO - XO + i % (TILE_W / VW) * VW, nx) : 0;
  }
}

__device__ __forceinline__ void fetch(stage_t (&r)[NSTAGE], const real* __restrict__ in, int gz,
                                      const int (&off)[NSTAGE], int gy0, int gx0, int ny, int nx) {
  const real* plane = in + (size_t)gz * ny * nx;
  if (nx % VW == 0) {   // tested once a plane; a thread past the tile loads the plane's first vector (off 0)
#pragma unroll
    for (int j = 0; j < NSTAGE; ++j) r[j] = __ldg(reinterpret_cast<const uint4*>(plane + off[j]));
    return;
  }
  const int x0 = gx0 - HALO - XO;
#pragma unroll
  for (int j = 0; j < NSTAGE; ++j) {
    const int i = threadIdx.x + j * NTHREADS;
    if (i < NVEC) {
      const real* row = plane + (size_t)wrap(gy0 - HALO + i / (TILE_W / VW), ny) * nx;
      const int x = x0 + i % (TILE_W / VW) * VW;
      union { uint4 v; real e[VW]; } u;
#pragma unroll
      for (int v = 0; v < VW; ++v) u.e[v] = __ldg(row + wrap(x + v, nx));
      r[j] = u.v;
    }
  }
}

__device__ __forceinline__ void put(const stage_t (&r)[NSTAGE], real* tile) {
#pragma unroll
  for (int j = 0; j < NSTAGE; ++j) {
    const int i = threadIdx.x + j * NTHREADS;
    if (i < NVEC) *reinterpret_cast<uint4*>(tile + i * VW) = r[j];
  }
}

#ifdef PLANE_ASYNC
// The same plane copied by cp.async straight into `tile` (no registers), as one commit group of this
// thread; `live` false: an empty group (the kernel's waits count one group per plane).
__device__ __forceinline__ void fetch_async(real* tile, const real* __restrict__ in, int gz,
                                            const int (&off)[NSTAGE], int gy0, int gx0, int ny, int nx, bool live) {
  if (live) {
    const real* plane = in + (size_t)gz * ny * nx;
    if (nx % VW == 0) {   // tested once a plane
#pragma unroll
      for (int j = 0; j < NSTAGE; ++j)   // through L1: .cg reads each L2 sector twice (stencil_stream)
        if (threadIdx.x + j * NTHREADS < NVEC)
          copy_async16_l1(tile + (threadIdx.x + j * NTHREADS) * VW, plane + off[j]);
    } else {
      const int x0 = gx0 - HALO - XO;
#pragma unroll
      for (int j = 0; j < NSTAGE; ++j) {
        const int i = threadIdx.x + j * NTHREADS;
        if (i >= NVEC) break;
        const real* row = plane + (size_t)wrap(gy0 - HALO + i / (TILE_W / VW), ny) * nx;
        const int x = x0 + i % (TILE_W / VW) * VW;
#pragma unroll
        for (int v = 0; v < VW; ++v) copy_async(tile + i * VW + v, row + wrap(x + v, nx));
      }
    }
  }
  async_commit();
}
#endif
#else
typedef real stage_t;
#define NSTAGE NLOAD

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
#endif
