// 3D stencils on 2:4-sparse tensor cores (mma.sp) with kernel fusion, streaming along z in the order
// of stencil_tc3.cu: a block owns a BY x BX column of the domain over BZ output planes and reads each
// input plane once (into registers during the previous plane's MMAs, then into the shared tile).
// Input plane z feeds output plane z - dz for every dz of the fused kernel, so a warp keeps 2 RF + 1
// planes of accumulators (acc[j] = output plane z - RF + j, j = RF - dz); after each input plane
// acc[0] is complete, is written, and the window shifts down by one plane.
// The operands are stencil_sp.cu's (the fused weights as the 1:2 / 2:4 structured A, the field as B
// through per-lane offsets), with the fragments GROUPED: the fragments of different planes dz whose
// B slots load the same inputs (dy, u) of their plane form one group, so one B load serves every
// member (a box stencil: all 2 RF + 1 planes). TABLE (a macro, the stencil's structure unrolled as in
// stencil_tc3.cu): G(g, mask, f0) per group g, bit j of mask its member of plane dz = RF - j, the
// members fragments f0, f0 + 1, ... in ascending j; offs[(g*32 + lane)*NOFF + i]: the group's B
// offsets of the lane (elements from its base in the tile); afrag, meta: per fragment, as in 2D.
// Macros: stencil_sp.cu's (RF, PREC, NX, WX, WY, PITCH, NOFF, NFRAG, FSM, RUNS, MINB), NGRP (groups),
// TABLE and BZ (output planes per block).

#define NJ (2 * RF + 1)
#ifndef MINB
#define MINB 2
#endif

#include "stencil_sp.cuh"

#define LROWS ((LYT + NW - 1) / NW)   // tile rows a warp copies
#define LCOLS ((LXT + 31) / 32)       // tile columns a lane copies in each

// A lane's elements of one plane's tile (rows warp + NW i, columns lane + 32 j), read into registers.
__device__ __forceinline__ void plane_regs(real (&v)[LROWS][LCOLS], const real* plane, int warp, int lane, int gx0,
                                           int gy0, int ny, int nx) {
#pragma unroll
  for (int i = 0; i < LROWS; ++i) {
    const int y = warp + NW * i;
    if (y >= LYT) break;
    const real* row = plane + (size_t)wrap(gy0 - RF + y, ny) * nx;
#pragma unroll
    for (int j = 0; j < LCOLS; ++j) {
      const int x = lane + 32 * j;
      if (x < LXT) v[i][j] = operand(row[wrap(gx0 - XO + x, nx)]);
    }
  }
}

__device__ __forceinline__ void regs_tile(real* tile, const real (&v)[LROWS][LCOLS], int warp, int lane) {
#pragma unroll
  for (int i = 0; i < LROWS; ++i) {
    const int y = warp + NW * i;
    if (y >= LYT) break;
#pragma unroll
    for (int j = 0; j < LCOLS; ++j) {
      const int x = lane + 32 * j;
      if (x < LXT) tile[y * PITCH + x] = v[i][j];
    }
  }
}

// One group: the NX B fragments loaded once, then each member's A and metadata and its NX MMAs into
// its plane's accumulators (acc[j] for bit j of MASK), where that output plane is the block's (live).
template <int MASK, int F0>
__device__ __forceinline__ void group(float (&acc)[NJ][NX][4], const Tables& t, const int* off_g, const real* base,
                                      int live, int lane) {
  int off[NOFF];
#pragma unroll
  for (int i = 0; i < NOFF; ++i) off[i] = off_g[lane * NOFF + i];
  unsigned b[NX][4];
#pragma unroll
  for (int n = 0; n < NX; ++n) b_regs(b[n], base + 16 * n, off);
  int f = F0;
#pragma unroll
  for (int j = 0; j < NJ; ++j) {
    if (!((MASK >> j) & 1)) continue;
    const uint4 a = t.a[f * 32 + lane];
    const unsigned e = t.e[f * 32 + lane];
    ++f;
    if ((live >> j) & 1) {
#pragma unroll
      for (int n = 0; n < NX; ++n) mma_sp(acc[j][n], a, b[n], e);
    }
  }
}

extern "C" __global__ void __launch_bounds__(32 * WX * WY, MINB)
stencil_sp3(const real* __restrict__ in, real* __restrict__ out, const uint4* __restrict__ afrag,
            const unsigned* __restrict__ meta, const int* __restrict__ offs, int nz, int ny, int nx) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  real* tile = reinterpret_cast<real*>(smem_raw + (NFRAG * 32 * 20 + NGRP * 32 * 4 * NOFF) * FSM);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, q = lane & 3;
  const Tables tb = tables<NGRP * 32 * NOFF>(smem_raw, afrag, meta, offs);
  const int y0 = (warp / WX) * 8, x0 = (warp % WX) * NX * 16;
  const int gx0 = blockIdx.x * BX, gy0 = blockIdx.y * BY, z0 = blockIdx.z * BZ, z1 = min(z0 + BZ, nz);
  const real* base = tile + (y0 + g + RF) * PITCH + x0 + XO;   // B column j = g: output row y0 + g
  float acc[NJ][NX][4];
#pragma unroll
  for (int j = 0; j < NJ; ++j)
#pragma unroll
    for (int n = 0; n < NX; ++n) acc[j][n][0] = acc[j][n][1] = acc[j][n][2] = acc[j][n][3] = 0.f;

  real v[LROWS][LCOLS];
  plane_regs(v, in + (size_t)wrap(z0 - RF, nz) * ny * nx, warp, lane, gx0, gy0, ny, nx);
#pragma unroll 1
  for (int z = z0 - RF; z < z1 + RF; ++z) {
    __syncthreads();   // the previous plane's readers are done
    regs_tile(tile, v, warp, lane);
    __syncthreads();
    if (z + 1 < z1 + RF) plane_regs(v, in + (size_t)wrap(z + 1, nz) * ny * nx, warp, lane, gx0, gy0, ny, nx);
    // acc[j] holds output plane z - RF + j: live when inside [z0, z1)
    const int lo = z0 - (z - RF), hi = z1 - (z - RF);
    const int live = ((1 << NJ) - 1) & ~((1 << max(lo, 0)) - 1) & ((1 << min(max(hi, 0), NJ)) - 1);
#define G(gi, mask, f0) group<mask, f0>(acc, tb, tb.o + (gi) * 32 * NOFF, base, live, lane);
    TABLE
#undef G
    const int zo = z - RF;   // acc[0] is complete
    if (zo >= z0) {
#pragma unroll
      for (int n = 0; n < NX; ++n)
#pragma unroll
        for (int h = 0; h < 4; ++h) {   // D(i, j): i = g + 8 (h >> 1) along x, j = 2q + (h & 1) along y
          const int gx = gx0 + x0 + 16 * n + g + 8 * (h >> 1), gy = gy0 + y0 + 2 * q + (h & 1);
          if (gx < nx && gy < ny) out[((size_t)zo * ny + gy) * nx + gx] = to_real(acc[0][n][h]);
        }
    }
#pragma unroll
    for (int j = 0; j + 1 < NJ; ++j)
#pragma unroll
      for (int n = 0; n < NX; ++n)
#pragma unroll
        for (int h = 0; h < 4; ++h) acc[j][n][h] = acc[j + 1][n][h];
#pragma unroll
    for (int n = 0; n < NX; ++n) acc[NJ - 1][n][0] = acc[NJ - 1][n][1] = acc[NJ - 1][n][2] = acc[NJ - 1][n][3] = 0.f;
  }
}
