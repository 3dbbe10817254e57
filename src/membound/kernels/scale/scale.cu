// STREAM SCALE, a = q b, one source for every precision: the template scale<P, Op> over a precision's
// traits P (fp64, fp32, fp16, bf16: storage element, 16-byte pack, multiply) and its arithmetic Op: CudaCore
// (q * x on CUDA cores in the storage format; fp16 as half2), TensorCore (an MMA, sm_80 and later) and
// TensorCoreTwin (the tensor-core kernel with its MMA replaced by the scalar multiply: the same loads,
// stores and launch shape; claim C1 compares the two). Each precision is one block below (its traits,
// its TensorCore and three extern "C" kernels); fp64 keeps the names scale_<impl>, the others add
// _<precision>. All kernels share one memory path: warps walk the array in chunks of
// 32 x SCALE_UNROLL x (16 bytes) (grid-stride; scale.py launches one chunk per warp); each lane issues
// SCALE_UNROLL independent 16-byte loads, coalesced across the warp, before the first use. The last
// n % chunk elements (any n) are done by one warp, each lane gathering one zero-padded 16-byte pack
// with guarded scalar accesses. Loop bounds are warp-uniform, as mma.sync requires. fp16 and bf16 are
// handled as raw 16-bit storage with PTX f16 / bf16 instructions, so NVRTC needs no cuda_fp16.h or
// cuda_bf16.h.
//
// Tensor cores, A = B(qP): every lane's 16-byte pack enters the A operand and comes back, scaled, in
// its own D fragment, so loads and stores keep the wide, coalesced layout (paper 000 Sec. 5.1).
// Lane 4g+t (g = lane / 4, t = lane % 4); useful share of the MMA's multiply-adds per precision:
// - fp64, m8n8k4 f64, per double (2 MMAs a pack): lane 4r+c holds A(r,c); B = qE, E(k,j) = 1 where
//   j/2 == k (qI with every column doubled), so D(r,2c) = D(r,2c+1) = q A(r,c), lane 4r+c's D
//   fragment. 32 elements per 256 multiply-adds: 1/8.
// - fp32, m16n8k8 tf32 (operands rounded by cvt.rna.tf32.f32, fp32 accumulate), one MMA a pack
//   x0..x3: a0 = A(g,t), a1 = A(g+8,t), a2 = A(g,t+4), a3 = A(g+8,t+4) take x0, x2, x1, x3;
//   B = qP with P(k,2k) = P(k+4,2k+1) = 1 (k < 4), so d0 = D(g,2t), d1 = D(g,2t+1), d2 = D(g+8,2t),
//   d3 = D(g+8,2t+1) are q x0..q x3. 128 elements per 1024 multiply-adds: 1/8.
// - fp16, m16n8k16 f16 (fp32 accumulate, rounded to fp16 on the way out), 2 MMAs a pack, each on
//   4 halves: a0 = {A(g,2t), A(g,2t+1)}, a1 = {A(g+8,2t), A(g+8,2t+1)}, a2 = a3 = 0; B = q [I8; 0],
//   so d0..d3 = D(g,2t), D(g,2t+1), D(g+8,2t), D(g+8,2t+1) are q times the 4 halves.
//   128 elements per 2048 multiply-adds: 1/16.
// - bf16, m16n8k16 bf16: the fp16 fragments and B with the bf16 instructions (TensorCore16). 1/16.
// The products of q and x are exact in the fp32 accumulator (tf32 and f16 significands have 11 bits,
// bf16 8)
// and the other terms are exact zeros: D is q x rounded once (fp64: exactly q x rounded).

#ifndef SCALE_UNROLL  // 16-byte loads in flight per lane per chunk, set by scale.py
#error "compile with -DSCALE_UNROLL=<k>"
#endif

#if !defined(__HIPCC_RTC__) && !defined(__HIP_PLATFORM_AMD__)
#define SCALE_NVIDIA 1  // PTX f16 arithmetic
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define SCALE_HAS_MMA 1  // mma.sync f64, tf32 and f16 (sm_80 and later)
#endif
#endif

template <class P>
struct alignas(16) Pack {  // what a lane loads and stores at once
    typename P::Word w[16 / sizeof(typename P::Word)];
};

template <class P>
struct CudaCore {  // q * x per element on CUDA cores, in the storage format
    typename P::Word q;
    __device__ explicit CudaCore(double q_, int) : q(P::splat(q_)) {}
    __device__ Pack<P> operator()(Pack<P> x) const {
#pragma unroll
        for (auto& w : x.w) w = P::mul(q, w);
        return x;
    }
};

template <class P>
using TensorCoreTwin = CudaCore<P>;  // the tensor-core kernel's arithmetic on CUDA cores: one multiply per element

template <class P>
struct TensorCore;  // one specialisation per precision, below

template <class P, class Op>
__device__ __forceinline__ void scale(typename P::Elem* __restrict__ a, const typename P::Elem* __restrict__ b,
                                      double q, long long n) {
    using Elem = typename P::Elem;
    constexpr int VEC = 16 / sizeof(Elem);                 // elements per pack
    constexpr long long CHUNK = 32LL * VEC * SCALE_UNROLL;  // elements per warp step
    const int lane = threadIdx.x & 31;
    const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
    const long long warps = (static_cast<long long>(gridDim.x) * blockDim.x) >> 5;
    const Op op(q, lane);
    const long long chunks = n / CHUNK;
    const Pack<P>* bv = reinterpret_cast<const Pack<P>*>(b);
    Pack<P>* av = reinterpret_cast<Pack<P>*>(a);
    for (long long c = warp; c < chunks; c += warps) {
        const long long base = c * (32 * SCALE_UNROLL) + lane;
        Pack<P> x[SCALE_UNROLL];
#pragma unroll
        for (int u = 0; u < SCALE_UNROLL; ++u) x[u] = bv[base + 32 * u];
#pragma unroll
        for (int u = 0; u < SCALE_UNROLL; ++u) av[base + 32 * u] = op(x[u]);
    }
    if (warp == chunks % warps) {
        for (long long start = chunks * CHUNK; start < n; start += 32 * VEC) {
            const long long i = start + lane * VEC;
            Elem e[VEC];
#pragma unroll
            for (int j = 0; j < VEC; ++j) e[j] = i + j < n ? b[i + j] : Elem(0);
            Pack<P> x;
            memcpy(&x, e, 16);
            x = op(x);
            memcpy(e, &x, 16);
#pragma unroll
            for (int j = 0; j < VEC; ++j)
                if (i + j < n) a[i + j] = e[j];
        }
    }
}

#ifdef SCALE_HAS_MMA
__device__ __forceinline__ unsigned tf32(float x) {  // round to nearest, ties away (the CPU emulation's rounding)
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}
#endif

// ---------------------------------------------------------------------------------------------- fp64

struct Fp64 {
    using Elem = double;
    using Word = double;
    __device__ static Word splat(double q) { return q; }
    __device__ static Word mul(Word q, Word x) { return q * x; }
};

#ifdef SCALE_HAS_MMA
template <>
struct TensorCore<Fp64> {
    double e;  // this lane's B fragment: B(k = lane % 4, j = lane / 4) = q if j / 2 == k, else 0
    __device__ explicit TensorCore(double q, int lane) : e(((lane >> 3) == (lane & 3)) ? q : 0.0) {}
    __device__ Pack<Fp64> operator()(Pack<Fp64> x) const {
#pragma unroll
        for (auto& w : x.w) {
            [[maybe_unused]] double d1;  // holds the same product as d0
            asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%4, %4};"
                : "=d"(w), "=d"(d1)
                : "d"(w), "d"(e), "d"(0.0));
        }
        return x;
    }
};
#endif

extern "C" __global__ void scale_cuda_core(double* __restrict__ a, const double* __restrict__ b, double q,
                                           long long n) {
    scale<Fp64, CudaCore<Fp64>>(a, b, q, n);
}
extern "C" __global__ void scale_tensor_core_twin(double* __restrict__ a, const double* __restrict__ b, double q,
                                                  long long n) {
    scale<Fp64, TensorCoreTwin<Fp64>>(a, b, q, n);
}
#ifdef SCALE_HAS_MMA
extern "C" __global__ void scale_tensor_core(double* __restrict__ a, const double* __restrict__ b, double q,
                                             long long n) {
    scale<Fp64, TensorCore<Fp64>>(a, b, q, n);
}
#endif

// ---------------------------------------------------------------------------------------------- fp32

struct Fp32 {
    using Elem = float;
    using Word = float;
    __device__ static Word splat(double q) { return static_cast<float>(q); }
    __device__ static Word mul(Word q, Word x) { return q * x; }
};

#ifdef SCALE_HAS_MMA
template <>
struct TensorCore<Fp32> {
    unsigned b0, b1;  // this lane's B = qP fragment: B(t, g) = q if g == 2t, B(t + 4, g) = q if g == 2t + 1
    __device__ explicit TensorCore(double q, int lane) {
        const unsigned qt = tf32(static_cast<float>(q));
        const int g = lane >> 2, t = lane & 3;
        b0 = g == 2 * t ? qt : 0u;
        b1 = g == 2 * t + 1 ? qt : 0u;
    }
    __device__ Pack<Fp32> operator()(Pack<Fp32> x) const {
        Pack<Fp32> d;
        asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%10, %10, %10, %10};"
            : "=f"(d.w[0]), "=f"(d.w[1]), "=f"(d.w[2]), "=f"(d.w[3])
            : "r"(tf32(x.w[0])), "r"(tf32(x.w[2])), "r"(tf32(x.w[1])), "r"(tf32(x.w[3])), "r"(b0), "r"(b1),
              "f"(0.0f));
        return d;
    }
};
#endif

extern "C" __global__ void scale_cuda_core_fp32(float* __restrict__ a, const float* __restrict__ b, double q,
                                                long long n) {
    scale<Fp32, CudaCore<Fp32>>(a, b, q, n);
}
extern "C" __global__ void scale_tensor_core_twin_fp32(float* __restrict__ a, const float* __restrict__ b, double q,
                                                       long long n) {
    scale<Fp32, TensorCoreTwin<Fp32>>(a, b, q, n);
}
#ifdef SCALE_HAS_MMA
extern "C" __global__ void scale_tensor_core_fp32(float* __restrict__ a, const float* __restrict__ b, double q,
                                                  long long n) {
    scale<Fp32, TensorCore<Fp32>>(a, b, q, n);
}
#endif

// ---------------------------------------------------------------------------------------------- fp16, bf16

#ifdef SCALE_NVIDIA
struct Fp16 {
    using Elem = unsigned short;  // fp16 bits
    using Word = unsigned;        // two fp16 (f16x2), the lower-indexed in the low half
    __device__ static Word splat(double q) {
        unsigned short h;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(static_cast<float>(q)));  // exact: q is an fp16 value
        return h | static_cast<unsigned>(h) << 16;
    }
    __device__ static Word mul(Word q, Word x) {  // half2: two products, each rounded once to fp16
        Word y;
        asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(y) : "r"(q), "r"(x));
        return y;
    }
    __device__ static Word pack(float lo, float hi) {  // two fp32 rounded to fp16, lo in the low half
        Word y;
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(y) : "f"(hi), "f"(lo));
        return y;
    }
    __device__ static void mma(float (&d)[4], Word a0, Word a1, Word b0) {  // a2 = a3 = b1 = 0, C = 0
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %6}, {%7, %6}, "
            "{%8, %8, %8, %8};"
            : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
            : "r"(a0), "r"(a1), "r"(0u), "r"(b0), "f"(0.0f));
    }
};

struct Bf16 {  // as Fp16 with the bf16 instructions (sm_80: fma.rn.bf16x2, cvt.rn.bf16*.f32, mma .bf16)
    using Elem = unsigned short;  // bf16 bits
    using Word = unsigned;        // two bf16 (bf16x2), the lower-indexed in the low half
    __device__ static Word splat(double q) {
        unsigned short h;
        asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(static_cast<float>(q)));  // exact: q is a bf16 value
        return h | static_cast<unsigned>(h) << 16;
    }
    __device__ static Word mul(Word q, Word x) {  // q x + (-0): each product rounded once, -0 keeps its sign
        Word y;
        asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(y) : "r"(q), "r"(x), "r"(0x80008000u));
        return y;
    }
    __device__ static Word pack(float lo, float hi) {
        Word y;
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(y) : "f"(hi), "f"(lo));
        return y;
    }
    __device__ static void mma(float (&d)[4], Word a0, Word a1, Word b0) {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %6}, {%7, %6}, "
            "{%8, %8, %8, %8};"
            : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
            : "r"(a0), "r"(a1), "r"(0u), "r"(b0), "f"(0.0f));
    }
};
#endif

#ifdef SCALE_HAS_MMA
template <class P>
struct TensorCore16 {  // fp16 and bf16: m16n8k16, fp32 accumulate (the 16-bit formats' fragments are alike)
    unsigned b0;  // this lane's B = q [I8; 0] fragment {B(2t, g), B(2t + 1, g)}; {B(2t + 8, g), B(2t + 9, g)} = 0
    __device__ explicit TensorCore16(double q, int lane) {
        const unsigned h = P::splat(q) & 0xffffu;
        const int g = lane >> 2, t = lane & 3;
        b0 = g == 2 * t ? h : g == 2 * t + 1 ? h << 16 : 0u;
    }
    __device__ Pack<P> operator()(Pack<P> x) const {
#pragma unroll
        for (int m = 0; m < 2; ++m) {  // words 2m (row g) and 2m + 1 (row g + 8): 4 halves
            float d[4];
            P::mma(d, x.w[2 * m], x.w[2 * m + 1], b0);
            x.w[2 * m] = P::pack(d[0], d[1]);
            x.w[2 * m + 1] = P::pack(d[2], d[3]);
        }
        return x;
    }
};
template <>
struct TensorCore<Fp16> : TensorCore16<Fp16> {
    using TensorCore16<Fp16>::TensorCore16;
};
template <>
struct TensorCore<Bf16> : TensorCore16<Bf16> {
    using TensorCore16<Bf16>::TensorCore16;
};
#endif

#ifdef SCALE_NVIDIA
extern "C" __global__ void scale_cuda_core_fp16(unsigned short* __restrict__ a, const unsigned short* __restrict__ b,
                                                double q, long long n) {
    scale<Fp16, CudaCore<Fp16>>(a, b, q, n);
}
extern "C" __global__ void scale_tensor_core_twin_fp16(unsigned short* __restrict__ a,
                                                       const unsigned short* __restrict__ b, double q, long long n) {
    scale<Fp16, TensorCoreTwin<Fp16>>(a, b, q, n);
}
extern "C" __global__ void scale_cuda_core_bf16(unsigned short* __restrict__ a, const unsigned short* __restrict__ b,
                                                double q, long long n) {
    scale<Bf16, CudaCore<Bf16>>(a, b, q, n);
}
extern "C" __global__ void scale_tensor_core_twin_bf16(unsigned short* __restrict__ a,
                                                       const unsigned short* __restrict__ b, double q, long long n) {
    scale<Bf16, TensorCoreTwin<Bf16>>(a, b, q, n);
}
#endif
#ifdef SCALE_HAS_MMA
extern "C" __global__ void scale_tensor_core_fp16(unsigned short* __restrict__ a,
                                                  const unsigned short* __restrict__ b, double q, long long n) {
    scale<Fp16, TensorCore<Fp16>>(a, b, q, n);
}
extern "C" __global__ void scale_tensor_core_bf16(unsigned short* __restrict__ a,
                                                  const unsigned short* __restrict__ b, double q, long long n) {
    scale<Bf16, TensorCore<Bf16>>(a, b, q, n);
}
#endif
