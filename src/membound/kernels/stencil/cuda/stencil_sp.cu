// 2D stencils on 2:4-sparse tensor cores (mma.sp, the SPIDER / SparStencil role) with kernel fusion:
// one launch applies the stencil fused over t steps (radius RF = t*r) once. The fused weights are
// the sparse operand A (16 x K, rows = 16 consecutive output x), permuted and padded on the host so
// that it is 1:2 (TF32) or 2:4 (f16) structured (membound.model.sparse24); the data are B (K x 8,
// columns = 8 consecutive output y): K slot kk of fragment f loads in[y+j+dy, x0+u], its (dy, u)
// from the host's offset table (3D: stencil_sp3.cu; what both share: stencil_sp.cuh).
// PTX ISA 9.7.14.6 (mma.sp::ordered_metadata, indices ascending):
//   PREC 32: mma.sp m16n8k16 .tf32 (fp32 storage, operands rounded with cvt.rna.tf32.f32), fp32 acc;
//   PREC 16: mma.sp m16n8k32 .f16 (fp16 storage), fp32 accumulate, rounded to fp16 when stored.
// Fragments: A (4 x b32 per lane) and metadata (b32, sparsity selector 0: lanes 4g, 4g+1 give it)
// packed per lane on the host (kernels/stencil_sp.py); B from shared memory through the offsets;
// D: lane (g, q) holds D(g, 2q..2q+1) and D(g+8, 2q..2q+1).
// Macros: RF, PREC, NX (16-wide tiles per warp along x, sharing each A fragment), WX, WY (warps along
// x, y), XO and LXT (the tile's column of x offset u = 0 and its columns), PITCH (shared row pitch,
// elements), NOFF (B offsets per lane: 4 or 8, 1 with RUNS), NFRAG (fragments), NFS (the first NFS
// fragments copied to shared memory once per block, the rest read through L1, PF: each one ahead), RUNS (1: layout
// "runs" of sparse24, a lane's B elements one 16-byte load), MINB (blocks an SM). Field (ny, nx), x
// fastest, periodic.

#ifndef PF
#define PF 1   // fragment f + 1 loaded before f's MMAs: hides the latency of fragments read through L1
#endif

#include "stencil_sp.cuh"

// One fragment's registers of a lane: A, metadata, B offsets (elements from the lane's base).
struct Frag {
  uint4 a;
  unsigned e;
  int off[NOFF];
};

__device__ __forceinline__ Frag frag(const Tables& t, int f, int lane) {
  Frag r;
  r.a = t.a[f * 32 + lane];
  r.e = t.e[f * 32 + lane];
#pragma unroll
  for (int i = 0; i < NOFF; ++i) r.off[i] = t.o[(f * 32 + lane) * NOFF + i];
  return r;
}

// The NX tiles' MMAs of one fragment.
__device__ __forceinline__ void tile_mmas(float (*acc)[4], const Frag& fr, const real* base) {
#pragma unroll
  for (int n = 0; n < NX; ++n) {
    unsigned b[4];
    b_regs(b, base + 16 * n, fr.off);
    mma_sp(acc[n], fr.a, b, fr.e);
  }
}

// afrag[f*32 + lane], meta[f*32 + lane], offs[(f*32 + lane)*NOFF + r]: lane's A registers, metadata
// and B offsets (elements from its base in the tile) of fragment f.
#ifndef MINB
#define MINB 2   // blocks an SM the registers must allow
#endif
extern "C" __global__ void __launch_bounds__(32 * WX * WY, MINB)
stencil_sp(const real* __restrict__ in, real* __restrict__ out, const uint4* __restrict__ afrag,
           const unsigned* __restrict__ meta, const int* __restrict__ offs, int ny, int nx) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  real* tile = reinterpret_cast<real*>(smem_raw + NFS * 32 * (20 + 4 * NOFF));
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, q = lane & 3;
  const Tables tb = tables<NFS, NFS * 32 * NOFF>(smem_raw, afrag, meta, offs);   // fragments 0 .. NFS - 1
  const Tables tg = {afrag, meta, offs};                                            // NFS .. NFRAG - 1
  const int y0 = (warp / WX) * 8, x0 = (warp % WX) * NX * 16;
  const int gx0 = blockIdx.x * BX, gy0 = blockIdx.y * BY;
  const real* base = tile + (y0 + g + RF) * PITCH + x0 + XO;   // B column j = g: output row y0 + g
  float acc[NX][4];
#pragma unroll
  for (int n = 0; n < NX; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;

  const bool inside = gx0 >= XO && gx0 - XO + LXT <= nx;   // the tile's columns need no wrap
  for (int y = warp; y < LYT; y += NW)                        // a warp per row, lanes along x: coalesced
    tile_row<LXT>(tile + y * PITCH, in + (size_t)wrap(gy0 - RF + y, ny) * nx, gx0 - XO, nx, inside, lane);
  __syncthreads();
#pragma unroll 1
  for (int f = 0; f < NFS; ++f) tile_mmas(acc, frag(tb, f, lane), base);
  if (NFS < NFRAG) {
#if PF
    Frag cur = frag(tg, NFS, lane);   // fragment f; f + 1's loaded before f's MMAs
#pragma unroll 1
    for (int f = NFS; f < NFRAG; ++f) {
      const Frag next = frag(tg, min(f + 1, NFRAG - 1), lane);
      tile_mmas(acc, cur, base);
      cur = next;
    }
#else
#pragma unroll 1
    for (int f = NFS; f < NFRAG; ++f) tile_mmas(acc, frag(tg, f, lane), base);
#endif
  }
#pragma unroll
  for (int n = 0; n < NX; ++n) {
#pragma unroll
    for (int h = 0; h < 4; ++h) {      // D(i, j): i = g + 8 (h >> 1) along x, j = 2q + (h & 1) along y
      const int gx = gx0 + x0 + 16 * n + g + 8 * (h >> 1), gy = gy0 + y0 + 2 * q + (h & 1);
      if (gx < nx && gy < ny) out[(size_t)gy * nx + gx] = to_real(acc[n][h]);
    }
  }
}
