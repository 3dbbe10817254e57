// FP64 stencils on tensor cores (mma.sync m8n8k4 f64) with kernel fusion: one launch applies the
// fused stencil K^(t) (radius RF = t*r) once. Transformation (row decomposition, as TCStencil):
// for every nonzero row (dz, dy) of the fused kernel, with nonzero dx in [a, b], an 8x8 output
// tile O (rows y, cols x) gets O += A_c x B_c over k-chunks c of 4 columns, where A is the input
// rows y+dy at columns x0+a+4c+k (8x4, from shared memory) and B the banded Toeplitz slice
// B[k][j] = W(dz, dy, a+4c+k-j) (zero outside [a, b]), precomputed per lane on the host.
// Macros: DIMS, RF, NT (8x8 tiles per warp along x, sharing each B fragment), WX, WY (warps),
// PITCH (shared row pitch in doubles, = 4 mod 16: conflict-free A loads), TWIN (stencil_mma.cuh).
// The 3D stencils at depth > 1 use stencil_tc3.cu (streaming along z) instead.
// Field (nz, ny, nx), x fastest, periodic; a block handles a BY x BX tile of one z plane and
// streams the 2*RF+1 input planes (3D) through one shared-memory tile.

#define BX (8 * NT * WX)
#define BY (8 * WY)
#define LYT (BY + 2 * RF)
#define LXT (BX + 2 * RF + 3)   // + 3: the zero-weight columns of the last k-chunk
#define RZ (DIMS == 3 ? RF : 0)

#include "stencil_mma.cuh"

// rows[i] = (dz, dy, a, nk) sorted by dz; bfrag[f*32 + lane] = lane's B element of fragment f.
extern "C" __global__ void __launch_bounds__(32 * WX * WY)
stencil_tc(const double* __restrict__ in, double* __restrict__ out, const int4* __restrict__ rows,
           int nrows, const double* __restrict__ bfrag, int nfrag, int nz, int ny, int nx) {
  extern __shared__ double smem[];
  double* tile = smem;
  double* bs = smem + LYT * PITCH;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  for (int i = tid; i < nfrag * 32; i += blockDim.x) bs[i] = bfrag[i];
  const int y0 = (warp / WX) * 8, x0 = (warp % WX) * NT * 8;
  const int gx0 = blockIdx.x * BX, gy0 = blockIdx.y * BY, gz = blockIdx.z;
  double acc[NT][2];
#pragma unroll
  for (int n = 0; n < NT; ++n) acc[n][0] = acc[n][1] = 0.0;

  int r = 0, f = 0;
#pragma unroll 1
  for (int dz = -RZ; dz <= RZ; ++dz) {
    __syncthreads();
    const double* plane = in + (size_t)wrap(gz + dz, nz) * ny * nx;
    for (int i = tid; i < LYT * LXT; i += blockDim.x) {
      const int x = i % LXT, y = i / LXT;
      tile[y * PITCH + x] = plane[(size_t)wrap(gy0 - RF + y, ny) * nx + wrap(gx0 - RF + x, nx)];
    }
    __syncthreads();
#pragma unroll 1
    for (; r < nrows; ++r) {
      const int4 row = rows[r];
      if (row.x != dz) break;
      const double* arow = tile + (y0 + (lane >> 2) + RF + row.y) * PITCH + x0 + RF + row.z + (lane & 3);
#pragma unroll 2
      for (int c = 0; c < row.w; ++c, ++f) {
        const double b = bs[f * 32 + lane];
#pragma unroll
        for (int n = 0; n < NT; ++n) dmma(acc[n][0], acc[n][1], arow[n * 8 + 4 * c], b);
      }
    }
  }
  const int gy = gy0 + y0 + (lane >> 2);
  if (gy >= ny) return;
  double* orow = out + ((size_t)gz * ny + gy) * nx;
#pragma unroll
  for (int n = 0; n < NT; ++n) {
    const int gx = gx0 + x0 + n * 8 + 2 * (lane & 3);
    if (gx < nx) orow[gx] = acc[n][0];
    if (gx + 1 < nx) orow[gx + 1] = acc[n][1];
  }
}
