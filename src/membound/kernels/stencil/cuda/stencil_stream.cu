// 2D and 3D stencils at depth 1 on CUDA cores in every precision (ELEM: stencil_real.cuh), streaming
// with the sums in registers. A block owns NTX * UV vectors of VW = 16 / ELEM columns (3D: and BY rows)
// and walks a segment of `seg` slices along the stream axis (2D: y, a slice is a row; 3D: z, a slice
// is BY rows of a plane plus RAD halo rows each side). Input slices land in a shared ring in 16-byte
// vectors, chunks of CH slices, with one barrier per chunk: CPY 0, cp.async PF chunks ahead (CPY 1:
// the same through L1); CPY 2, the next chunk in flight in registers (16-byte loads) while this one
// is summed, then stored to shared memory (a ring of two chunks). A thread owns UV vectors of one
// row (vector g * NTX + tx of the block's row; 3D: of VY adjacent rows): it reads each input slice once
// from shared memory (its vectors and the neighbours its halo needs, 16-byte loads; VY + 2 RAD rows for
// VY output rows), widens each value once and adds it into the 2 * RAD + 1 output slices (and rows) it
// is a term of, a ring of accumulators in registers. An output slice is complete RAD slices after its
// own and leaves by 16-byte stores, rounded to storage.
// A point so costs its K FMAs, about one widening, and a share of a shared load, a copy and a store,
// where the tile kernels (stencil_cc, stencil_cc3) load and widen every term from shared memory.
// Rows whose length is not a multiple of VW are copied and stored element by element (same sums).
// Compile-time macros (set by stencil_plan.cc_launch): DIMS, RAD, STAR (0 box | 1 star), NTX (threads
// along x), UV (vectors per thread), BY (3D: rows per block; 2D: 1), VY (3D: rows per thread, a divisor
// of BY; 2D: 1), CH (slices per chunk, a multiple of 2 * RAD + 1, so that every accumulator index is a
// compile-time constant), CPY (0, 1, 2 above), PF (CPY 0 and 1: chunks in flight, >= 1), MINB (minimum
// blocks per SM, 0: the compiler's choice), BAL (0: a block a segment of seg slices of its column (and
// row) block; 1: the (column, row, slice) order cut into runs of seg, a run per block, so that the blocks
// of one wave share the field evenly where the column and row blocks do not fill the SMs). Weights: dense
// (2*RAD+1)^DIMS array (stream offset first), by value (stencil_strip.cuh).

#define NV (NTX * UV + 2 * HV)               // vectors per row of a slice
#define SX (NV * VW)                         // row pitch, elements
#define HY (DIMS == 3 ? RAD : 0)             // halo rows of a slice
#define SROWS (BY + 2 * HY)
#define SLICE (SROWS * SX)
#ifndef VY
#define VY 1
#endif
#define NTHREADS (NTX * BY / VY)
#define V 1                                  // (stencil_strip.cuh's strip length; unused here)
#ifndef CPY
#define CPY 0
#endif
#ifndef BAL
#define BAL 0
#endif
#define NSLOT (CPY == 2 ? 2 : PF + 1)        // chunks of the shared ring

#include "stencil_strip.cuh"
#include "stencil_async.cuh"
#include "stencil_vec.cuh"

static_assert(DIMS == 3 || BY == 1, "a 2D slice is one row: BY = 1");
static_assert(BY % VY == 0, "VY must divide BY");
static_assert(CH % KW == 0, "CH must be a multiple of 2 * RAD + 1");
static_assert(PF >= 1, "PF: at least one chunk in flight");

extern "C" __global__ void __launch_bounds__(NTHREADS, MINB)
stencil_stream(const real* __restrict__ in, real* __restrict__ out, const Weights wts, int nz, int ny, int nx,
               int seg) {
  extern __shared__ real smem[];   // a ring of NSLOT chunks of CH slices
  WEIGHTS(w, wts);
  const int tx = threadIdx.x % NTX, ty = threadIdx.x / NTX * VY;   // ty: the thread's first row
  const int ns = DIMS == 3 ? nz : ny;                       // slices along the stream axis
  const size_t pitch = DIMS == 3 ? (size_t)ny * nx : nx;    // elements from one slice to the next
  const bool vec = nx % VW == 0;
  // slices s_lo..s_hi - 1 of column block bx (3D: and row block by)
  auto segment = [&](int bx, int by, int s_lo, int s_hi) {
    const int gx0 = bx * (NTX * UV * VW);
    const int gy0 = DIMS == 3 ? by * BY : 0;
    const int s0 = s_lo - RAD, n_in = s_hi - s_lo + 2 * RAD;  // input slices of this segment, from s0

    const int x0 = gx0 - HV * VW;
    // the first row of slice i of chunk k, and row r of it
    auto plane = [&](int k, int i) { return in + wrap(s0 + k * CH + i, ns) * pitch; };
    auto row = [&](const real* p, int r) { return DIMS == 3 ? p + (size_t)wrap(gy0 - HY + r, ny) * nx : p; };
    auto slot = [&](int k) { return smem + k % NSLOT * CH * SLICE; };
    auto copy_elements = [&](int k) {   // rows of any length: element by element (cp.async or, fp16, at once)
#pragma unroll
      for (int i = 0; i < CH; ++i) {
        if (k * CH + i >= n_in) break;
        const real* p = plane(k, i);
        for (int j = threadIdx.x; j < SLICE; j += NTHREADS)
          copy_async(slot(k) + i * SLICE + j, row(p, j / SX) + wrap(x0 + j % SX, nx));
      }
  };
  constexpr int NJ = (SROWS * NV + NTHREADS - 1) / NTHREADS;   // a thread's vectors of a slice
#if CPY == 2   // chunk k + 1 in flight in registers while chunk k is summed, then stored to shared memory
  uint4 stage[CH][NJ];
  auto fetch = [&](int k) {
    if (!vec) return;
#pragma unroll
    for (int i = 0; i < CH; ++i) {
      if (k * CH + i >= n_in) break;
      const real* p = plane(k, i);
#pragma unroll
      for (int jj = 0, j = threadIdx.x; jj < NJ; ++jj, j += NTHREADS)
        if (j < SROWS * NV)
          stage[i][jj] = __ldg(reinterpret_cast<const uint4*>(row(p, j / NV) + wrap(x0 + j % NV * VW, nx)));
    }
  };
  auto put = [&](int k) {
    if (!vec) {
      copy_elements(k);
      async_commit();
      async_wait<0>();
      return;
    }
#pragma unroll
    for (int i = 0; i < CH; ++i) {
      if (k * CH + i >= n_in) break;
#pragma unroll
      for (int jj = 0, j = threadIdx.x; jj < NJ; ++jj, j += NTHREADS)
        if (j < SROWS * NV) *reinterpret_cast<uint4*>(slot(k) + i * SLICE + j * VW) = stage[i][jj];
    }
  };
  fetch(0);
  put(0);
#else          // PF chunks in flight by cp.async, one commit group each
  // offsets in a slice (wrapped row * nx + wrapped column) of this thread's vectors, the same in every
  // slice: wrapped once (fp16 3d27pt 483 -> 600 GStencil/s on an H100; CPY 2 lost 5% with them)
  int off[NJ];
#pragma unroll
  for (int jj = 0, j = threadIdx.x; jj < NJ; ++jj, j += NTHREADS)
    off[jj] = row(in, j / NV) - in + wrap(x0 + j % NV * VW, nx);
  auto load = [&](int k) {
    if (vec) {
#pragma unroll
      for (int i = 0; i < CH; ++i) {
        if (k * CH + i >= n_in) break;
        const real* p = plane(k, i);
#pragma unroll
        for (int jj = 0, j = threadIdx.x; jj < NJ; ++jj, j += NTHREADS) {
          if (j >= SROWS * NV) break;
          real* dst = slot(k) + i * SLICE + j * VW;
          if (CPY == 1) copy_async16_l1(dst, p + off[jj]); else copy_async16(dst, p + off[jj]);
        }
      }
    } else {
      copy_elements(k);
    }
    async_commit();
  };
#pragma unroll
  for (int k = 0; k < PF; ++k) load(k);
#endif

  acc_t acc[KW][VY][UV][VW];   // acc[(o - s0) % KW][r]: the sums of row ty + r of output slice o
#pragma unroll
  for (int a = 0; a < KW; ++a)
#pragma unroll
    for (int r = 0; r < VY; ++r)
#pragma unroll
      for (int g = 0; g < UV; ++g)
#pragma unroll
        for (int u = 0; u < VW; ++u) acc[a][r][g][u] = 0;

  const int iters = (n_in + CH - 1) / CH;
#pragma unroll 1
  for (int k = 0; k < iters; ++k) {
#if CPY == 2
    fetch(k + 1);
    __syncthreads();        // chunk k is in shared memory, and every read of the slot stored next is done
#else
    async_wait<PF - 1>();   // chunk k has landed (this thread's copies) ...
    __syncthreads();        // ... everyone's, and every read of the slot reloaded next is done
    load(k + PF);
#endif
    const real* chunk = slot(k) + (ty + HY) * SX + HV * VW;
#pragma unroll
    for (int i = 0; i < CH; ++i) {   // slice s0 + k * CH + i: a term of outputs s0 + k * CH + i - ds
#pragma unroll
      for (int g = 0; g < UV; ++g) {
        const real* p = chunk + i * SLICE + (g * NTX + tx) * VW;
#pragma unroll
        for (int j = -HY; j < VY + HY; ++j) {   // input row ty + j: a term of rows ty + j - dy
          acc_t v[VW + 2 * RAD];
          row_values(v, p + j * SX, STAR && (j < 0 || j >= VY));   // a star needs the halo of centre rows only
#pragma unroll
          for (int dy = -HY; dy <= HY; ++dy) {
            const int r = j - dy;
            if (r < 0 || r >= VY) continue;
#pragma unroll
            for (int ds = -RAD; ds <= RAD; ++ds)
#pragma unroll
              for (int dx = -RAD; dx <= RAD; ++dx) {
                if (!term(ds, dy, dx)) continue;
                const acc_t wt = w[DIMS == 3 ? widx(ds, dy, dx) : widx(0, ds, dx)];
                const int a = ((i - ds) % KW + KW) % KW;
#pragma unroll
                for (int u = 0; u < VW; ++u) acc[a][r][g][u] = fma(wt, v[u + RAD + dx], acc[a][r][g][u]);
              }
          }
        }
      }
      // output slice o = s0 + k * CH + i - RAD has all its terms: store it (inside the segment), clear it
      const int o = s0 + k * CH + i - RAD, a = ((i - RAD) % KW + KW) % KW;
#pragma unroll
      for (int r = 0; r < VY; ++r) {
        const int gy = gy0 + ty + r;
        if (o >= s_lo && o < s_hi && gy < ny) {
          real* dst = out + o * pitch + (DIMS == 3 ? (size_t)gy * nx : 0);
#pragma unroll
          for (int g = 0; g < UV; ++g) store_vec(dst, acc[a][r][g], gx0 + (g * NTX + tx) * VW, nx);
        }
#pragma unroll
        for (int g = 0; g < UV; ++g)
#pragma unroll
          for (int u = 0; u < VW; ++u) acc[a][r][g][u] = 0;
      }
    }
#if CPY == 2
    put(k + 1);
#endif
  }
  };
#if BAL   // the blocks split (column block, row block, slice) in this order into runs of seg; a run may
          // span column or row blocks (one segment each), so that every SM gets as many slices. Its last
          // segment first: a block then starts at slice 0 (or ends at the last), as its neighbours do, and
          // the blocks stream the stream axis nearly in step (the halo rows they share met in the L2)
  const int columns = (nx + NTX * UV * VW - 1) / (NTX * UV * VW);
  const long long total = (long long)columns * (DIMS == 3 ? (ny + BY - 1) / BY : 1) * ns;
  const long long L0 = (long long)blockIdx.x * seg;
  for (long long L1 = min(L0 + seg, total); L1 > L0;) {
    const long long t = (L1 - 1) / ns, L = max(L0, t * ns);
    segment((int)(t % columns), (int)(t / columns), (int)(L - t * ns), (int)(L1 - t * ns));
    L1 = L;
    __syncthreads();   // every read of the ring is done before the next segment's copies
  }
#else
  const int s_lo = (DIMS == 3 ? blockIdx.z : blockIdx.y) * seg;
  segment(blockIdx.x, DIMS == 3 ? blockIdx.y : 0, s_lo, min(s_lo + seg, ns));
#endif
}
