// 2D stencils on CUDA cores in every precision (ELEM: stencil_real.cuh; the stage rings hold the storage
// type, so every step is rounded to storage) at any depth (1: unblocked), temporal blocking by streaming along y
// (EBISU's design, ICS '23: deep blocking with one barrier per chunk, a multi-queue of rows in shared
// memory and registers, long-running blocks). A block owns NT columns (its NT - 2H output columns
// and a halo of H = DEPTH*RAD each side, periodic wrap) and streams down a segment of `seg` output
// rows (a run-time argument: the grid is about one wave). Each iteration advances every stage by a
// chunk of CH rows, with one barrier:
// - stage 0 is a ring of input rows, filled by cp.async PF chunks ahead (loads overlap the stages);
// - stage s (1..DEPTH) computes CH rows of step s (thread = column: a strip of CH rows, stencil_strip)
//   from stage s-1, stores them in its own ring (DEPTH: to global memory). Stage 1 lags the input by
//   RAD rows, stage s > 1 lags stage s-1 by CH + RAD rows: every row a thread reads from other threads'
//   columns was written before the barrier. Stages run from DEPTH down to 1 within an iteration.
// - OWNREG 1: a thread's own column of stage s-1 (s > 1) comes from its registers (the last two
//   chunks it computed), not from shared memory: 2*RAD + 1 fewer loads per point and step of a star.
// The ring of input rows has PIN chunks, each stage ring PST (the ring is never written where it is
// still read); the main loop is unrolled by PIN so that every ring slot is a compile-time offset.
// DRAM traffic ~2 x ELEM bytes per point per DEPTH steps; redundant work: the 2H halo columns and the
// pipeline's fill and drain (~H + DEPTH*(CH+RAD) rows per segment).
// Compile-time macros (set by stencil.py): RAD, STAR (0 box | 1 star), DEPTH, NT (threads = columns),
// CH (rows per chunk), PF (chunks in flight, >= 1), OWNREG, MINB (minimum blocks per SM, 0: the
// compiler's choice), WSMEM. Weights: dense (2*RAD+1)^2 array (offset order y, x), by value.

#define DIMS 2
#define V CH
#define NTHREADS NT
#define H (DEPTH * RAD)
#define SX (NT + 2 * RAD)                  // row pitch: RAD pad columns each side (never written)
#define HC ((2 * RAD + CH - 1) / CH)         // chunks spanned by 2*RAD rows
#define PIN (PF + 1 + HC)                  // input ring, chunks
#define PST (PIN % (2 + HC) ? PIN : 2 + HC)  // stage rings, chunks (a divisor of PIN)
#define LAG (CH + RAD)

#include "stencil_strip.cuh"
#include "stencil_async.cuh"

static_assert(NT > 2 * H, "the block must be wider than its halo");
static_assert(PF >= 1, "PF: at least one chunk in flight");
static_assert(!OWNREG || CH >= 2 * RAD, "OWNREG needs CH >= 2*RAD");

// Slot (row of its ring) of the j-th row after `first` rows before this chunk, in a ring of P chunks at phase ph.
__device__ __forceinline__ constexpr int slot(int ph, int first, int j, int p) {
  return ((ph * CH - first + j) % (p * CH) + p * CH) % (p * CH);
}

extern "C" __global__ void __launch_bounds__(NT, MINB)
stencil_tb2(const real* __restrict__ in, real* __restrict__ out, const Weights wts, int nz, int ny, int nx,
            int seg) {
  // the input ring (PIN*CH rows), then DEPTH-1 stage rings (PST*CH rows each), all of pitch SX
  extern __shared__ real smem[];
  WEIGHTS(w, wts);
  const int c = threadIdx.x, cx = c + RAD;
  const int gx0 = blockIdx.x * (NT - 2 * H), y_lo = blockIdx.y * seg, y_hi = min(y_lo + seg, ny);
  const int y0 = y_lo - H, y_end = y_hi + H;             // input rows of this block
  const real* src = in + wrap(gx0 - H + c, nx);
  real* ring_in = smem;
  auto ring = [&](int s) { return smem + (PIN + (s - 1) * PST) * CH * SX; };   // stage s's ring

  int y_next = wrap(y0, ny);                               // wrapped first row of the next chunk to load
  auto load = [&](int k, int ph) {   // chunk k of input rows into its slot, one commit group (CH <= ny)
    const int y = y0 + k * CH;
#pragma unroll
    for (int i = 0; i < CH; ++i) {
      const int row = y_next + i < ny ? y_next + i : y_next + i - ny;
      if (y + i < y_end) copy_async(ring_in + (ph * CH + i) * SX + cx, src + (size_t)row * nx);
    }
    y_next = y_next + CH < ny ? y_next + CH : y_next + CH - ny;
    async_commit();
  };
#pragma unroll
  for (int k = 0; k < PF; ++k) load(k, k);

  acc_t own[DEPTH][2][CH];   // OWNREG: stage s's last two chunks at this column ([0]: the latest), as stored
  const int first_d = y0 - RAD - (DEPTH - 1) * LAG;      // stage DEPTH's first row
  const int iters = (y_hi - first_d + CH - 1) / CH;
#pragma unroll 1
  for (int k0 = 0; k0 < iters; k0 += PIN) {
#pragma unroll
    for (int ph = 0; ph < PIN; ++ph) {
      const int k = k0 + ph;
      if (k >= iters) break;
      async_wait<PF - 1>();   // chunk k has landed (this thread's copies) ...
      __syncthreads();        // ... everyone's, and every stage store of iteration k - 1 is visible
      load(k + PF, (ph + PF) % PIN);
#pragma unroll
      for (int s = DEPTH; s >= 1; --s) {
        const int r0 = y0 + k * CH - RAD - (s - 1) * LAG;   // first row of this chunk of stage s
        const bool active = r0 + CH > y_lo - (DEPTH - s) * RAD && r0 < y_hi + (DEPTH - s) * RAD;
        acc_t acc[CH];
        if (active) {
          // rows r0 - RAD + j of stage s - 1: the input ring (chunk-aligned at y0) or stage ring s - 1
          const real* prev = s == 1 ? ring_in : ring(s - 1);
          const int p = s == 1 ? PIN : PST, first = s == 1 ? 2 * RAD : CH + 2 * RAD;
          sums(acc, w, [&](int, int dx) {
            return [&, dx](int j) {   // j in [-RAD, CH + RAD): row r0 + j
              if (OWNREG && s > 1 && dx == 0)
                return j >= RAD ? own[s - 1][0][j - RAD] : own[s - 1][1][j - RAD + CH];
              return to_acc(prev[slot(ph % p, first, j + RAD, p) * SX + cx + dx]);
            };
          });
        } else {
#pragma unroll
          for (int i = 0; i < CH; ++i) acc[i] = 0;
        }
        if (s == DEPTH) {
          if (active && c >= H && c < NT - H && gx0 + c - H < nx) {
#pragma unroll
            for (int i = 0; i < CH; ++i)
              if (r0 + i >= y_lo && r0 + i < y_hi) out[(size_t)(r0 + i) * nx + gx0 + c - H] = to_real(acc[i]);
          }
        } else {
          if (active) {
#pragma unroll
            for (int i = 0; i < CH; ++i) ring(s)[((ph % PST) * CH + i) * SX + cx] = to_real(acc[i]);
          }
#pragma unroll
          for (int i = 0; i < CH; ++i) {   // shifted every iteration, so that [1] is always chunk k - 2
            own[s][1][i] = own[s][0][i];
            own[s][0][i] = to_acc(to_real(acc[i]));   // the value stage s + 1 reads from the ring
          }
        }
      }
    }
  }
}
