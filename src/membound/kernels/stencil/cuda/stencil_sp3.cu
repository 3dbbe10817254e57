// 3D stencils on 2:4-sparse tensor cores (mma.sp) with kernel fusion, streaming along z in the order
// of stencil_tc3.cu: a block owns a BY x BX column of the domain over BZ output planes and reads each
// input plane once (into registers during the previous plane's MMAs, then into the shared tile; with
// PAIR, two planes an iteration copied by cp.async into four shared buffers while the pair before is
// computed). Input plane z feeds output plane z - dz for every dz of the fused kernel, so a warp keeps
// 2 RF + 1 (+ PAIR) planes of accumulators (acc[j] = output plane z - RF + j, z the iteration's first
// input plane, j = RF - dz); after each iteration acc[0] (and acc[1]) are complete, are written, and
// the window shifts down by one (two) planes.
// The operands are stencil_sp.cu's (the fused weights as the 1:2 / 2:4 structured A, the field as B
// through per-lane offsets), with the fragments GROUPED: the fragments of different planes dz whose
// B slots load the same inputs (dy, u) of their plane form one group, so one B load serves every
// member (a box stencil: all 2 RF + 1 planes). TABLE (a macro, the stencil's structure unrolled as in
// stencil_tc3.cu): G(g, mask, f0) per group g, bit j of mask its member of plane dz = RF - j, the
// members fragments f0, f0 + 1, ... in ascending j; offs[(g*32 + lane)*NOFF + i]: the group's B
// offsets of the lane (elements from its base in the tile); afrag, meta: per fragment, as in 2D.
// Macros: stencil_sp.cu's (RF, PREC, NX, WX, WY, XO, LXT, PITCH, NOFF, NFRAG, RUNS, MINB), FSM (1: the fragment
// tables in shared memory, 0: read through L1), NGRP (groups), TABLE, BZ (output planes per block) and PAIR.

#define NJ (2 * RF + 1)
#ifndef MINB
#define MINB 2
#endif
#ifndef PAIR
#define PAIR 0   // 1: two input planes an iteration, each A fragment loaded once for both
#endif
#define NP (1 + PAIR)    // input planes an iteration
#define NA (NJ + PAIR)   // accumulator planes

#include "stencil_sp.cuh"
#include "stencil_async.cuh"

#define LROWS ((LYT + NW - 1) / NW)   // tile rows a warp copies
#define LCOLS ((LXT + 31) / 32)       // tile columns a lane copies in each
#define PLANE (LYT * PITCH)           // elements of one plane's tile

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
      if (x < LXT) v[i][j] = row[wrap(gx0 - XO + x, nx)];
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

// PAIR: one plane's tile copied asynchronously by cp.async; fp16 by pairs of elements (4 bytes) where
// the tile's first column gx0 - XO and nx are even (a pair never wraps), else through a register.
__device__ __forceinline__ void plane_async(real* tile, const real* plane, int warp, int lane, int gx0, int gy0,
                                            int ny, int nx) {
  const bool pairs = ELEM == 2 && XO % 2 == 0 && nx % 2 == 0;
  for (int y = warp; y < LYT; y += NW) {
    const real* row = plane + (size_t)wrap(gy0 - RF + y, ny) * nx;
    if (pairs)
      for (int x = 2 * lane; x < LXT; x += 64) copy_async4(tile + y * PITCH + x, row + wrap(gx0 - XO + x, nx));
    else
      for (int x = lane; x < LXT; x += 32) copy_async(tile + y * PITCH + x, row + wrap(gx0 - XO + x, nx));
  }
}

// A lane's B registers as the tensor cores see them (the tile holds storage values; fp32: rounded to tf32).
__device__ __forceinline__ void b_operand(unsigned* b, const real* p, const int* off) {
  b_regs(b, p, off);
#if PREC == 32
#pragma unroll
  for (int r = 0; r < 4; ++r) b[r] = __float_as_uint(operand(__uint_as_float(b[r])));
#endif
}

// One group on the iteration's NP input planes (plane p's tile at base + p PLANE): each plane's NX B
// fragments loaded once, then each member's A and metadata once for all planes, and its NX MMAs into
// acc[j + p] (bit j of MASK the member, p the plane) where that output plane is the block's (live).
template <int MASK, int F0>
__device__ __forceinline__ void group(float (&acc)[NA][NX][4], const Tables& t, const int* off_g, const real* base,
                                      int live, int lane) {
  int off[NOFF];
#pragma unroll
  for (int i = 0; i < NOFF; ++i) off[i] = off_g[lane * NOFF + i];
  unsigned b[NP][NX][4];
#pragma unroll
  for (int p = 0; p < NP; ++p)
#pragma unroll
    for (int n = 0; n < NX; ++n) b_operand(b[p][n], base + p * PLANE + 16 * n, off);
  int f = F0;
#pragma unroll
  for (int j = 0; j < NJ; ++j) {
    if (!((MASK >> j) & 1)) continue;
    const uint4 a = t.a[f * 32 + lane];
    const unsigned e = t.e[f * 32 + lane];
    ++f;
#pragma unroll
    for (int p = 0; p < NP; ++p)
      if ((live >> (j + p)) & 1) {
#pragma unroll
        for (int n = 0; n < NX; ++n) mma_sp(acc[j + p][n], a, b[p][n], e);
      }
  }
}

// Output plane zo from one accumulator plane.
__device__ __forceinline__ void store_plane(real* out, const float (&d)[NX][4], int zo, int gx0, int gy0, int x0,
                                            int y0, int g, int q, int ny, int nx) {
#pragma unroll
  for (int n = 0; n < NX; ++n)
#pragma unroll
    for (int h = 0; h < 4; ++h) {   // D(i, j): i = g + 8 (h >> 1) along x, j = 2q + (h & 1) along y
      const int gx = gx0 + x0 + 16 * n + g + 8 * (h >> 1), gy = gy0 + y0 + 2 * q + (h & 1);
      if (gx < nx && gy < ny) out[((size_t)zo * ny + gy) * nx + gx] = to_real(d[n][h]);
    }
}

// The window down by S planes, the S new ones zero.
template <int S>
__device__ __forceinline__ void shift(float (&acc)[NA][NX][4]) {
#pragma unroll
  for (int j = 0; j < NA; ++j)
#pragma unroll
    for (int n = 0; n < NX; ++n)
#pragma unroll
      for (int h = 0; h < 4; ++h) acc[j][n][h] = j + S < NA ? acc[j + S][n][h] : 0.f;
}

// The accumulator planes acc[j] (output plane z - RF + j, z the iteration's first input plane) inside [z0, z1).
__device__ __forceinline__ int live_planes(int z, int z0, int z1) {
  const int lo = z0 - (z - RF), hi = z1 - (z - RF);
  return ((1 << NA) - 1) & ~((1 << max(lo, 0)) - 1) & ((1 << min(max(hi, 0), NA)) - 1);
}

extern "C" __global__ void __launch_bounds__(32 * WX * WY, MINB)
stencil_sp3(const real* __restrict__ in, real* __restrict__ out, const uint4* __restrict__ afrag,
            const unsigned* __restrict__ meta, const int* __restrict__ offs, int nz, int ny, int nx) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  real* tile = reinterpret_cast<real*>(smem_raw + (NFRAG * 32 * 20 + NGRP * 32 * 4 * NOFF) * FSM);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, q = lane & 3;
  const Tables tb = tables<NFRAG * FSM, NGRP * 32 * NOFF * FSM>(smem_raw, afrag, meta, offs);
  const int y0 = (warp / WX) * 8, x0 = (warp % WX) * NX * 16;
  const int gx0 = blockIdx.x * BX, gy0 = blockIdx.y * BY, z0 = blockIdx.z * BZ, z1 = min(z0 + BZ, nz);
  const int goff = (y0 + g + RF) * PITCH + x0 + XO;   // B column j = g: output row y0 + g
  float acc[NA][NX][4];
  shift<NA>(acc);   // all zero
#define IN_PLANE(z) (in + (size_t)wrap(z, nz) * ny * nx)
#define G(gi, mask, f0) group<mask, f0>(acc, tb, tb.o + (gi) * 32 * NOFF, base, live, lane);

#if PAIR
  // iteration k computes on buffers 2k, 2k + 1 (mod 4) while iteration k + 1's planes are copied
  const int iters = (z1 - z0 + 2 * RF + 1) / 2;   // input planes z0 - RF .. z1 + RF - 1 (and one more if odd)
  plane_async(tile, IN_PLANE(z0 - RF), warp, lane, gx0, gy0, ny, nx);
  plane_async(tile + PLANE, IN_PLANE(z0 - RF + 1), warp, lane, gx0, gy0, ny, nx);
  async_commit();
#pragma unroll 1
  for (int k = 0; k < iters; ++k) {
    const int z = z0 - RF + 2 * k;
    real* buf = tile + ((2 * k) & 3) * PLANE;
    if (k + 1 < iters) {
      plane_async(tile + ((2 * k + 2) & 3) * PLANE, IN_PLANE(z + 2), warp, lane, gx0, gy0, ny, nx);
      plane_async(tile + ((2 * k + 3) & 3) * PLANE, IN_PLANE(z + 3), warp, lane, gx0, gy0, ny, nx);
    }
    async_commit();
    async_wait<1>();   // this iteration's copies (this thread's), then everyone's
    __syncthreads();
    const int live = live_planes(z, z0, z1);
    const real* base = buf + goff;
    TABLE
    if (z - RF >= z0) store_plane(out, acc[0], z - RF, gx0, gy0, x0, y0, g, q, ny, nx);
    if (z + 1 - RF >= z0 && z + 1 - RF < z1) store_plane(out, acc[1], z + 1 - RF, gx0, gy0, x0, y0, g, q, ny, nx);
    shift<2>(acc);
    __syncthreads();   // this iteration's buffers are read before iteration k + 2 copies into them
  }
#else
  const real* base = tile + goff;
  real v[LROWS][LCOLS];
  plane_regs(v, IN_PLANE(z0 - RF), warp, lane, gx0, gy0, ny, nx);
#pragma unroll 1
  for (int z = z0 - RF; z < z1 + RF; ++z) {
    __syncthreads();   // the previous plane's readers are done
    regs_tile(tile, v, warp, lane);
    __syncthreads();
    if (z + 1 < z1 + RF) plane_regs(v, IN_PLANE(z + 1), warp, lane, gx0, gy0, ny, nx);
    const int live = live_planes(z, z0, z1);
    TABLE
    if (z - RF >= z0) store_plane(out, acc[0], z - RF, gx0, gy0, x0, y0, g, q, ny, nx);   // acc[0] is complete
    shift<1>(acc);
  }
#endif
#undef G
#undef IN_PLANE
}
