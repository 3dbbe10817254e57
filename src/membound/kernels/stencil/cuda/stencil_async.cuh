// Asynchronous global -> shared copies (cp.async, sm_80+) of one element (stencil_real.cuh): a copy does
// not pass through registers, so a block can prefetch its next tile or plane while it computes.
// cp.async copies 4, 8 or 16 bytes: an fp16 element (ELEM 2) is copied through a register instead,
// at once (the kernel's later waits and barriers still order it); copy_async4 and copy_async16 copy 4
// and 16 bytes.
// (tests/emulated_cuda.h defines them for the CPU emulation of the kernels.)
#pragma once
#ifndef MEMBOUND_EMULATE

__device__ __forceinline__ void copy_async(real* dst, const real* src) {
#if ELEM == 2
  *dst = __ldg(src);
#else
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src),
               "n"(ELEM)
               : "memory");
#endif
}

// 4 bytes (an fp16 pair; both addresses 4-byte aligned).
__device__ __forceinline__ void copy_async4(real* dst, const real* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src)
               : "memory");
}

// 16 bytes (a whole vector of elements; both addresses 16-byte aligned), bypassing L1.
__device__ __forceinline__ void copy_async16(real* dst, const real* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src)
               : "memory");
}

// The same through L1 (cp.async.ca: a warp's copies of one sector may merge there).
__device__ __forceinline__ void copy_async16_l1(real* dst, const real* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" ::"r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src)
               : "memory");
}

__device__ __forceinline__ void async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Wait until at most N committed groups of this thread are still in flight.
template <int N>
__device__ __forceinline__ void async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }
#endif
