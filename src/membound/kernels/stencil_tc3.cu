// FP64 3D stencils on tensor cores (mma.sync m8n8k4 f64) with kernel fusion, streaming along z: one
// launch applies the fused stencil K^(t) (radius RF = t*r) once. The transformation is stencil_tc.cu's
// (row decomposition: per nonzero row (dz, dy) of K^(t) with nonzero dx in [a, b], an 8x8 output
// tile O gets O += A_c B_c over ceil((8 + b - a) / 4) k-chunks c, A the input rows y+dy at columns
// x0+a+4c+k, B the banded Toeplitz slice of that weight row). What differs is the order:
// a block owns a BY x BX column of the domain over BZ output planes and reads each input plane once
// (tile plus halo RF in x and y, periodic wrap, into one of two shared buffers while the other is
// computed). Input plane z feeds output planes z - dz for every dz: the warp keeps 2*RF+1 planes of
// accumulators (acc[j] = output plane z - RF + j, j = RF - dz), so one A fragment serves every row of
// K^(t) with the same (dy, a, nk): the host groups the rows so (TABLE, below), and after each input
// plane acc[0] is complete, is written, and the accumulators shift down by one plane.
// Macros: RF, NT (8x8 tiles per warp along x, sharing each B fragment), WX, WY (warps), BZ, PITCH
// (shared row pitch in doubles, = 4 mod 16), TWIN (stencil_mma.cuh) and TABLE: a list of
// G(dy, a, nk, mask, f0), one per group of rows; bit j of mask marks the row dz = RF - j, and the
// B fragment of that row's chunk c is f0 + c * popcount(mask) + (rank of bit j in mask).

#define BX (8 * NT * WX)
#define BY (8 * WY)
#define LYT (BY + 2 * RF)
#define LXT (BX + 2 * RF + 3)   // + 3: the zero-weight columns of the last k-chunk
#define PLANE (LYT * PITCH)
#define NTHREADS (32 * WX * WY)
#define NJ (2 * RF + 1)
#define TILE_W LXT
#define TILE_H LYT
#define TILE_PITCH PITCH
#define HALO RF

#include "stencil_mma.cuh"
#include "stencil_plane.cuh"

__device__ constexpr int popcount(int m) { return m ? (m & 1) + popcount(m >> 1) : 0; }

// One group of rows: for each k-chunk, the NT A fragments are loaded once and serve every row
// (accumulator plane j in mask) whose output plane is one of this block's (bit j of live).
template <int DY, int A0, int NK, int MASK, int F0>
__device__ __forceinline__ void group(double (&acc)[NJ][NT][2], const double* tile, const double* bs,
                                      int live) {
  constexpr int CNT = popcount(MASK);
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int c = 0; c < NK; ++c) {
    double a[NT];
#pragma unroll
    for (int n = 0; n < NT; ++n) a[n] = tile[DY * PITCH + A0 + 4 * c + n * 8];
    int i = 0;
#pragma unroll
    for (int j = 0; j < NJ; ++j) {
      if (!((MASK >> j) & 1)) continue;
      const double b = bs[(F0 + c * CNT + i++) * 32 + lane];
      if ((live >> j) & 1) {
#pragma unroll
        for (int n = 0; n < NT; ++n) dmma(acc[j][n][0], acc[j][n][1], a[n], b);
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(NTHREADS, MINB)
stencil_tc3(const double* __restrict__ in, double* __restrict__ out, const double* __restrict__ bfrag,
            int nfrag, int nz, int ny, int nx) {
  extern __shared__ double smem[];   // two plane buffers, then the B fragments
  double* bs = smem + 2 * PLANE;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  for (int i = tid; i < nfrag * 32; i += NTHREADS) bs[i] = bfrag[i];
  const int y0 = (warp / WX) * 8, x0 = (warp % WX) * NT * 8;
  const int gx0 = blockIdx.x * BX, gy0 = blockIdx.y * BY, z0 = blockIdx.z * BZ;
  const int z1 = min(z0 + BZ, nz);
  // this lane's A element of tile 0, chunk 0, at dy = 0, a = 0: row y0 + lane/4, column x0 + lane%4
  const int aoff = (y0 + (lane >> 2) + RF) * PITCH + x0 + RF + (lane & 3);

  double acc[NJ][NT][2];
#pragma unroll
  for (int j = 0; j < NJ; ++j)
#pragma unroll
    for (int n = 0; n < NT; ++n) acc[j][n][0] = acc[j][n][1] = 0.0;

  double r[NLOAD];
  fetch(r, in, wrap(z0 - RF, nz), gy0, gx0, ny, nx);
#pragma unroll 1
  for (int z = z0 - RF; z < z1 + RF; ++z) {
    double* tile = smem + ((z - z0 + RF) & 1) * PLANE;
    put(r, tile);
    __syncthreads();   // tile is complete; the other buffer's readers are done (previous plane)
    if (z + 1 < z1 + RF) fetch(r, in, wrap(z + 1, nz), gy0, gx0, ny, nx);   // in flight meanwhile
    // accumulator j holds output plane z - RF + j: live when inside [z0, z1)
    const int lo = z0 - (z - RF), hi = z1 - (z - RF);
    const int live = ((1 << NJ) - 1) & ~((1 << max(lo, 0)) - 1) & ((1 << min(max(hi, 0), NJ)) - 1);
    const double* t = tile + aoff;
#define G(dy, a, nk, mask, f0) group<dy, a, nk, mask, f0>(acc, t, bs, live);
    TABLE
#undef G
    const int zo = z - RF;   // acc[0] is complete
    if (zo >= z0) {
      const int gy = gy0 + y0 + (lane >> 2);
      if (gy < ny) {
        double* orow = out + ((size_t)zo * ny + gy) * nx;
#pragma unroll
        for (int n = 0; n < NT; ++n) {
          const int gx = gx0 + x0 + n * 8 + 2 * (lane & 3);
          if (gx < nx) orow[gx] = acc[0][n][0];
          if (gx + 1 < nx) orow[gx + 1] = acc[0][n][1];
        }
      }
    }
#pragma unroll
    for (int j = 0; j + 1 < NJ; ++j)
#pragma unroll
      for (int n = 0; n < NT; ++n) {
        acc[j][n][0] = acc[j + 1][n][0];
        acc[j][n][1] = acc[j + 1][n][1];
      }
#pragma unroll
    for (int n = 0; n < NT; ++n) acc[NJ - 1][n][0] = acc[NJ - 1][n][1] = 0.0;
  }
}
