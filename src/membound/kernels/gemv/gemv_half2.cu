// Dense GEMV, y = A x in 16-bit storage (A row-major m x n) on CUDA cores: gemv_half2 (fp16) and
// gemv_half2_bf16, the CUDA-core side of fp16 and bf16 GEMV (cuBLAS has no single-matrix fp16 GEMV;
// docs/kernels_gemv.md). 16-bit A, x and y; products and sums in fp32 (membound's fp16 and bf16
// policy), y rounded to storage once. One warp per row: each
// lane loads 16 bytes (8 halves, 4 half2) of the row and the matching 16 bytes of x, GEMV_HALF2_UNROLL
// loads of A in flight, unpacks each half2 to two floats and accumulates with fp32 FMAs; the warp's
// lanes then meet by shuffles. Rows that are not 16-byte aligned (n % 8 != 0) take guarded scalar
// loads. fp16 and bf16 are raw 16-bit storage (half16.cuh's F16 and BF16).

#ifndef GEMV_HALF2_WARPS
#error "compile with -DGEMV_HALF2_WARPS=<warps (rows) per block> -DGEMV_HALF2_UNROLL=<loads in flight>"
#endif

#if !defined(__HIPCC_RTC__) && !defined(__HIP_PLATFORM_AMD__)

#include "half16.cuh"

template <class P>
__device__ __forceinline__ void fma8(float& s0, float& s1, uint4 a, uint4 x) {  // 8 products of 16-bit pairs
    const unsigned aw[4] = {a.x, a.y, a.z, a.w}, xw[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        s0 = fmaf(P::to_float(aw[i] & 0xffffu), P::to_float(xw[i] & 0xffffu), s0);
        s1 = fmaf(P::to_float(aw[i] >> 16), P::to_float(xw[i] >> 16), s1);
    }
}

template <class P>
__device__ __forceinline__ void gemv16(const unsigned short* __restrict__ a, const unsigned short* __restrict__ x,
                                       unsigned short* __restrict__ y, long long m, long long n) {
    const int lane = threadIdx.x & 31;
    const long long row = static_cast<long long>(blockIdx.x) * GEMV_HALF2_WARPS + (threadIdx.x >> 5);
    if (row >= m) return;  // warp-uniform
    const unsigned short* arow = a + row * n;
    float s0 = 0.0f, s1 = 0.0f;
    if (n % 8 == 0) {
        const uint4* a4 = reinterpret_cast<const uint4*>(arow);
        const uint4* x4 = reinterpret_cast<const uint4*>(x);
        const long long packs = n / 8;
        for (long long v = lane; v < packs; v += 32 * GEMV_HALF2_UNROLL) {
            uint4 av[GEMV_HALF2_UNROLL], xv[GEMV_HALF2_UNROLL];
#pragma unroll
            for (int u = 0; u < GEMV_HALF2_UNROLL; ++u) {
                const bool in = v + 32 * u < packs;
                av[u] = in ? a4[v + 32 * u] : make_uint4(0, 0, 0, 0);
                xv[u] = in ? x4[v + 32 * u] : make_uint4(0, 0, 0, 0);
            }
#pragma unroll
            for (int u = 0; u < GEMV_HALF2_UNROLL; ++u) fma8<P>(s0, s1, av[u], xv[u]);
        }
    } else {
        for (long long k = lane; k < n; k += 32) s0 = fmaf(P::to_float(arow[k]), P::to_float(x[k]), s0);
    }
    float s = s0 + s1;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) s += __shfl_xor_sync(0xffffffffu, s, offset);
    if (lane == 0) y[row] = P::round(s);
}

extern "C" __global__ void __launch_bounds__(32 * GEMV_HALF2_WARPS)
gemv_half2(const unsigned short* __restrict__ a, const unsigned short* __restrict__ x, unsigned short* __restrict__ y,
           long long m, long long n) {
    gemv16<F16>(a, x, y, m, n);
}

extern "C" __global__ void __launch_bounds__(32 * GEMV_HALF2_WARPS)
gemv_half2_bf16(const unsigned short* __restrict__ a, const unsigned short* __restrict__ x,
                unsigned short* __restrict__ y, long long m, long long n) {
    gemv16<BF16>(a, x, y, m, n);
}

#endif
