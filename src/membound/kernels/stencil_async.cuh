// Asynchronous global -> shared copies (cp.async, sm_80+) of one element (stencil_real.cuh): a copy does
// not pass through registers, so a block can prefetch its next tile or plane while it computes.
// cp.async copies 4, 8 or 16 bytes: an fp16 element (ELEM 2) is copied through a register instead,
// at once (the kernel's later waits and barriers still order it); copy_async4 and copy_async16 copy 4
// and 16 bytes.
// Tensor copies (cp.async.bulk.tensor, sm_90+): one instruction copies a box of a field, described by a tensor
// map the host encoded (kernels/tensor_map.py), into shared memory and counts its bytes on an mbarrier,
// which the readers wait on (PTX ISA 9.7.9.27, 9.7.13.15).
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

// An mbarrier of one arrival (the thread that arms it with its bytes), ready before any copy counts on it
// (fence.mbarrier_init; the block's next __syncthreads makes it visible to the other threads).
__device__ __forceinline__ void mbar_init(unsigned long long* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"((unsigned)__cvta_generic_to_shared(bar)) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// Arrive on `bar` expecting `bytes` of tensor copies in its current phase (0: the phase completes now).
__device__ __forceinline__ void mbar_expect(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"((unsigned)__cvta_generic_to_shared(bar)),
               "r"(bytes)
               : "memory");
}

// Wait until the phase of `bar` with this parity (0, 1, 0, ... for its 1st, 2nd, 3rd arming) completed.
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) {
  asm volatile(
      "{\n .reg .pred p;\n WAIT_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      " @!p bra WAIT_%=;\n}\n" ::"r"((unsigned)__cvta_generic_to_shared(bar)),
      "r"(parity)
      : "memory");
}

// Order this thread's earlier shared-memory accesses before its later tensor copies (the async proxy).
__device__ __forceinline__ void fence_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// Copy the box of the 3D tensor map `map` at element coordinates (x, y, z) (x innermost; out of the field:
// zeros) to `dst` (128-byte aligned), counted on `bar`.
__device__ __forceinline__ void tensor_copy(real* dst, const void* map, int x, int y, int z, unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n"
      ::"r"((unsigned)__cvta_generic_to_shared(dst)), "l"(map), "r"(x), "r"(y), "r"(z),
      "r"((unsigned)__cvta_generic_to_shared(bar))
      : "memory");
}
#endif
