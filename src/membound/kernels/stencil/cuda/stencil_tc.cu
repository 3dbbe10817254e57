// Stencils on tensor cores with kernel fusion, in every precision (ELEM; stencil_mma.cuh: fp64 mma.sync
// m8n8k4 f64, fp32 m16n8k8 tf32, fp16 m16n8k16 f16, both accumulating in fp32): one launch applies the
// fused stencil K^(t) (radius RF = t*r) once. Transformation (row decomposition, as TCStencil):
// for every nonzero row (dz, dy) of the fused kernel, with nonzero dx in [a, b], an m x 8 output
// tile O (rows y, cols x) gets O += A_c x B_c over k-chunks c of MMA_K columns, where A is the input
// rows y+dy at columns x0+a+MMA_K c+k (m x k, from shared memory) and B the banded Toeplitz slice
// B[k][j] = W(dz, dy, a+MMA_K c+k-j) (zero outside [a, b]), precomputed per lane on the host
// (geometry.tc_rows; fp16: a + RF even, so that a lane's f16x2 words are aligned).
// Macros: DIMS, RF, NT (m x 8 tiles per warp along x, sharing each B fragment), WX, WY (warps),
// PITCH (shared row pitch in elements, stencil_plan.PITCH_MOD: conflict-free A loads), TWIN
// (stencil_mma.cuh), ELEM.
// The 3D stencils at depth > 1 use stencil_tc3.cu (streaming along z) instead.
// Field (nz, ny, nx), x fastest, periodic; a block handles a BY x BX tile of one z plane and
// streams the 2*RF+1 input planes (3D) through one shared-memory tile.

#include "stencil_mma.cuh"

#define BX (8 * NT * WX)
#define BY (MMA_M * WY)
#define LYT (BY + 2 * RF)
#define LXT (BX + 2 * RF + MMA_K - 1)   // + MMA_K - 1: the zero-weight columns of the last k-chunk
#define RZ (DIMS == 3 ? RF : 0)

// rows[i] = (dz, dy, a, nk) sorted by dz; bfrag[f*32 + lane] = lane's B fragment of fragment f.
extern "C" __global__ void __launch_bounds__(32 * WX * WY)
stencil_tc(const real* __restrict__ in, real* __restrict__ out, const int4* __restrict__ rows,
           int nrows, const bfrag_t* __restrict__ bfrag, int nfrag, int nz, int ny, int nx) {
  extern __shared__ __align__(16) unsigned char smem[];
  real* tile = reinterpret_cast<real*>(smem);
  bfrag_t* bs = reinterpret_cast<bfrag_t*>(smem + sizeof(real) * LYT * PITCH);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  for (int i = tid; i < nfrag * 32; i += blockDim.x) bs[i] = bfrag[i];
  const int y0 = (warp / WX) * MMA_M, x0 = (warp % WX) * NT * 8;
  const int gx0 = blockIdx.x * BX, gy0 = blockIdx.y * BY, gz = blockIdx.z;
  const bool inside = gx0 >= RF && gx0 - RF + LXT <= nx;   // the tile's columns need no wrap
  acc_t acc[NT][NACC];
#pragma unroll
  for (int n = 0; n < NT; ++n)
#pragma unroll
    for (int i = 0; i < NACC; ++i) acc[n][i] = 0;

  int r = 0, f = 0;
#pragma unroll 1
  for (int dz = -RZ; dz <= RZ; ++dz) {
    __syncthreads();
    const real* plane = in + (size_t)wrap(gz + dz, nz) * ny * nx;
    for (int y = warp; y < LYT; y += WX * WY)   // a warp per row, lanes along x: coalesced
      tile_row<LXT>(tile + y * PITCH, plane + (size_t)wrap(gy0 - RF + y, ny) * nx, gx0 - RF, nx, inside, lane);
    __syncthreads();
#pragma unroll 1
    for (; r < nrows; ++r) {
      const int4 row = rows[r];
      if (row.x != dz) break;
      const real* arow = tile + (y0 + (lane >> 2) + RF + row.y) * PITCH + x0 + RF + row.z + KOFF(lane);
#pragma unroll 2
      for (int c = 0; c < row.w; ++c, ++f) {
        const bfrag_t b = bs[f * 32 + lane];
#pragma unroll
        for (int n = 0; n < NT; ++n) mma(acc[n], load_a(arow + n * 8 + MMA_K * c), b);
      }
    }
  }
  real* plane = out + (size_t)gz * ny * nx;
#pragma unroll
  for (int n = 0; n < NT; ++n)
    store_tile(plane, acc[n], gy0 + y0 + (lane >> 2), gx0 + x0 + n * 8 + 2 * (lane & 3), ny, nx);
}
