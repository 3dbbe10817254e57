// Stencils on 2:4-sparse tensor cores (mma.sp, the SPIDER / SparStencil role) with kernel fusion:
// one launch applies the stencil fused over t steps (radius RF = t*r) once. The fused weights are
// the sparse operand A (16 x K, rows = 16 consecutive output x), permuted and padded on the host so
// that it is 1:2 (TF32) or 2:4 (f16) structured (membound.model.sparse24); the data are B (K x 8,
// columns = 8 consecutive output y): K slot kk of fragment f loads in[z+dz, y+j+dy, x0+u], its
// (dz, dy, u) from the host's offset table. PTX ISA 9.7.14.6 (mma.sp::ordered_metadata, indices ascending):
//   PREC 32: mma.sp m16n8k16 .tf32 (fp32 storage, operands rounded with cvt.rna.tf32.f32), fp32 acc;
//   PREC 16: mma.sp m16n8k32 .f16 (fp16 storage), fp32 accumulate, rounded to fp16 when stored.
// Fragments: A (4 x b32 per lane) and metadata (b32, sparsity selector 0: lanes 4g, 4g+1 give it)
// packed per lane on the host (kernels/stencil_sp.py); B from shared memory through the offsets;
// D: lane (g, q) holds D(g, 2q..2q+1) and D(g+8, 2q..2q+1).
// Macros: DIMS, RF, PREC, NX (16-wide tiles per warp along x, sharing each A fragment), WX, WY
// (warps along x, y), BZ (3D: output planes per block), PITCH (shared row pitch, elements), NOFF (B offsets per lane: 4 or 8, 1 with
// RUNS), NFRAG (fragments), FSM (1: the fragments copied to shared memory once per block; 0: read
// through L1, PF: each one ahead), RUNS (1: layout "runs" of sparse24, a lane's B elements one 16-byte load),
// DB (3D: the next plane read into registers while this one's MMAs run), MINB (blocks an SM).
// Field (nz, ny, nx), x fastest, periodic; a block streams the 2*RF+BZ planes of its BZ output planes
// (3D) through one tile.

#define BX (16 * NX * WX)
#define BY (8 * WY)
#define LYT (BY + 2 * RF)
#ifndef RUNS
#define RUNS 0
#endif
#define RUNW (RUNS ? (PREC == 32 ? 4 : 8) : 0)   // layout "runs": a lane's B elements, one aligned vector
#define XO (RF + RUNW)                          // the tile column of x offset u = 0 (runs start up to RUNW-1 left)
#define LXT (BX + 2 * XO)
#define RZ (DIMS == 3 ? RF : 0)
#ifndef PF
#define PF (!FSM)   // fragment f + 1 loaded before f's MMAs: hides the latency of fragments read through L1
#endif
#ifndef BZ
#define BZ 1                                    // output planes per block (3D), sharing each input plane
#endif
#ifndef DB
#define DB 0   // 1: plane p + 1 read into registers during plane p's MMAs, stored to the tile after them
#endif
#define NW (WX * WY)
#define LROWS ((LYT + NW - 1) / NW)             // tile rows a warp copies
#define LCOLS ((LXT + 31) / 32)                 // tile columns a lane copies in each

// real (fp16: raw bits, conversions in PTX), to_real, wrap and the tf32 operand:
#define ELEM (PREC / 8)
#include "stencil_real.cuh"

__device__ __forceinline__ unsigned b_reg(const real* p, const int* off, int r) {
#if PREC == 32
  return __float_as_uint(p[off[r]]);
#else
  return (unsigned)p[off[2 * r]] | ((unsigned)p[off[2 * r + 1]] << 16);   // low half: the lower k
#endif
}

__device__ __forceinline__ void b_regs(unsigned* b, const real* p, const int* off) {
#if RUNS && PREC == 32        // slots q, q+4, q+8, q+12: four consecutive floats, 16-byte aligned
  const float4 v = *reinterpret_cast<const float4*>(p + off[0]);
  b[0] = __float_as_uint(v.x); b[1] = __float_as_uint(v.y); b[2] = __float_as_uint(v.z); b[3] = __float_as_uint(v.w);
#elif RUNS                    // slots 8r+2q, 8r+2q+1: eight consecutive halves, 16-byte aligned
  const uint4 v = *reinterpret_cast<const uint4*>(p + off[0]);
  b[0] = v.x; b[1] = v.y; b[2] = v.z; b[3] = v.w;
#else
#pragma unroll
  for (int r = 0; r < 4; ++r) b[r] = b_reg(p, off, r);
#endif
}

__device__ __forceinline__ void mma_sp(float* d, const uint4& a, const unsigned* b, unsigned e) {
#if PREC == 32
  asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
               "{%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x0;"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e));
#else
  asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
               "{%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x0;"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e));
#endif
}

// One fragment's registers of a lane: A, metadata, B offsets (elements from the lane's base).
struct Frag {
  uint4 a;
  unsigned e;
  int off[NOFF];
};

__device__ __forceinline__ Frag frag(const uint4* s_a, const unsigned* s_e, const int* s_o, int f, int lane) {
  Frag r;
  r.a = s_a[f * 32 + lane];
  r.e = s_e[f * 32 + lane];
#pragma unroll
  for (int i = 0; i < NOFF; ++i) r.off[i] = s_o[(f * 32 + lane) * NOFF + i];
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

// afrag[f*32 + lane], meta[f*32 + lane], offs[(f*32 + lane)*NOFF + r]: lane's A registers, metadata
// and B offsets (elements from its base in the tile) of fragment f; planes[p]..planes[p+1]: the
// fragments of plane dz = p - RZ.
#ifndef MINB
#define MINB 2   // blocks an SM the registers must allow
#endif
extern "C" __global__ void __launch_bounds__(32 * WX * WY, MINB)
stencil_sp(const real* __restrict__ in, real* __restrict__ out, const uint4* __restrict__ afrag,
           const unsigned* __restrict__ meta, const int* __restrict__ offs, const int* __restrict__ planes,
           int nz, int ny, int nx) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  real* tile = reinterpret_cast<real*>(smem_raw + NFRAG * 32 * (20 + 4 * NOFF) * FSM);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, q = lane & 3;
#if FSM   // the fragments of every plane in shared memory, copied once per block
  uint4* s_a = reinterpret_cast<uint4*>(smem_raw);
  unsigned* s_e = reinterpret_cast<unsigned*>(s_a + NFRAG * 32);
  int* s_o = reinterpret_cast<int*>(s_e + NFRAG * 32);
  for (int i = tid; i < NFRAG * 32; i += blockDim.x) { s_a[i] = afrag[i]; s_e[i] = meta[i]; }
  for (int i = tid; i < NFRAG * 32 * NOFF; i += blockDim.x) s_o[i] = offs[i];
#else
  const uint4* s_a = afrag;
  const unsigned* s_e = meta;
  const int* s_o = offs;
#endif
  const int y0 = (warp / WX) * 8, x0 = (warp % WX) * NX * 16;
  const int gx0 = blockIdx.x * BX, gy0 = blockIdx.y * BY, gz0 = blockIdx.z * BZ;
  const real* base = tile + (y0 + g + RF) * PITCH + x0 + XO;   // B column j = g: output row y0 + g
  float acc[BZ][NX][4];
#pragma unroll
  for (int k = 0; k < BZ; ++k)
#pragma unroll
    for (int n = 0; n < NX; ++n) acc[k][n][0] = acc[k][n][1] = acc[k][n][2] = acc[k][n][3] = 0.f;

  // 3D: the block's BZ output planes gz0 + k share each input plane gz0 + p, used by output k with
  // dz = p - k: 2 RZ + BZ plane loads for BZ planes (2D: BZ 1, RZ 0, one plane).
#if DB
  real v[LROWS][LCOLS];
  plane_regs(v, in + (size_t)wrap(gz0 - RZ, nz) * ny * nx, warp, lane, gx0, gy0, ny, nx);
#endif
#pragma unroll 1
  for (int p = -RZ; p <= RZ + BZ - 1; ++p) {
    __syncthreads();
#if DB
    regs_tile(tile, v, warp, lane);
    __syncthreads();
    if (p < RZ + BZ - 1) plane_regs(v, in + (size_t)wrap(gz0 + p + 1, nz) * ny * nx, warp, lane, gx0, gy0, ny, nx);
#else
    const real* plane = in + (size_t)wrap(gz0 + p, nz) * ny * nx;
    for (int y = warp; y < LYT; y += WX * WY) {            // a warp per row, lanes along x: coalesced
      const real* row = plane + (size_t)wrap(gy0 - RF + y, ny) * nx;
      for (int x = lane; x < LXT; x += 32) tile[y * PITCH + x] = operand(row[wrap(gx0 - XO + x, nx)]);
    }
    __syncthreads();
#endif
#pragma unroll
    for (int k = 0; k < BZ; ++k) {
      const int dz = p - k;
      if (dz < -RZ || dz > RZ) continue;
      const int f0 = planes[dz + RZ], f1 = planes[dz + RZ + 1];
#if PF
      if (f0 == f1) continue;
      Frag cur = frag(s_a, s_e, s_o, f0, lane);   // fragment f; f + 1's loaded before f's MMAs
#pragma unroll 1
      for (int f = f0; f < f1; ++f) {
        const Frag next = frag(s_a, s_e, s_o, min(f + 1, f1 - 1), lane);
        tile_mmas(acc[k], cur, base);
        cur = next;
      }
#else
#pragma unroll 1
      for (int f = f0; f < f1; ++f) tile_mmas(acc[k], frag(s_a, s_e, s_o, f, lane), base);
#endif
    }
  }
#pragma unroll
  for (int k = 0; k < BZ; ++k) {
    const int gz = gz0 + k;
#pragma unroll
    for (int n = 0; n < NX; ++n) {
#pragma unroll
      for (int h = 0; h < 4; ++h) {      // D(i, j): i = g + 8 (h >> 1) along x, j = 2q + (h & 1) along y
        const int gx = gx0 + x0 + 16 * n + g + 8 * (h >> 1), gy = gy0 + y0 + 2 * q + (h & 1);
        if (gz < nz && gx < nx && gy < ny) out[((size_t)gz * ny + gy) * nx + gx] = to_real(acc[k][n][h]);
      }
    }
  }
}
