// A CPU stand-in for the CUDA features the CUDA-core stencil kernels and the sparse tensor-core ones
// (mma.sp, below) use, so that their own source runs here (tests/emulated.py compiles it with g++). Blocks run one after another; a block's
// threads are fibers (ucontext) that run one at a time, each until its next __syncthreads(), in an
// order the driver picks (forward or reverse): a read of a value another thread writes in the same
// barrier interval then gives a different result in the two orders. Shared memory starts as NaN (all
// bits set: NaN in fp64, fp32 and fp16).
// cp.async copies are kept until the thread's async_wait, so that a read before the wait sees NaN; tensor
// copies until a wait on their mbarrier finds its phase armed with all its bytes (a thread that waits
// before then yields, without passing its barrier, until the others have issued them).
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
#include <map>
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
  bool spinning = false;   // yielded in an mbarrier wait, not at a barrier
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
          std::vector<bool> run(block.x, true);   // threads still to reach the barrier in this pass
          for (int round = 0, spun = 1; spun; ++round) {
            if (round > 1000) {
              fprintf(stderr, "block (%u, %u, %u): an mbarrier wait that never completes\n", bx, by, bz);
              exit(6);
            }
            spun = 0;
            for (unsigned i = 0; i < block.x; ++i) {
              current = reverse ? block.x - 1 - i : i;
              if (threads[current].done || !run[current]) continue;
              threadIdx = {current, 0, 0};
              threads[current].spinning = false;
              swapcontext(&scheduler, &threads[current].ctx);
              spun += threads[current].spinning;
              run[current] = threads[current].spinning;
              left = left || !threads[current].done;
            }
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

namespace emu {
struct Bar {   // an mbarrier: its phase, and the tensor copies and bytes armed for it
  unsigned phase = 0;
  long expect = 0, bytes = 0;
  bool armed = false;
  std::vector<Copy> pending;
};
static std::map<const void*, Bar> bars;
}  // namespace emu
inline void mbar_init(unsigned long long* bar) { emu::bars[bar] = {}; }
inline void mbar_expect(unsigned long long* bar, unsigned bytes) {
  auto& b = emu::bars.at(bar);
  b.armed = true;
  b.expect += bytes;
}
namespace emu {
struct TensorMap {   // what cp.async.bulk.tensor reads of a host-encoded 3D map of bytes (kernels/tensor_map.py)
  const char* base;
  long dim[3], stride[2];   // bytes along x; rows; slices (stride[0]: a row, stride[1]: a slice, in bytes)
  int box[3];
};
static TensorMap tensor_map_of;
// The map of a stream kernel's input field: rows of nx elements, boxes of 128 bytes x rows x slices (2D: the
// slices are rows).
template <class T>
inline const void* tensor_map(const T* base, int dims, int nz, int ny, int nx, int rows, int slices) {
  const long row = (long)nx * sizeof(T);
  if (dims == 3) tensor_map_of = {(const char*)base, {row, ny, nz}, {row, row * ny}, {128, rows, slices}};
  else tensor_map_of = {(const char*)base, {row, 1, ny}, {row, row}, {128, rows, slices}};
  return &tensor_map_of;
}
static const char zeros[1 << 12] = {};
}  // namespace emu
inline void fence_async() {}
// The box at (x, y, z) (bytes, rows, slices; out of the field: zeros), counted on `bar`.
template <class T>
inline void tensor_copy(T* dst, const void* map, int x, int y, int z, unsigned long long* bar) {
  const auto& m = *static_cast<const emu::TensorMap*>(map);
  if ((reinterpret_cast<char*>(dst) - reinterpret_cast<char*>(emu::shared_mem)) % 128) {
    fprintf(stderr, "tensor copy to a shared address not 128-byte aligned (thread %u)\n", emu::current);
    exit(4);
  }
  auto& b = emu::bars.at(bar);
  char* d = reinterpret_cast<char*>(dst);
  for (int k = 0; k < m.box[2]; ++k)
    for (int j = 0; j < m.box[1]; ++j, d += m.box[0]) {
      const long zz = z + k, yy = y + j, lo = std::max(0L, -(long)x), hi = std::min((long)m.box[0], m.dim[0] - x);
      const bool in = zz >= 0 && zz < m.dim[2] && yy >= 0 && yy < m.dim[1] && lo < hi;
      if (!in) {
        b.pending.push_back({d, emu::zeros, (size_t)m.box[0]});
        continue;
      }
      if (lo > 0) b.pending.push_back({d, emu::zeros, (size_t)lo});
      b.pending.push_back({d + lo, m.base + zz * m.stride[1] + yy * m.stride[0] + x + lo, (size_t)(hi - lo)});
      if (hi < m.box[0]) b.pending.push_back({d + hi, emu::zeros, (size_t)(m.box[0] - hi)});
    }
  b.bytes += (long)m.box[0] * m.box[1] * m.box[2];
}
inline void __syncwarp() {}
// Wait for the phase of this parity: the current one completes once armed and all its bytes issued.
inline void mbar_wait(unsigned long long* bar, unsigned parity) {
  auto& b = emu::bars.at(bar);
  while (b.phase % 2 == parity) {
    if (b.armed && b.bytes == b.expect) {
      for (auto& c : b.pending) memcpy(c.dst, c.src, c.bytes);
      b = emu::Bar{b.phase + 1};
    } else if (b.bytes > b.expect && b.armed) {
      fprintf(stderr, "mbarrier: %ld bytes copied, %ld expected (thread %u)\n", b.bytes, b.expect, emu::current);
      exit(6);
    } else {
      emu::threads[emu::current].spinning = true;
      swapcontext(&emu::threads[emu::current].ctx, &emu::scheduler);
    }
  }
}

inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }

#ifdef PREC
// mma.sp::ordered_metadata m16n8k16 .tf32 (PREC 32) or m16n8k32 .f16 (PREC 16), fp32 accumulate, sparsity
// selector 0, as the PTX ISA (9.7.14.6) lays out the fragments (kernels/stencil_sp_layout.py): every
// lane of the warp gives its registers, then yields like a barrier; once the whole block has given its
// k-th, each lane computes its own D from its warp's registers (products and sums in double, rounded
// to float once). A warp whose lanes are not all at their k-th MMA stops the run.
namespace emu {
inline float half_value(unsigned bits) { _Float16 h; unsigned short s = bits & 0xffff; memcpy(&h, &s, 2); return h; }
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
