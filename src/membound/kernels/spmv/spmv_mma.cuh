// The precisions of spmv_tc.cu: one traits struct each, selected there with -DPREC=<name>. A traits
// struct gives val (storage of A, x and y), acc (the accumulator), vec (a lane's S values: one 8-byte
// load), S (slots per lane per MMA), NC (accumulator registers per lane) and
//   load(p): this lane's S values of A;  gather(x, c): x at S columns;  masked(b, segs, j): b with the
//   slots whose segment is not j zeroed;  mma(d, a, b): d += A B;  dot(a, b, s): s + the S products
//   (FMAs, the twin);  narrow(s): the accumulator rounded to storage.
// Adding a precision: a struct here (a 16-bit format: its F of half16) beside its record in membound.model.precision.

__device__ __forceinline__ void mma_guard() {
#if __CUDA_ARCH__ < 800
    __trap();  // spmv.py never launches the kernel below sm_80
#endif
}

// The 2-bit segment of slot s from a lane's packed segment word.
__device__ __forceinline__ bool in_segment(int segs, int s, int j) { return ((segs >> (2 * s)) & 3) == j; }

struct fp64 {  // storage and accumulation in binary64, DMMA
    using val = double;
    using acc = double;
    using vec = double;
    static constexpr int S = 1, NC = 2;
    __device__ static vec load(const val* p) { return __ldcs(p); }
    __device__ static vec gather(const val* x, const int (&c)[S]) { return __ldg(x + c[0]); }
    __device__ static vec masked(vec b, int segs, int j) { return in_segment(segs, 0, j) ? b : 0.0; }
    __device__ static acc dot(vec a, vec b, acc s) { return __fma_rn(a, b, s); }
    __device__ static val narrow(acc s) { return s; }
    __device__ static void mma(acc (&d)[NC], vec a, vec b) {
        mma_guard();
        asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
            : "+d"(d[0]), "+d"(d[1])
            : "d"(a), "d"(b));
    }
};

__device__ __forceinline__ unsigned to_tf32(float v) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
    return r;
}

struct fp32 {  // binary32 storage, TF32 operands (rounded to nearest, ties away), f32 accumulation
    using val = float;
    using acc = float;
    using vec = float2;
    static constexpr int S = 2, NC = 4;
    __device__ static vec load(const val* p) { return __ldcs(reinterpret_cast<const float2*>(p)); }
    __device__ static vec gather(const val* x, const int (&c)[S]) { return make_float2(__ldg(x + c[0]), __ldg(x + c[1])); }
    __device__ static vec masked(vec b, int segs, int j) {
        return make_float2(in_segment(segs, 0, j) ? b.x : 0.0f, in_segment(segs, 1, j) ? b.y : 0.0f);
    }
    __device__ static acc dot(vec a, vec b, acc s) { return __fmaf_rn(a.y, b.y, __fmaf_rn(a.x, b.x, s)); }
    __device__ static val narrow(acc s) { return s; }
    __device__ static void mma(acc (&d)[NC], vec a, vec b) {
        mma_guard();
        asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(to_tf32(a.x)), "r"(0u), "r"(to_tf32(a.y)), "r"(0u), "r"(to_tf32(b.x)), "r"(to_tf32(b.y)));
    }
};

#include "half16.cuh"

template <class F>
struct half16 {  // 16-bit storage (raw bits, two to a 32-bit word), operands of format F, f32 accumulation
    using val = unsigned short;
    using acc = float;
    using vec = uint2;  // slots 0 1 in .x (low half first), 2 3 in .y: the A and B registers as they are
    static constexpr int S = 4, NC = 4;
    __device__ static vec load(const val* p) { return __ldcs(reinterpret_cast<const uint2*>(p)); }
    __device__ static unsigned pair(unsigned short lo, unsigned short hi) { return lo | static_cast<unsigned>(hi) << 16; }
    __device__ static vec gather(const val* x, const int (&c)[S]) {
        return make_uint2(pair(__ldg(x + c[0]), __ldg(x + c[1])), pair(__ldg(x + c[2]), __ldg(x + c[3])));
    }
    __device__ static unsigned keep(int segs, int s, int j) {
        return (in_segment(segs, s, j) ? 0xffffu : 0u) | (in_segment(segs, s + 1, j) ? 0xffff0000u : 0u);
    }
    __device__ static vec masked(vec b, int segs, int j) { return make_uint2(b.x & keep(segs, 0, j), b.y & keep(segs, 2, j)); }
    __device__ static acc dot(vec a, vec b, acc s) {
        const unsigned av[2] = {a.x, a.y}, bv[2] = {b.x, b.y};
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            s = __fmaf_rn(F::to_float(av[r] & 0xffffu), F::to_float(bv[r] & 0xffffu), s);
            s = __fmaf_rn(F::to_float(av[r] >> 16), F::to_float(bv[r] >> 16), s);
        }
        return s;
    }
    __device__ static val narrow(acc s) { return F::round(s); }
    __device__ static void mma(acc (&d)[NC], vec a, vec b) {
        mma_guard();
        F::mma(d, a.x, 0u, a.y, 0u, b.x, b.y);   // half16.cuh: rows 8-15 of A zero
    }
};
using fp16 = half16<F16>;
using bf16 = half16<BF16>;
