// Dense GEMV, y = A x (A row-major m x n), on tensor cores (mma.sync, sm_80 and later), one source for
// every precision: the template gemv<P> over a precision's traits P (storage element, accumulator, its
// MMA), one block below per precision with its extern "C" kernel (fp64 keeps the name gemv_tc, the
// others add _<precision>). fp16 and bf16 are handled as raw 16-bit storage with PTX f16 / bf16
// instructions, so NVRTC needs no cuda_fp16.h or cuda_bf16.h.
//
// A block of GEMV_WARPS warps owns P::ROWS rows (the MMA's m); its warps take turns over the columns
// in chunks of 4 P::E. In a chunk, lane 4g+t loads, of each of its rows (g, and g + 8 where m = 16),
// the P::E consecutive entries at columns 4 P::E-chunk start + P::E t, with 16-byte loads: 64 bytes a
// lane in every precision. MMA u of the chunk takes the lane's entries u K/4 .. (u+1) K/4 - 1 as its k
// indices in the A fragment (fp64 m8n8k4: k = t; tf32 m16n8k8: k = t, t + 4; f16 m16n8k16:
// k = 2t, 2t + 1, 2t + 8, 2t + 9). In all three shapes the B fragment of lane 4g+t holds the same k
// indices of column g, so lanes 0..3 load the matching entries of x into B's column 0 and the other
// lanes hold 0: column 0 of the accumulated D is the rows' partial y and the other 7 columns are
// padding. 1/8 of the unit's multiply-adds are useful (paper 000 eq. 6-7: GEMV has n = 1). Lane 4g
// holds D(g, 0) (and D(g + 8, 0)); the warps' partial sums meet in shared memory, in the accumulator
// type, and the result is rounded to storage once. Ragged m and n: rows and columns beyond the matrix
// load 0 (a chunk that is not whole, or rows not 16-byte aligned: guarded scalar loads); loop bounds
// are warp-uniform.
//
// - fp64: mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64, 8 rows, 8 MMAs of k = 4 a chunk of 32.
// - fp32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32, operands rounded by cvt.rna.tf32.f32,
//   fp32 accumulate; 16 rows, 4 MMAs of k = 8 a chunk of 32.
// - fp16: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32, fp32 accumulate; 16 rows, 4 MMAs of
//   k = 16 a chunk of 64. bf16: the same with mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32.

#ifndef GEMV_WARPS
#error "compile with -DGEMV_WARPS=<warps per block>"
#endif

#if !defined(__HIPCC_RTC__) && !defined(__HIP_PLATFORM_AMD__) && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800)

template <class P>
struct alignas(16) Pack {  // 16 bytes of storage: what a lane loads at once
    typename P::Word w[16 / sizeof(typename P::Word)];
};

template <class P>  // word i of a lane's packs
__device__ __forceinline__ typename P::Word word(const Pack<P>* p, int i) {
    constexpr int W = 16 / sizeof(typename P::Word);
    return p[i / W].w[i % W];
}

template <class P>  // count packs of row p from column col: 16-byte loads where `wide`, else guarded
__device__ __forceinline__ void load(Pack<P>* v, int count, const typename P::Elem* p, bool in, bool wide,
                                     long long col, long long n) {
    using Elem = typename P::Elem;
    constexpr int VEC = 16 / sizeof(Elem);
#pragma unroll
    for (int i = 0; i < count; ++i) {
        if (wide) {
            v[i] = in ? reinterpret_cast<const Pack<P>*>(p + col)[i] : Pack<P>{};
        } else {
            Elem e[VEC];
#pragma unroll
            for (int j = 0; j < VEC; ++j) e[j] = (in && col + VEC * i + j < n) ? p[col + VEC * i + j] : Elem(0);
            memcpy(&v[i], e, 16);
        }
    }
}

template <class P>
__device__ __forceinline__ void gemv(const typename P::Elem* __restrict__ a, const typename P::Elem* __restrict__ x,
                                     typename P::Elem* __restrict__ y, long long m, long long n) {
    using Acc = typename P::Acc;
    constexpr int VEC = 16 / sizeof(typename P::Elem), RPL = P::ROWS / 8, PACKS = P::E / VEC;
    constexpr int KCHUNK = 4 * P::E;
    __shared__ Acc partial[GEMV_WARPS][P::ROWS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    const long long row0 = static_cast<long long>(blockIdx.x) * P::ROWS;
    const long long chunks = (n + KCHUNK - 1) / KCHUNK;
    Acc d[P::D] = {};
    for (long long chunk = warp; chunk < chunks; chunk += GEMV_WARPS) {
        const long long col = chunk * KCHUNK + P::E * t;
        const bool wide = n % VEC == 0 && (chunk + 1) * KCHUNK <= n;  // warp-uniform
        Pack<P> av[RPL][PACKS], xv[PACKS];
#pragma unroll
        for (int r = 0; r < RPL; ++r) {
            const long long row = row0 + g + 8 * r;
            load<P>(av[r], PACKS, a + (row < m ? row : 0) * n, row < m, wide, col, n);
        }
        load<P>(xv, PACKS, x, g == 0, wide, col, n);  // lanes 0..3: B(k, 0)
        P::mma(d, av, xv);
    }
    if (t == 0) {
#pragma unroll
        for (int r = 0; r < RPL; ++r) partial[warp][g + 8 * r] = d[2 * r];  // D(g + 8r, 0)
    }
    __syncthreads();
    if (warp == 0 && lane < P::ROWS) {
        Acc sum = 0;
#pragma unroll
        for (int w = 0; w < GEMV_WARPS; ++w) sum += partial[w][lane];
        if (row0 + lane < m) y[row0 + lane] = P::store(sum);
    }
}

// ---------------------------------------------------------------------------------------------- fp64

struct Fp64 {
    using Elem = double;
    using Word = double;
    using Acc = double;
    static constexpr int ROWS = 8, E = 8, D = 2;  // m8n8k4: 8 MMAs of one k a lane
    __device__ static void mma(double (&d)[D], const Pack<Fp64> (&a)[1][4], const Pack<Fp64> (&x)[4]) {
#pragma unroll
        for (int u = 0; u < 8; ++u)
            asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
                : "+d"(d[0]), "+d"(d[1])
                : "d"(word<Fp64>(a[0], u)), "d"(word<Fp64>(x, u)));
    }
    __device__ static Elem store(Acc s) { return s; }
};

extern "C" __global__ void __launch_bounds__(32 * GEMV_WARPS)
gemv_tc(const double* __restrict__ a, const double* __restrict__ x, double* __restrict__ y, long long m, long long n) {
    gemv<Fp64>(a, x, y, m, n);
}

// ---------------------------------------------------------------------------------------------- fp32

__device__ __forceinline__ unsigned tf32(float v) {  // round to nearest, ties away (the CPU emulation's rounding)
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
    return r;
}

struct Fp32 {
    using Elem = float;
    using Word = float;
    using Acc = float;
    static constexpr int ROWS = 16, E = 8, D = 4;  // m16n8k8: 4 MMAs of two k a lane (t and t + 4)
    __device__ static void mma(float (&d)[D], const Pack<Fp32> (&a)[2][2], const Pack<Fp32> (&x)[2]) {
#pragma unroll
        for (int u = 0; u < 4; ++u)
            asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                "{%0, %1, %2, %3};"
                : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                : "r"(tf32(word<Fp32>(a[0], 2 * u))), "r"(tf32(word<Fp32>(a[1], 2 * u))),
                  "r"(tf32(word<Fp32>(a[0], 2 * u + 1))), "r"(tf32(word<Fp32>(a[1], 2 * u + 1))),
                  "r"(tf32(word<Fp32>(x, 2 * u))), "r"(tf32(word<Fp32>(x, 2 * u + 1))));
    }
    __device__ static Elem store(Acc s) { return s; }
};

extern "C" __global__ void __launch_bounds__(32 * GEMV_WARPS)
gemv_tc_fp32(const float* __restrict__ a, const float* __restrict__ x, float* __restrict__ y, long long m, long long n) {
    gemv<Fp32>(a, x, y, m, n);
}

// ---------------------------------------------------------------------------------------------- fp16, bf16

#include "half16.cuh"

template <class Ops>
struct Half16 {                   // fp16 and bf16: the same fragments, each format's MMA and rounding (half16.cuh)
    using Elem = unsigned short;  // fp16 / bf16 bits
    using Word = unsigned;        // two of them (x2), the lower-indexed in the low half
    using Acc = float;
    static constexpr int ROWS = 16, E = 16, D = 4;  // m16n8k16: 4 MMAs of four k a lane (2t, 2t+1, 2t+8, 2t+9)
    __device__ static void mma(float (&d)[D], const Pack<Half16> (&a)[2][2], const Pack<Half16> (&x)[2]) {
#pragma unroll
        for (int u = 0; u < 4; ++u)
            Ops::mma(d, word<Half16>(a[0], 2 * u), word<Half16>(a[1], 2 * u), word<Half16>(a[0], 2 * u + 1),
                     word<Half16>(a[1], 2 * u + 1), word<Half16>(x, 2 * u), word<Half16>(x, 2 * u + 1));
    }
    __device__ static Elem store(Acc s) { return Ops::round(s); }
};

extern "C" __global__ void __launch_bounds__(32 * GEMV_WARPS)
gemv_tc_fp16(const unsigned short* __restrict__ a, const unsigned short* __restrict__ x, unsigned short* __restrict__ y,
             long long m, long long n) {
    gemv<Half16<F16>>(a, x, y, m, n);
}

extern "C" __global__ void __launch_bounds__(32 * GEMV_WARPS)
gemv_tc_bf16(const unsigned short* __restrict__ a, const unsigned short* __restrict__ x, unsigned short* __restrict__ y,
             long long m, long long n) {
    gemv<Half16<BF16>>(a, x, y, m, n);
}

#endif
