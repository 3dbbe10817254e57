// Dense GEMV, y = A x in FP64 (A row-major m x n), on FP64 tensor cores: mma.sync m8n8k4 (sm_80 and
// later). A block of GEMV_WARPS warps owns 8 rows; its warps take turns over the columns in chunks
// of 32 (8 MMAs of k = 4), so a row's 256 bytes per chunk are read by one warp, 8 loads in flight per
// lane before the first MMA. Per MMA the 32 lanes hold the 8x4 A operand (lane 4r+c holds
// A(r0 + r, k0 + c)); the 4x8 B operand carries the 4 entries of x in its column 0 (lane 4j+k holds
// B(k, j) = x(k0 + k) for j = 0, else 0), so column 0 of the accumulated 8x8 D is the 8 rows' partial
// y and the other 7 columns are padding: 1/8 of the unit's multiply-adds are useful (paper 000 eq. 6-7:
// GEMV has n = 1). Lane 4r holds D(r, 0); the warps' partial sums meet in shared memory.
// Ragged m and n: rows and columns beyond the matrix load 0; loop bounds are warp-uniform.

#ifndef GEMV_WARPS
#error "compile with -DGEMV_WARPS=<warps per block>"
#endif

constexpr int KCHUNK = 32;  // columns per warp step: 8 MMAs of k = 4

extern "C" __global__ void __launch_bounds__(32 * GEMV_WARPS)
gemv_tc(const double* __restrict__ a, const double* __restrict__ x, double* __restrict__ y, long long m,
        long long n) {
    __shared__ double partial[GEMV_WARPS][8];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int r = lane >> 2, c = lane & 3;
    const long long row = static_cast<long long>(blockIdx.x) * 8 + r;
    const bool row_in = row < m;
    const double* arow = a + (row_in ? row : 0) * n;
    const long long chunks = (n + KCHUNK - 1) / KCHUNK;
    double d0 = 0.0, d1 = 0.0;
    for (long long chunk = warp; chunk < chunks; chunk += GEMV_WARPS) {
        const long long k0 = chunk * KCHUNK;
        double av[8], bv[8];
#pragma unroll
        for (int u = 0; u < 8; ++u) {
            const long long col = k0 + 4 * u + c;
            av[u] = (row_in && col < n) ? arow[col] : 0.0;
            bv[u] = (r == 0 && col < n) ? x[col] : 0.0;  // lanes 0..3 are B's column 0: B(c, 0)
        }
#pragma unroll
        for (int u = 0; u < 8; ++u)
            asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
                : "+d"(d0), "+d"(d1)
                : "d"(av[u]), "d"(bv[u]));
    }
    if (c == 0) partial[warp][r] = d0;  // D(r, 0)
    __syncthreads();
    if (warp == 0 && lane < 8) {
        double sum = 0.0;
#pragma unroll
        for (int w = 0; w < GEMV_WARPS; ++w) sum += partial[w][lane];
        const long long out = static_cast<long long>(blockIdx.x) * 8 + lane;
        if (out < m) y[out] = sum;
    }
}
