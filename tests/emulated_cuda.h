// A CPU stand-in for the CUDA features the CUDA-core stencil kernels and the sparse tensor-core ones
// (mma.sp, below) use, so that their own source runs here (tests/emulated.py compiles it with g++). Blocks run one after another; a block's
// threads are fibers (ucontext) that run one at a time, each until its next __syncthreads(), in an
// order the driver picks (forward or reverse): a read of a value another thread writes in the same
// barrier interval then gives a different result in the two orders. Shared memory starts as NaN (all
// bits set: NaN in fp64, fp32 and fp16).
// cp.async copies are kept until the thread's async_wait, so that a read before the wait sees NaN.
#pragma once
#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
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
#define __align__(n) alignas(n)
using std::max;
using std::min;
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
struct alignas(16) float4 {
  float x, y, z, w;
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
struct MmaLane {   // a lane's operands of its k-th mma.sp (tensor-core kernels)
  unsigned k, a[4], b[4], e;
  float c[4];
};
struct Thread {
  ucontext_t ctx;
  std::vector<char> stack;
  std::vector<std::vector<Copy>> groups{1};   // the last one is open
  bool done = false;
  unsigned mmas = 0;
  MmaLane mma[2];   // the k-th in mma[k % 2]: a lane reads the others' k-th while they write their k+1-th
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
namespace emu {
inline void aligned(const void* dst, const void* src, size_t bytes) {   // cp.async's alignment, else stop the run
  if (reinterpret_cast<uintptr_t>(dst) % bytes || reinterpret_cast<uintptr_t>(src) % bytes) {
    fprintf(stderr, "cp.async of %zu bytes from a misaligned address (thread %u)\n", bytes, current);
    exit(4);
  }
}
}  // namespace emu
template <class T>
inline void copy_async4(T* dst, const T* src) {
  emu::aligned(dst, src, 4);
  emu::threads[emu::current].groups.back().push_back({dst, src, 4});
}
template <class T>
inline void copy_async16(T* dst, const T* src) {
  emu::aligned(dst, src, 16);
  emu::threads[emu::current].groups.back().push_back({dst, src, 16});
}
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

inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }

#ifdef PREC
// mma.sp::ordered_metadata m16n8k16 .tf32 (PREC 32) or m16n8k32 .f16 / .bf16 (PREC 16, BF16 0 / 1), fp32 accumulate, sparsity
// selector 0, as the PTX ISA (9.7.14.6) lays out the fragments (kernels/stencil_sp_layout.py): every
// lane of the warp gives its registers, then yields like a barrier; once the whole block has given its
// k-th, each lane computes its own D from its warp's registers (products and sums in double, rounded
// to float once). A warp whose lanes are not all at their k-th MMA stops the run.
namespace emu {
#if defined(BF16) && BF16
inline float half_value(unsigned bits) { const unsigned u = (bits & 0xffff) << 16; float f; memcpy(&f, &u, 4); return f; }
#else
inline float half_value(unsigned bits) { _Float16 h; unsigned short s = bits & 0xffff; memcpy(&h, &s, 2); return h; }
#endif
}
inline void mma_sp(float* d, const uint4& a, const unsigned* b, unsigned e) {
  emu::Thread& self = emu::threads[emu::current];
  const unsigned k = self.mmas++, lane = emu::current % 32, warp0 = emu::current - lane;
  self.mma[k % 2] = {k, {a.x, a.y, a.z, a.w}, {b[0], b[1], b[2], b[3]}, e, {d[0], d[1], d[2], d[3]}};
  __syncthreads();
  const emu::MmaLane* w[32];
  for (unsigned l = 0; l < 32; ++l) {
    w[l] = &emu::threads[warp0 + l].mma[k % 2];
    if (w[l]->k != k) {
      fprintf(stderr, "mma.sp out of step in warp %u: lane %u at %u, lane %u at %u\n", warp0 / 32, lane, k, l, w[l]->k);
      exit(5);
    }
  }
  constexpr int K = PREC == 32 ? 16 : 32, CH = PREC == 32 ? 2 : 4;   // logical K, chunk (1:2 / 2:4)
  auto a_at = [&](int i, int kk) -> double {   // A(i, kk) of the logical (uncompressed) operand
    const int c = kk / CH, q = c % 4, reg = (i >= 8) + 2 * (c >= 4);
    const unsigned nib = (w[4 * (i % 8) + c / 4]->e >> (16 * (i >= 8) + 4 * (c % 4))) & 0xf;
    const unsigned word = w[4 * (i % 8) + q]->a[reg];
    if (PREC == 32) return (nib == 0x4 ? 0 : 1) == kk % CH ? __uint_as_float(word) : 0.0;   // 0b0100 / 0b1110
    const unsigned i0 = nib & 3, i1 = nib >> 2;
    return kk % CH == (int)i0 ? emu::half_value(word) : kk % CH == (int)i1 ? emu::half_value(word >> 16) : 0.0;
  };
  auto b_at = [&](int kk, int j) -> double {   // B(kk, j): fp32 b_r = B(q + 4r, g); f16 r: B(8r + 2q (+1), g)
    if (PREC == 32) return __uint_as_float(w[4 * j + kk % 4]->b[kk / 4]);
    const unsigned word = w[4 * j + (kk % 8) / 2]->b[kk / 8];
    return emu::half_value(kk % 2 ? word >> 16 : word);
  };
  for (int h = 0; h < 4; ++h) {   // D(i, j), i = g + 8 (h >> 1), j = 2q + (h & 1)
    const int i = lane / 4 + 8 * (h >> 1), j = 2 * (lane % 4) + (h & 1);
    double sum = self.mma[k % 2].c[h];
    for (int kk = 0; kk < K; ++kk) sum += a_at(i, kk) * b_at(kk, j);
    d[h] = static_cast<float>(sum);
  }
}
#endif
