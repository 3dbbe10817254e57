// A CPU stand-in for the CUDA features the CUDA-core stencil kernels use, so that their own source
// runs here (tests/emulated.py compiles it with g++). Blocks run one after another; a block's
// threads are fibers (ucontext) that run one at a time, each until its next __syncthreads(), in an
// order the driver picks (forward or reverse): a read of a value another thread writes in the same
// barrier interval then gives a different result in the two orders. Shared memory starts as NaN (all
// bits set: NaN in fp64, fp32 and fp16).
// cp.async copies are kept until the thread's async_wait, so that a read before the wait sees NaN.
#pragma once
#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#define MEMBOUND_EMULATE 1
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __shared__ static
#define __ldg(p) (*(p))
using std::max;
using std::min;
struct uint4 {
  unsigned x, y, z, w;
};

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};
static dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace emu {
static double* shared_mem;
struct Copy {
  void* dst;
  const void* src;
  size_t bytes;
};
struct Thread {
  ucontext_t ctx;
  std::vector<char> stack;
  std::vector<std::vector<Copy>> groups{1};   // the last one is open
  bool done = false;
};
static std::vector<Thread> threads;
static ucontext_t scheduler;
static unsigned current;
static std::function<void()> body;

static void run_thread() {
  body();
  threads[current].done = true;
}

// Run body() as every thread of every block; reverse: the threads of an interval in reverse order.
static void launch(dim3 grid, dim3 block, size_t smem_bytes, bool reverse, std::function<void()> kernel) {
  body = kernel;
  gridDim = grid;
  blockDim = block;
  // The launch's shared memory, then a guard that stays poisoned: a read past smem_bytes yields NaN,
  // a write past it stops the run.
  constexpr size_t GUARD = 1 << 12;
  std::vector<double> smem((smem_bytes + GUARD + 7) / 8);
  shared_mem = smem.data();
  auto guard_intact = [&] {
    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(smem.data());
    for (size_t i = smem_bytes; i < smem.size() * sizeof(double); ++i)
      if (bytes[i] != 0xff) return false;
    return true;
  };
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        blockIdx = {bx, by, bz};
        memset(smem.data(), 0xff, smem.size() * sizeof(double));
        threads = std::vector<Thread>(block.x);
        for (auto& t : threads) {
          t.stack.resize(1 << 18);
          getcontext(&t.ctx);
          t.ctx.uc_stack = {t.stack.data(), 0, t.stack.size()};
          t.ctx.uc_link = &scheduler;
          makecontext(&t.ctx, run_thread, 0);
        }
        for (bool left = true; left;) {   // one barrier interval per pass
          left = false;
          for (unsigned i = 0; i < block.x; ++i) {
            current = reverse ? block.x - 1 - i : i;
            if (threads[current].done) continue;
            threadIdx = {current, 0, 0};
            swapcontext(&scheduler, &threads[current].ctx);
            left = left || !threads[current].done;
          }
        }
        if (!guard_intact()) {
          fprintf(stderr, "block (%u, %u, %u) wrote past its %zu bytes of shared memory\n", bx, by, bz, smem_bytes);
          exit(3);
        }
      }
}
}  // namespace emu

inline void __syncthreads() { swapcontext(&emu::threads[emu::current].ctx, &emu::scheduler); }

template <class T>
inline void copy_async(T* dst, const T* src) { emu::threads[emu::current].groups.back().push_back({dst, src, sizeof(T)}); }
template <class T>
inline void copy_async16(T* dst, const T* src) { emu::threads[emu::current].groups.back().push_back({dst, src, 16}); }
template <class T>
inline void copy_async16_l1(T* dst, const T* src) { copy_async16(dst, src); }
inline void async_commit() { emu::threads[emu::current].groups.emplace_back(); }
template <int N>
inline void async_wait() {   // complete every committed group but the newest N
  auto& g = emu::threads[emu::current].groups;
  while (g.size() - 1 > N) {
    for (auto& c : g.front()) memcpy(c.dst, c.src, c.bytes);
    g.erase(g.begin());
  }
}
