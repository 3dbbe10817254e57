// 3D stencils on tensor cores with kernel fusion in every precision (ELEM; stencil_mma.cuh: fp64
// m8n8k4, fp32 TF32 m16n8k8, fp16 m16n8k16), streaming along z: one launch applies the fused stencil
// K^(t) (radius RF = t*r) once. The transformation is stencil_tc.cu's (row decomposition: per nonzero
// row (dz, dy) of K^(t) with nonzero dx in [a, b], an m x 8 output tile O gets O += A_c B_c over
// ceil((8 + b - a) / MMA_K) k-chunks c, A the input rows y+dy at columns x0+a+MMA_K c+k, B the banded
// Toeplitz slice of that weight row). What differs is the order:
// a block owns a BY x BX column of the domain over BZ output planes and reads each input plane once
// (tile plus halo RF in x and y, periodic wrap, into one of two shared buffers while the other is
// computed). Input plane z feeds output planes z - dz for every dz: the warp keeps 2*RF+1 planes of
// accumulators (acc[j] = output plane z - RF + j, j = RF - dz), so one A fragment serves every row of
// K^(t) with the same (dy, a, nk): the host groups the rows so (TABLE, below), and after each input
// plane acc[0] is complete, is written, and the accumulators shift down by one plane.
// Macros: RF, NT (m x 8 tiles per warp along x, sharing each B fragment), WX, WY (warps), BZ, PITCH
// (shared row pitch in elements, stencil_plan.PITCH_MOD), TWIN, ELEM (stencil_mma.cuh) and TABLE: a list of
// G(dy, a, nk, mask, f0), one per group of rows; bit j of mask marks the row dz = RF - j, and the
// B fragment of that row's chunk c is f0 + c * popcount(mask) + (rank of bit j in mask).

#include "stencil_mma.cuh"

#define BX (8 * NT * WX)
#define BY (MMA_M * WY)
#define LYT (BY + 2 * RF)
#define LXT (BX + 2 * RF + MMA_K - 1)   // + MMA_K - 1: the zero-weight columns of the last k-chunk
#define PLANE (LYT * PITCH)
#define NTHREADS (32 * WX * WY)
#define NJ (2 * RF + 1)
#define TILE_W LXT
#define TILE_H LYT
#define TILE_PITCH PITCH
#define HALO RF
#define TILE_VALUE(v) operand(v)

#include "stencil_plane.cuh"

__device__ constexpr int popcount(int m) { return m ? (m & 1) + popcount(m >> 1) : 0; }

// One group of rows: for each k-chunk, the NT A fragments are loaded once and serve every row
// (accumulator plane j in mask) whose output plane is one of this block's (bit j of live).
template <int DY, int A0, int NK, int MASK, int F0>
__device__ __forceinline__ void group(acc_t (&acc)[NJ][NT][NACC], const real* tile, const bfrag_t* bs,
                                      int live) {
  constexpr int CNT = popcount(MASK);
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int c = 0; c < NK; ++c) {
    afrag_t a[NT];
#pragma unroll
    for (int n = 0; n < NT; ++n) a[n] = load_a(tile + DY * PITCH + A0 + MMA_K * c + n * 8);
    int i = 0;
#pragma unroll
    for (int j = 0; j < NJ; ++j) {
      if (!((MASK >> j) & 1)) continue;
      const bfrag_t b = bs[(F0 + c * CNT + i++) * 32 + lane];
      if ((live >> j) & 1) {
#pragma unroll
        for (int n = 0; n < NT; ++n) mma(acc[j][n], a[n], b);
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(NTHREADS, MINB)
stencil_tc3(const real* __restrict__ in, real* __restrict__ out, const bfrag_t* __restrict__ bfrag,
            int nfrag, int nz, int ny, int nx) {
  extern __shared__ __align__(16) unsigned char smem_bytes[];   // two plane buffers, then the B fragments
  real* smem = reinterpret_cast<real*>(smem_bytes);
  bfrag_t* bs = reinterpret_cast<bfrag_t*>(smem_bytes + sizeof(real) * 2 * PLANE);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  for (int i = tid; i < nfrag * 32; i += NTHREADS) bs[i] = bfrag[i];
  const int y0 = (warp / WX) * MMA_M, x0 = (warp % WX) * NT * 8;
  const int gx0 = blockIdx.x * BX, gy0 = blockIdx.y * BY, z0 = blockIdx.z * BZ;
  const int z1 = min(z0 + BZ, nz);
  // this lane's A element of tile 0, chunk 0, at dy = 0, a = 0: row y0 + lane/4, column x0 + KOFF
  const int aoff = (y0 + (lane >> 2) + RF) * PITCH + x0 + RF + KOFF(lane);

  acc_t acc[NJ][NT][NACC];
#pragma unroll
  for (int j = 0; j < NJ; ++j)
#pragma unroll
    for (int n = 0; n < NT; ++n)
#pragma unroll
      for (int i = 0; i < NACC; ++i) acc[j][n][i] = 0;

  real r[NLOAD];
  fetch(r, in, wrap(z0 - RF, nz), gy0, gx0, ny, nx);
#pragma unroll 1
  for (int z = z0 - RF; z < z1 + RF; ++z) {
    real* tile = smem + ((z - z0 + RF) & 1) * PLANE;
    put(r, tile);
    __syncthreads();   // tile is complete; the other buffer's readers are done (previous plane)
    if (z + 1 < z1 + RF) fetch(r, in, wrap(z + 1, nz), gy0, gx0, ny, nx);   // in flight meanwhile
    // accumulator j holds output plane z - RF + j: live when inside [z0, z1)
    const int lo = z0 - (z - RF), hi = z1 - (z - RF);
    const int live = ((1 << NJ) - 1) & ~((1 << max(lo, 0)) - 1) & ((1 << min(max(hi, 0), NJ)) - 1);
    const real* t = tile + aoff;
#define G(dy, a, nk, mask, f0) group<dy, a, nk, mask, f0>(acc, t, bs, live);
    TABLE
#undef G
    const int zo = z - RF;   // acc[0] is complete
    if (zo >= z0) {
#pragma unroll
      for (int n = 0; n < NT; ++n)
        store_tile(out + (size_t)zo * ny * nx, acc[0][n], gy0 + y0 + (lane >> 2), gx0 + x0 + n * 8 + 2 * (lane & 3),
                   ny, nx);
    }
#pragma unroll
    for (int j = 0; j + 1 < NJ; ++j)
#pragma unroll
      for (int n = 0; n < NT; ++n)
#pragma unroll
        for (int i = 0; i < NACC; ++i) acc[j][n][i] = acc[j + 1][n][i];
#pragma unroll
    for (int n = 0; n < NT; ++n)
#pragma unroll
      for (int i = 0; i < NACC; ++i) acc[NJ - 1][n][i] = 0;
  }
}
