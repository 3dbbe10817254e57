// Dense GEMV, y = A x in FP64 (A row-major m x n), on FP64 tensor cores: mma.sync m8n8k4 (sm_80 and
// later). A block of GEMV_WARPS warps owns 8 rows; its warps take turns over the columns in chunks
// of 32 (8 MMAs of k = 4). In a chunk, lane 4r+c loads the 8 consecutive entries A(r0 + r, k0 + 8c
// .. 8c + 7) (four 16-byte loads when n is even) and feeds entry u to MMA u as A(r, k = c); since a
// sum does not care in which order its terms come, the B operand of MMA u holds, in its column 0,
// the matching x(k0 + 8c + u) (lane 4j+k holds B(k, j): lanes 0..3 load x, the others hold 0). So
// column 0 of the accumulated 8x8 D is the 8 rows' partial y and the other 7 columns are padding:
// 1/8 of the unit's multiply-adds are useful (paper 000 eq. 6-7: GEMV has n = 1). Lane 4r holds
// D(r, 0); the warps' partial sums meet in shared memory. Ragged m and n: rows and columns beyond the
// matrix load 0 (the last chunk with guarded scalar loads); loop bounds are warp-uniform.

#ifndef GEMV_WARPS
#error "compile with -DGEMV_WARPS=<warps per block>"
#endif

constexpr int KCHUNK = 32;  // columns per warp step: 8 MMAs of k = 4

__device__ __forceinline__ void load8(double* v, const double* p, bool in, bool wide, long long col, long long n) {
    if (wide) {  // the whole chunk is inside and 16-byte aligned
#pragma unroll
        for (int u = 0; u < 8; u += 2) {
            const double2 t = in ? *reinterpret_cast<const double2*>(p + col + u) : make_double2(0.0, 0.0);
            v[u] = t.x;
            v[u + 1] = t.y;
        }
    } else {
#pragma unroll
        for (int u = 0; u < 8; ++u) v[u] = (in && col + u < n) ? p[col + u] : 0.0;
    }
}

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
        const bool wide = (n % 2 == 0) && k0 + KCHUNK <= n;  // warp-uniform
        double av[8], bv[8];
        load8(av, arow, row_in, wide, k0 + 8 * c, n);
        load8(bv, x, r == 0, wide, k0 + 8 * c, n);        // lanes 0..3: B(c, 0) of the 8 MMAs
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
