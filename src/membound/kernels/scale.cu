// STREAM SCALE, a = q b in FP64, on CUDA cores (scale_cuda_core), FP64 tensor cores
// (scale_tensor_core, mma.sync m8n8k4, sm_80 and later) and the tensor-core kernel's CUDA-core twin
// (scale_tensor_core_twin: the same template, so the same loads, stores and launch shape, with the
// MMA replaced by a scalar multiply; claim C1 compares the two). All kernels share one memory path:
// warps walk the array in chunks of CHUNK elements (grid-stride; scale.py launches one chunk per
// warp); each lane issues SCALE_UNROLL independent 16-byte (double2) loads, coalesced across the
// warp (512 bytes per warp load), before the first use. The last n % CHUNK elements (any n) are
// done by one warp with guarded scalar accesses. Loop bounds are warp-uniform, as mma.sync requires.
//
// Tensor cores, A = B(qI) (paper 000 Sec. 5.1, Figure 5): the 32 lanes' values form the 8x4 A
// operand (lane 4r+c holds A(r,c)); the 4x8 B operand is q E with E(k,j) = 1 where j/2 == k, i.e.
// qI with every column doubled. Then D(r,2c) = D(r,2c+1) = q A(r,c), and the D fragment of lane
// 4r+c is exactly {D(r,2c), D(r,2c+1)}: every lane gets back its own value times q, so loads and
// stores keep the wide, coalesced layout and every element of b passes through an MMA. One MMA
// scales 32 elements with 256 multiply-adds (1/8 of the unit, as the paper counts).

#ifndef SCALE_UNROLL  // double2 loads in flight per lane per chunk, set by scale.py
#error "compile with -DSCALE_UNROLL=<k>"
#endif

constexpr int CHUNK = 32 * 2 * SCALE_UNROLL;  // elements per warp per step

struct CudaCore {
    double q;
    __device__ explicit CudaCore(double q_, int) : q(q_) {}
    __device__ double operator()(double x) const { return q * x; }
};

using TensorCoreTwin = CudaCore;  // the tensor-core kernel's arithmetic on CUDA cores: one multiply per element

#if !defined(__HIPCC_RTC__) && !defined(__HIP_PLATFORM_AMD__) && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800)
#define SCALE_HAS_FP64_MMA 1
struct TensorCore {
    double e;  // this lane's B fragment: B(k = lane % 4, j = lane / 4) = q if j / 2 == k, else 0
    __device__ explicit TensorCore(double q, int lane) : e(((lane >> 3) == (lane & 3)) ? q : 0.0) {}
    __device__ double operator()(double x) const {
        double d0;
        [[maybe_unused]] double d1;  // holds the same product as d0
        asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%4, %5};"
            : "=d"(d0), "=d"(d1)
            : "d"(x), "d"(e), "d"(0.0), "d"(0.0));
        return d0;
    }
};
#endif

template <class Op>
__device__ __forceinline__ void scale(double* __restrict__ a, const double* __restrict__ b, double q,
                                      long long n) {
    const int lane = threadIdx.x & 31;
    const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
    const long long warps = (static_cast<long long>(gridDim.x) * blockDim.x) >> 5;
    const Op op(q, lane);
    const long long chunks = n / CHUNK;
    const double2* b2 = reinterpret_cast<const double2*>(b);
    double2* a2 = reinterpret_cast<double2*>(a);
    for (long long c = warp; c < chunks; c += warps) {
        const long long base = c * (CHUNK / 2) + lane;
        double2 x[SCALE_UNROLL];
#pragma unroll
        for (int u = 0; u < SCALE_UNROLL; ++u) x[u] = b2[base + 32 * u];
#pragma unroll
        for (int u = 0; u < SCALE_UNROLL; ++u) a2[base + 32 * u] = make_double2(op(x[u].x), op(x[u].y));
    }
    if (warp == chunks % warps) {
        for (long long start = chunks * CHUNK; start < n; start += 32) {
            const long long i = start + lane;
            const double y = op(i < n ? b[i] : 0.0);
            if (i < n) a[i] = y;
        }
    }
}

extern "C" __global__ void scale_cuda_core(double* __restrict__ a, const double* __restrict__ b, double q,
                                           long long n) {
    scale<CudaCore>(a, b, q, n);
}

extern "C" __global__ void scale_tensor_core_twin(double* __restrict__ a, const double* __restrict__ b, double q,
                                                long long n) {
    scale<TensorCoreTwin>(a, b, q, n);
}

#ifdef SCALE_HAS_FP64_MMA
extern "C" __global__ void scale_tensor_core(double* __restrict__ a, const double* __restrict__ b, double q,
                                             long long n) {
    scale<TensorCore>(a, b, q, n);
}
#endif
