// What the tensor-core stencil kernels (stencil_tc.cu, stencil_tc3.cu) share: the periodic wrap and
// the FP64 MMA D += A B (m8n8k4; lane l holds A(l/4, l%4), B(l%4, l/4) and D(l/4, 2(l%4) + {0,1})).
// TWIN=1 builds the CUDA-core twin (issue 15): the same MMA on the same register fragments, done with
// 12 shuffles and 8 FMAs per lane, so every load, store and launch of the kernel stays the same.
#pragma once

#ifndef TWIN
#define TWIN 0
#endif

__device__ __forceinline__ int wrap(int i, int n) {
  if (i < 0 || i >= n) { i %= n; if (i < 0) i += n; }
  return i;
}

__device__ __forceinline__ void dmma(double& c0, double& c1, double a, double b) {
#if TWIN
  const int lane = threadIdx.x & 31, r = lane >> 2, q = lane & 3;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const double ak = __shfl_sync(0xffffffffu, a, 4 * r + k);          // A(r, k)
    c0 = fma(ak, __shfl_sync(0xffffffffu, b, 8 * q + k), c0);          // B(k, 2q)
    c1 = fma(ak, __shfl_sync(0xffffffffu, b, 8 * q + 4 + k), c1);      // B(k, 2q + 1)
  }
#else
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
               : "+d"(c0), "+d"(c1) : "d"(a), "d"(b));
#endif
}
