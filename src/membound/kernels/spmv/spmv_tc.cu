// DASP-style tensor-core SpMV, y = A x, in every precision from one source: -DPREC=fp64|fp32|fp16|bf16 picks
// a traits struct of spmv_mma.cuh (storage, accumulator, slots per lane, its mma.sync). With -DTWIN=1 it is the
// CUDA-core twin: the same plan, loads, stores and launch, the lane's own products summed with FMAs where
// the tensor-core kernel issues each MMA. spmv_plan.py makes the plan and packs the matrix once.
//
// The diagonal trick. In each MMA shape used, lane l = 4g + t holds of row g of A exactly the k indices
// whose B(k, g) it also holds (PTX ISA, "Matrix fragments for mma"), S slots per lane, K = 4S per row:
//   fp64 m8n8k4  f64             (S = 1): a0 = A(g, t)                       b0 = B(t, g)
//   fp32 m16n8k8 tf32, f32 acc   (S = 2): a0, a2 = A(g, t), A(g, t + 4)      b0, b1 = B(t, g), B(t + 4, g)
//   fp16 m16n8k16 f16, f32 acc   (S = 4): a0 a1 a4 a5 = A(g, 2t, 2t+1, 2t+8, 2t+9)   b0..b3 = B(same k, g)
//   bf16 m16n8k16 bf16, f32 acc  (S = 4): as fp16
// (rows 8-15 of the m16 shapes are zero). With A(g, k) the values of one matrix row and B(k, g) = x at
// their columns, D(g, g) is that row's partial dot product: 8 rows x K nonzeros per MMA, the accumulator
// carries it across tiles, and only the diagonal of D is kept (lane 4g + g/2, element g % 2).
//
// Packed layout (spmv_plan.py): a tile is 32 S slots, lane l's S slots at tile * 32 S + l S (one 8-byte
// load of values in every precision, one vector load of column words). A column word is
// segment << 30 | column: a tile row may hold up to 4 rows (DASP's short-row packing); MMA j of a tile
// keeps in B only the slots of segment j, so D_j(g, g) is the sum of segment j. Padding slots hold value
// 0 and column 0 (x must be finite, as in DASP). One int4 descriptor per warp says what it does:
//   GROUPS: n groups of 8 tile rows x c tiles (tiles from .x; 8 J output rows per group from rows[.y]):
//           segment 0 of a tile row runs over all c tiles, segments 1..J-1 lie in its last tile.
//   PIECE:  .z tiles of consecutive nonzeros of long row .y; the piece's sum is added atomically to
//           long_acc[.y], and the last piece to arrive writes y and resets the accumulator and counter.
//   ZEROS:  .z empty rows from rows[.y]: y = 0.
// Loop bounds are warp-uniform, as mma.sync requires.

#ifndef PREC
#error "compile with -DPREC=<fp64|fp32|fp16|bf16>, a traits struct of spmv_mma.cuh"
#endif
#ifndef TC_UNROLL  // tiles whose loads are in flight before their MMAs, set by spmv.py
#error "compile with -DTC_UNROLL=<k>"
#endif
#ifndef TWIN
#define TWIN 0
#endif
#ifndef TC_MINB  // TC_MINB x 256 threads per SM that the register allocation must allow
#define TC_MINB 1
#endif
#ifndef TC_THREADS  // threads a block, a power of 2 from 32 to 256
#define TC_THREADS 256
#endif
#ifndef TC_PIPE  // 1: a group's tiles in batches of TC_UNROLL, the next batch fetched before this one's MMAs
#define TC_PIPE 0
#endif
#ifndef TC_AHEAD  // the descriptors of the block this many warps ahead are prefetched to the L2 (0: none)
#define TC_AHEAD 0
#endif
#ifndef TC_PREF  // a group of two batches or more sends its next TC_PREF tiles to the L2 as it starts (0: none)
#define TC_PREF 0
#endif
#ifndef TC_ORDER  // 1: y of the groups and empty rows in the plan's order, yp[slot] for y[rows[slot]], as DASP
#define TC_ORDER 0   // leaves its y (tools/bench_spmv.py --variants dasp_contract); long rows still in y
#endif
#ifndef TC_SEGFREE  // where no segment masks are applied, bits: 1 groups of one segment a tile row, 2 long rows' pieces
#define TC_SEGFREE 1
#endif
constexpr bool PIECE_SEG = !(TC_SEGFREE & 2), GROUP_SEG = !(TC_SEGFREE & 1);

constexpr unsigned FULL = 0xffffffffu;
constexpr int SEG_SHIFT = 30;
constexpr int COL_MASK = (1 << SEG_SHIFT) - 1;
enum Kind { GROUPS = 0, PIECE = 1, ZEROS = 2 };

#include "spmv_mma.cuh"

using P = PREC;
using val_t = P::val;
using acc_t = P::acc;
using vec_t = P::vec;
constexpr int S = P::S, NC = P::NC, TILE = 32 * S;

// ------------------------------------------------------------------------------------ one lane's tile

// A lane's S column words, one vector load.
__device__ __forceinline__ void load_cols(const int* p, int (&c)[1]) { c[0] = __ldcs(p); }
__device__ __forceinline__ void load_cols(const int* p, int (&c)[2]) {
    const int2 v = __ldcs(reinterpret_cast<const int2*>(p));
    c[0] = v.x, c[1] = v.y;
}
__device__ __forceinline__ void load_cols(const int* p, int (&c)[4]) {
    const int4 v = __ldcs(reinterpret_cast<const int4*>(p));
    c[0] = v.x, c[1] = v.y, c[2] = v.z, c[3] = v.w;
}

struct Tile {
    vec_t a, x;  // this lane's values of A and the x at their columns
    int c[S];    // their column words, until gathered
    int segs;    // their segments, 2 bits each
};

// The tile's streamed words: values and column words.
__device__ __forceinline__ void fetch(Tile& t, const val_t* __restrict__ val, const int* __restrict__ col) {
    t.a = P::load(val);
    load_cols(col, t.c);
}

// The x at the tile's columns. SEG false: every slot is in segment 0 (a long row's piece, a group of one
// segment a tile row), so the column words are plain columns and no slot is masked.
template <bool SEG>
__device__ __forceinline__ void gather(Tile& t, const val_t* __restrict__ x) {
    t.segs = 0;
#pragma unroll
    for (int s = 0; s < S && SEG; ++s) {
        t.segs |= static_cast<int>(static_cast<unsigned>(t.c[s]) >> SEG_SHIFT) << (2 * s);
        t.c[s] &= COL_MASK;
    }
    t.x = P::gather(x, t.c);
}

template <bool SEG>
__device__ __forceinline__ void load_tile(Tile& t, const val_t* __restrict__ val, const int* __restrict__ col,
                                          const val_t* __restrict__ x) {
    fetch(t, val, col);
    gather<SEG>(t, x);
}

// d += the products of segment j of this tile (B keeps x where the slot's segment is j, else 0).
template <bool SEG>
__device__ __forceinline__ void product(acc_t (&d)[NC], const Tile& t, int j) {
    const vec_t b = SEG ? P::masked(t.x, t.segs, j) : t.x;
#if TWIN
    d[0] = P::dot(t.a, b, d[0]);
#else
    P::mma(d, t.a, b);
#endif
}

// The sum of tile row g in lane 4g + g/2 (twin: in all 4 lanes of the row).
__device__ __forceinline__ acc_t row_sum(const acc_t (&d)[NC], int lane) {
#if TWIN
    (void)lane;
    acc_t s = d[0];
    s += __shfl_xor_sync(FULL, s, 1);
    return s + __shfl_xor_sync(FULL, s, 2);
#else
    return (lane >> 2) & 1 ? d[1] : d[0];
#endif
}

// The sum of all 8 tile rows, in every lane.
__device__ __forceinline__ acc_t tile_sum(const acc_t (&d)[NC], int lane) {
#if TWIN
    (void)lane;
    acc_t s = d[0];
#else
    acc_t s = (lane & 3) == (lane >> 3) ? ((lane >> 2) & 1 ? d[1] : d[0]) : acc_t(0);
#endif
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(FULL, s, off);
    return s;
}

__device__ __forceinline__ double take(double* p) {
    return __longlong_as_double(static_cast<long long>(atomicExch(reinterpret_cast<unsigned long long*>(p), 0ull)));
}
__device__ __forceinline__ float take(float* p) { return atomicExch(p, 0.0f); }

// Tiles [TC_UNROLL, TC_UNROLL + TC_PREF) of a group of nt >= 2 TC_UNROLL tiles from `first`, values and
// column words, to the L2: two bulk prefetches (sm_90), else one line a lane. (Long rows' pieces and
// shorter groups lost with it: docs/kernels_spmv.md.)
__device__ __forceinline__ void prefetch(const val_t* __restrict__ pval, const int* __restrict__ pcol, long long first,
                                         int nt, int lane) {
    if (TC_PREF == 0 || nt < 2 * TC_UNROLL) return;
    const int n = min(nt - TC_UNROLL, TC_PREF);
    const char* v = reinterpret_cast<const char*>(pval + (first + TC_UNROLL) * TILE);
    const char* c = reinterpret_cast<const char*>(pcol + (first + TC_UNROLL) * TILE);
    constexpr int VB = TILE * sizeof(val_t), CB = TILE * sizeof(int);  // bytes a tile, multiples of 128
#if __CUDA_ARCH__ >= 900
    if (lane < 2)
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(lane ? c : v), "r"(n * (lane ? CB : VB)));
#else
    for (int i = lane; i < n * (VB + CB) / 128; i += 32)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(i < n * VB / 128 ? v + 128 * i : c + 128 * (i - n * VB / 128)));
#endif
}

// ------------------------------------------------------------------------------------ the warps' work

// GROUPS: lane 8 (i J + j) + g ends with the sum of segment j of tile row g of group i and stores it
// (SEG: J > 1).
template <bool SEG>
__device__ __forceinline__ void groups(int4 w, int lane, const val_t* __restrict__ pval, const int* __restrict__ pcol,
                                       const val_t* __restrict__ x, val_t* __restrict__ y, const int* __restrict__ rows,
                                       val_t* __restrict__ yp) {
    const int c = w.z, n_groups = w.w & 0xff, J = SEG ? (w.w >> 8) & 0xff : 1, nt = n_groups * c;
    // this lane's output: its slot in the plan's order (TC_ORDER), else its row; -1: none
    const int row = lane >= 8 * J * n_groups ? -1 : TC_ORDER ? w.y + lane : rows[w.y + lane];
    const int src = 4 * (lane & 7) + ((lane & 7) >> 1);  // the lane holding tile row lane % 8's sum
    const long long base = static_cast<long long>(w.x) * TILE + lane * S;
    const val_t* __restrict__ pv = pval + base;
    const int* __restrict__ pc = pcol + base;
    prefetch(pval, pcol, w.x, nt, lane);
    acc_t d[NC] = {}, res = 0;
    int k = 0, out = 0;  // tile within the group, output slot of the next sum
#if TC_PIPE  // the next batch's values and column words are in flight during this batch's gathers and MMAs
    Tile next[TC_UNROLL];
#pragma unroll
    for (int u = 0; u < TC_UNROLL; ++u)
        if (u < nt) fetch(next[u], pv + u * TILE, pc + u * TILE);
#endif
    for (int t0 = 0; t0 < nt; t0 += TC_UNROLL, pv += TC_UNROLL * TILE, pc += TC_UNROLL * TILE) {
        Tile tl[TC_UNROLL];
#pragma unroll
        for (int u = 0; u < TC_UNROLL; ++u) {
#if TC_PIPE
            tl[u] = next[u];
            if (t0 + u < nt) gather<SEG>(tl[u], x);
            if (t0 + TC_UNROLL + u < nt) fetch(next[u], pv + (TC_UNROLL + u) * TILE, pc + (TC_UNROLL + u) * TILE);
#else
            if (t0 + u < nt) load_tile<SEG>(tl[u], pv + u * TILE, pc + u * TILE, x);
#endif
        }
#pragma unroll
        for (int u = 0; u < TC_UNROLL; ++u) {
            if (t0 + u >= nt) break;
            product<SEG>(d, tl[u], 0);
            if (++k < c) continue;
            // the group's last tile: segment 0 is the accumulator's sum, segments 1..J-1 one MMA each (no
            // MMA under a j == 0 branch: ptxas would predicate it, and a predicated-off MMA still issues)
            acc_t v = __shfl_sync(FULL, row_sum(d, lane), src);
            if ((lane >> 3) == out++) res = v;
            for (int j = 1; j < J; ++j) {
                acc_t e[NC] = {};
                product<SEG>(e, tl[u], j);
                v = __shfl_sync(FULL, row_sum(e, lane), src);
                if ((lane >> 3) == out++) res = v;
            }
#pragma unroll
            for (int r = 0; r < NC; ++r) d[r] = 0;
            k = 0;
        }
    }
    if (row >= 0) (TC_ORDER ? yp : y)[row] = P::narrow(res);
}

// PIECE: the sum of .z tiles of one long row, added to its accumulator; the last piece writes y.
__device__ __forceinline__ void piece(int4 w, int lane, const val_t* __restrict__ pval, const int* __restrict__ pcol,
                                      const val_t* __restrict__ x, val_t* __restrict__ y,
                                      const int* __restrict__ long_row, const int* __restrict__ long_pieces,
                                      acc_t* __restrict__ long_acc, unsigned* __restrict__ long_cnt) {
    const int nt = w.z, li = w.y;
    const long long base = static_cast<long long>(w.x) * TILE + lane * S;
    const val_t* __restrict__ pv = pval + base;
    const int* __restrict__ pc = pcol + base;
    acc_t d[NC] = {};
    int t0 = 0;
    for (; t0 + TC_UNROLL <= nt; t0 += TC_UNROLL, pv += TC_UNROLL * TILE, pc += TC_UNROLL * TILE) {  // whole chunks
        Tile tl[TC_UNROLL];
#pragma unroll
        for (int u = 0; u < TC_UNROLL; ++u) load_tile<PIECE_SEG>(tl[u], pv + u * TILE, pc + u * TILE, x);
#pragma unroll
        for (int u = 0; u < TC_UNROLL; ++u) product<PIECE_SEG>(d, tl[u], 0);
    }
    for (; t0 < nt; ++t0, pv += TILE, pc += TILE) {  // the rest one by one: no MMA under a bound's predicate
        Tile tl;
        load_tile<PIECE_SEG>(tl, pv, pc, x);
        product<PIECE_SEG>(d, tl, 0);
    }
    const acc_t s = tile_sum(d, lane);
    if (lane == 0) {
        atomicAdd(long_acc + li, s);
        __threadfence();
        if (atomicAdd(long_cnt + li, 1u) == static_cast<unsigned>(long_pieces[li] - 1)) {
            __threadfence();
            y[long_row[li]] = P::narrow(take(long_acc + li));
            long_cnt[li] = 0;
        }
    }
}

extern "C" __global__ void __launch_bounds__(TC_THREADS, TC_MINB * 256 / TC_THREADS)
    spmv_tc(const int4* __restrict__ desc, long long n_warps, const val_t* __restrict__ pval,
            const int* __restrict__ pcol, const val_t* __restrict__ x, val_t* __restrict__ y, val_t* __restrict__ yp,
            const int* __restrict__ rows, const int* __restrict__ long_row, const int* __restrict__ long_pieces,
            acc_t* __restrict__ long_acc, unsigned* __restrict__ long_cnt) {
    const int lane = threadIdx.x & 31;
    const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
    if (warp >= n_warps) return;  // warp-uniform
    const int4 w = __ldg(desc + warp);
#if TC_AHEAD
    // later warps' descriptors (one 128-byte line: 8 warps), so that they start on an L2 hit
    if (lane == 0 && (warp & 7) == 0 && warp + TC_AHEAD < n_warps)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(desc + warp + TC_AHEAD));
#endif
    const int kind = w.w >> 16;
    if (kind == GROUPS && (GROUP_SEG || (w.w >> 8 & 0xff) > 1)) {
        groups<true>(w, lane, pval, pcol, x, y, rows, yp);
    } else if (kind == GROUPS) {
        groups<false>(w, lane, pval, pcol, x, y, rows, yp);
    } else if (kind == PIECE) {
        piece(w, lane, pval, pcol, x, y, long_row, long_pieces, long_acc, long_cnt);
    } else if (lane < w.z) {
        (TC_ORDER ? yp : y)[TC_ORDER ? w.y + lane : rows[w.y + lane]] = P::narrow(acc_t(0));
    }
}
