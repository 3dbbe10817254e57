// DASP-style FP64 tensor-core SpMV, y = A x, with mma.sync m8n8k4 (sm_80 and later), and its CUDA-core
// twin (-DTWIN=1: the same plan, loads, stores and launches, with one FMA per lane instead of each MMA).
// spmv.py plans the work once (membound.kernels.spmv.plan) and launches these kernels.
//
// One MMA takes 8 rows x 4 nonzeros: lane l = 4r + c holds A(r,c) = the c-th value of row r's chunk
// and, in the same lane, B(c,r) = x[its column] (the B operand is 4x8, column-major: lane 4n+c holds
// B(c,n)). Then D(r,r) = sum_c A(r,c) x[col(r,c)] is row r's partial dot product; the accumulator
// carries it across chunks and only the diagonal of the 8x8 D is kept (lane 4r + r/2, element r%2).
// Read in place, slots outside a row load nothing and feed zeros (padding costs MMA work, no bytes);
// packed, padding slots hold value 0 and column 0 (they cost bytes, 12 per slot).
//
// Row classes (DASP), each its own branch of spmv_tc_rows (by warp index) or its own kernel:
//   short  (<= SHORT nnz): groups of 8 rows (sorted by length within windows), read in place from the
//          CSR arrays: lane slot k of row r is begin_r + 4k + c.
//   medium (<= LONG nnz): groups of 8 rows (sorted likewise), their values and columns packed once by
//          the plan in MMA order (32 consecutive per MMA, zeros in the padding): every load is one
//          coalesced 256-byte (values) or 128-byte (columns) run, and no row pointer is read.
//   long   (> LONG nnz): spmv_tc_long, one warp per piece of PIECE nnz (32 consecutive values per MMA,
//          the 8 diagonal sums added with shuffles into partial[piece]); threads after the last group
//          of spmv_tc_rows sum the pieces (one thread per long row).
// Loop bounds are warp-uniform, as mma.sync requires.

#ifndef TC_UNROLL  // chunks whose loads are in flight before their MMAs, set by spmv.py
#error "compile with -DTC_UNROLL=<k>"
#endif
#ifndef TWIN
#define TWIN 0
#endif

// d += A B for this lane's A(r,c) = a and B(c,r) = b (TWIN: d0 += a b, this lane's own product).
__device__ __forceinline__ void mma(double& d0, double& d1, double a, double b) {
#if TWIN
    d0 = fma(a, b, d0);
#elif __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
        : "+d"(d0), "+d"(d1)
        : "d"(a), "d"(b));
#else
    __trap();  // spmv.py never launches the MMA kernels below sm_80
#endif
}

// This lane's share of its row's sum (lane 4r+c, row r): the sum over the row's 4 lanes is the row total.
__device__ __forceinline__ double row_share(double d0, double d1, int lane) {
#if TWIN
    (void)d1, (void)lane;
    return d0;
#else
    const int r = lane >> 2;
    return (lane & 3) == (r >> 1) ? ((r & 1) ? d1 : d0) : 0.0;
#endif
}

// Accumulate `chunks` MMAs; this lane's slot k is idx + k * STRIDE, valid while below `end`.
template <int STRIDE>
__device__ __forceinline__ void accumulate(const int* __restrict__ col, const double* __restrict__ val,
                                           const double* __restrict__ x, int idx, int end, int chunks,
                                           double& d0, double& d1) {
    int k = 0;
    for (; k + TC_UNROLL <= chunks; k += TC_UNROLL) {
        double a[TC_UNROLL], b[TC_UNROLL];
#pragma unroll
        for (int u = 0; u < TC_UNROLL; ++u) {
            const int i = idx + (k + u) * STRIDE;
            const bool ok = i < end;
            a[u] = ok ? __ldcs(val + i) : 0.0;
            b[u] = ok ? __ldg(x + __ldcs(col + i)) : 0.0;
        }
#pragma unroll
        for (int u = 0; u < TC_UNROLL; ++u) mma(d0, d1, a[u], b[u]);
    }
    for (; k < chunks; ++k) {
        const int i = idx + k * STRIDE;
        const bool ok = i < end;
        mma(d0, d1, ok ? __ldcs(val + i) : 0.0, ok ? __ldg(x + __ldcs(col + i)) : 0.0);
    }
}

extern "C" __global__ void spmv_tc_long(const int* __restrict__ col, const double* __restrict__ val,
                                        const double* __restrict__ x, const int* __restrict__ piece_begin,
                                        const int* __restrict__ piece_end, int n_pieces,
                                        double* __restrict__ partial) {
    const int lane = threadIdx.x & 31;
    const long long piece = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
    if (piece >= n_pieces) return;  // warp-uniform
    const int begin = piece_begin[piece], end = piece_end[piece];
    double d0 = 0.0, d1 = 0.0;
    accumulate<32>(col, val, x, begin + lane, end, (end - begin + 31) >> 5, d0, d1);
    double s = row_share(d0, d1, lane);
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    if (lane == 0) partial[piece] = s;
}

// Warps [0, n_short): short groups; [n_short, n_groups): medium groups (chunks pack_ptr[g]..[g+1]
// of pack_col / pack_val, g = warp - n_short); then the long rows' sums.
extern "C" __global__ void spmv_tc_rows(const int* __restrict__ rowptr, const int* __restrict__ col,
                                        const double* __restrict__ val, const double* __restrict__ x,
                                        double* __restrict__ y, const int* __restrict__ group_rows,
                                        long long n_short, long long n_groups, const int* __restrict__ pack_ptr,
                                        const int* __restrict__ pack_col, const double* __restrict__ pack_val,
                                        const int* __restrict__ long_rows, const int* __restrict__ long_piece_ptr,
                                        const double* __restrict__ partial, int n_long) {
    const int lane = threadIdx.x & 31;
    const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
    if (warp < n_groups) {
        const int r = lane >> 2, c = lane & 3;
        const int row = group_rows[warp * 8 + r];  // -1: padding past the last row of a class
        double d0 = 0.0, d1 = 0.0;
        if (warp < n_short) {
            int begin = 0, end = 0;
            if (row >= 0) {
                begin = rowptr[row];
                end = rowptr[row + 1];
            }
            const int chunks = __reduce_max_sync(0xffffffffu, (end - begin + 3) >> 2);
            accumulate<4>(col, val, x, begin + c, end, chunks, d0, d1);
        } else {
            const int k0 = pack_ptr[warp - n_short], k1 = pack_ptr[warp - n_short + 1];
            accumulate<32>(pack_col, pack_val, x, k0 * 32 + lane, k1 * 32, k1 - k0, d0, d1);
        }
        double s = row_share(d0, d1, lane);
        s += __shfl_xor_sync(0xffffffffu, s, 1);
        s += __shfl_xor_sync(0xffffffffu, s, 2);
        if (row >= 0 && c == 0) y[row] = s;
        return;
    }
    const long long t = (warp - n_groups) * 32 + lane;
    if (t < n_long) {
        double s = 0.0;
        for (int p = long_piece_ptr[t]; p < long_piece_ptr[t + 1]; ++p) s += partial[p];
        y[long_rows[t]] = s;
    }
}
