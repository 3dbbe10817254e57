// 3D stencils on CUDA cores in every precision (ELEM: stencil_real.cuh) without temporal blocking,
// streaming along z (2.5D blocking): a
// block owns a BX x BY column of the domain over BZ planes and keeps a ring of 2*RAD+1 input planes
// (tile plus a halo of RAD in x and y, periodic wrap) in shared memory. The loads of the next plane
// are in flight while the current plane is computed, and every input plane is read once per block,
// so a point costs (1 + 2 RAD / BX)(1 + 2 RAD / BY) reads from the L2 instead of the whole-tile
// kernel's (stencil_cc.cu) 3D halo. Each thread computes a strip of V points along y.
// Compile-time macros (set by stencil.py): RAD, STAR (0 box | 1 star), BX, BY, BZ, V, NTHREADS
// with BY = V * NTHREADS / BX, MINB (minimum blocks per SM, 0: the compiler's choice), WSMEM, VEC (as
// stencil_cc.cu's: planes copied in 16-byte vectors, each shared row XO pad columns left of the tile),
// VS (the sums in vector strips of V rows and VW = 16 / ELEM columns, as stencil_cc.cu's; then
// NTHREADS need not match BY), PF (0: the next plane in flight through registers, two barriers a
// plane; >= 1, with VEC: PF planes in flight by cp.async into a ring of 2*RAD+1+PF slots, one barrier
// a plane; PF = BZ - 1: every input plane of a short segment in flight at once, the tile loaded whole).
// Weights: dense (2*RAD+1)^3 array (offset order z, y, x).

#define DIMS 3
#ifndef VEC
#define VEC 0
#endif
#if VEC
#define XO ((VW - RAD % VW) % VW)                // pad columns left of the tile
#define SX ((XO + BX + 2 * RAD + VW - 1) / VW * VW)
#define PLANE_VEC 1
#else
#define XO 0
#define SX (BX + 2 * RAD)
#endif
#define SY (BY + 2 * RAD)
#define PLANE (SX * SY)
#define TILE_W SX
#define TILE_H SY
#define TILE_PITCH SX
#define HALO RAD

#ifndef PF
#define PF 0
#endif
#if PF
static_assert(VEC, "PF: planes copied by cp.async in 16-byte vectors (VEC=1)");
#define PLANE_ASYNC 1
#define NSLOT (2 * RAD + 1 + PF)   // the planes summed and the PF in flight
#else
#define NSLOT (2 * RAD + 1)
#endif

#include "stencil_strip.cuh"
#include "stencil_async.cuh"
#include "stencil_plane.cuh"
#ifndef VS
#define VS 0
#endif
#if VS
#include "stencil_vec.cuh"
static_assert(VEC && BX % VW == 0, "VS: 16-byte copies, whole vectors per tile row");
#endif

extern "C" __global__ void __launch_bounds__(NTHREADS, MINB)
stencil_cc3(const real* __restrict__ in, real* __restrict__ out, const Weights wts,
            int nz, int ny, int nx) {
  extern __shared__ real ring[];   // NSLOT planes; plane p sits in slot (p - z0 + RAD) % NSLOT
  WEIGHTS(w, wts);
  const int gx0 = blockIdx.x * BX, gy0 = blockIdx.y * BY, z0 = blockIdx.z * BZ;
  const int z1 = min(z0 + BZ, nz);
  const int tx = threadIdx.x % BX, ty = threadIdx.x / BX * V;
  const int gx = gx0 + tx;
#if VEC
  int off[NSTAGE];   // this thread's vectors of a plane, wrapped once
  plane_offsets(off, gy0, gx0, ny, nx);
#define FETCH(r, gz) fetch(r, in, gz, off, gy0, gx0, ny, nx)
#else
#define FETCH(r, gz) fetch(r, in, gz, gy0, gx0, ny, nx)
#endif

#if PF
  auto fetch_plane = [&](int p) {   // input plane z0 - RAD + p into its slot, if this block needs it
    fetch_async(ring + p % NSLOT * PLANE, in, wrap(z0 - RAD + p, nz), off, gy0, gx0, ny, nx, z0 - RAD + p < z1 + RAD);
  };
#pragma unroll 1
  for (int p = 0; p < 2 * RAD + PF; ++p) fetch_plane(p);   // planes z0 - RAD .. z0 + RAD + PF - 1
#else
  stage_t r[NSTAGE];
#pragma unroll 1
  for (int p = 0; p < 2 * RAD; ++p) {            // planes z0 - RAD .. z0 + RAD - 1
    FETCH(r, wrap(z0 - RAD + p, nz));
    put(r, ring + p * PLANE);
  }
  FETCH(r, wrap(z0 + RAD, nz));
#endif

#pragma unroll 1
  for (int z = z0; z < z1; ++z) {
    const int k = z - z0;
#if PF
    async_wait<PF - 1>();   // plane z + RAD has landed (this thread's copies) ...
    __syncthreads();        // ... everyone's, and plane z - RAD - 1, whose slot is refilled next, is read
    fetch_plane(k + 2 * RAD + PF);   // plane z + RAD + PF, in flight meanwhile
#else
    put(r, ring + (k + 2 * RAD) % NSLOT * PLANE);   // plane z + RAD
    __syncthreads();
    if (z + 1 < z1) FETCH(r, wrap(z + 1 + RAD, nz));   // in flight meanwhile
#endif

#if VS   // vector strips of V rows and VW columns (stencil_vec.cuh)
    for (int i = threadIdx.x; i < BY / V * (BX / VW); i += NTHREADS) {
      const int y = i / (BX / VW) * V, x = i % (BX / VW) * VW;   // tile row y: global row gy0 + y - RAD
      real* row = out + ((size_t)z * ny + gy0 + y) * nx;          // output row 0 of the strip
      vector_strip(w, [&](int dz) { return ring + (k + RAD + dz) % NSLOT * PLANE + y * SX + XO + RAD + x; },
                   [&](int o, const acc_t (&sums)[VW]) {
                     if (gy0 + y + o < ny && gx0 + x < nx) store_vec(row + (size_t)o * nx, sums, gx0 + x, nx);
                   });
    }
#else
    acc_t acc[V];
    sums(acc, w, [&](int dz, int dx) { return rows(ring + (k + RAD + dz) % NSLOT * PLANE + (ty + RAD) * SX + XO + tx + RAD + dx); });
    write_strip(out + (size_t)z * ny * nx, acc, gy0 + ty, gx, ny, nx);
#endif
#if !PF
    __syncthreads();                               // the oldest slot is overwritten next
#endif
  }
}
