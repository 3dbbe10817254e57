// Asynchronous global -> shared copies (cp.async, sm_80+), 8 bytes each: a copy does not pass
// through registers, so a block can prefetch its next tile or plane while it computes.
// (tests/emulated_cuda.h defines them for the CPU emulation of the kernels.)
#pragma once
#ifndef MEMBOUND_EMULATE

__device__ __forceinline__ void copy_async(double* dst, const double* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src)
               : "memory");
}

__device__ __forceinline__ void async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Wait until at most N committed groups of this thread are still in flight.
template <int N>
__device__ __forceinline__ void async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }
#endif
