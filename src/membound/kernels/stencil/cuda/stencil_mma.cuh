// What the tensor-core stencil kernels (stencil_tc.cu, stencil_tc3.cu) share: the element types, the
// periodic wrap and the tf32 operand (stencil_real.cuh, ELEM), and per precision the MMA D += A B of
// its shape (m x 8 x k, geometry.STENCIL_MMA) with its fragments, and its CUDA-core twin. Lane
// l = 4g + t (g = l / 4,
// t = l % 4) holds (PTX ISA, mma.sync fragment layouts):
// - fp64, m8n8k4 f64: A(g, t); B(t, g); D(g, 2t + {0, 1}) in acc[0..1]; accumulate in fp64.
// - fp32, m16n8k8 tf32: A(g, t), A(g + 8, t), A(g, t + 4), A(g + 8, t + 4); B(t, g), B(t + 4, g);
//   D(g, 2t + {0,1}), D(g + 8, 2t + {0,1}) in acc[0..3]; accumulate in fp32. The shared tile holds the
//   inputs already rounded to tf32 (cvt.rna.tf32.f32, `operand`), the B fragments come rounded.
// - fp16, m16n8k16 f16: the f16x2 words A(g, 2t..2t+1), A(g + 8, 2t..), A(g, 2t+8..), A(g + 8, 2t+8..);
//   B(2t..2t+1, g), B(2t+8..2t+9, g); D as fp32; accumulate in fp32. bf16 (BF16 1): the same, m16n8k16 bf16.
// A lane's B fragment is 8 bytes in every precision (bfrag_t: a double, or two 32-bit words).
// TWIN=1 builds the CUDA-core twin (issue 15): the same MMA on the same register fragments, done with
// shuffles and FMAs in the accumulator's type (fp64: 12 shuffles, 8 FMAs a lane; tf32: 32, 32; f16:
// 32, 64), so every load, store and launch of the kernel stays the same.
#pragma once

#include "stencil_real.cuh"

#ifndef TWIN
#define TWIN 0
#endif

#if ELEM == 8
#define MMA_M 8
#define MMA_K 4
#define NACC 2
typedef double bfrag_t;
struct afrag_t {
  double v;
};
#else
#define MMA_M 16
#define MMA_K (ELEM == 4 ? 8 : 16)
#define NACC 4
typedef uint2 bfrag_t;
struct afrag_t {
  unsigned v[4];
};
#endif
#define KOFF(lane) ((ELEM == 2 ? 2 : 1) * ((lane) & 3))   // the lane's first k column of A

// The A fragment of the block whose lane element (g, KOFF) is at p, in a tile of row pitch PITCH.
__device__ __forceinline__ afrag_t load_a(const real* p) {
#if ELEM == 8
  return {p[0]};
#elif ELEM == 4
  return {{__float_as_uint(p[0]), __float_as_uint(p[8 * PITCH]), __float_as_uint(p[4]), __float_as_uint(p[8 * PITCH + 4])}};
#else
  const unsigned* q = reinterpret_cast<const unsigned*>(p);
  return {{q[0], q[4 * PITCH], q[4], q[4 * PITCH + 4]}};
#endif
}

#if ELEM != 8
// Element h of a 32-bit fragment word as the accumulator type (tf32: the word is a float; f16: half h).
__device__ __forceinline__ float element(unsigned w, int h) {
#if ELEM == 4
  return __uint_as_float(w);
#else
  return to_acc(static_cast<real>(w >> (16 * h)));
#endif
}
#endif

__device__ __forceinline__ void mma(acc_t (&c)[NACC], const afrag_t& a, bfrag_t b) {
#if TWIN
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#if ELEM == 8
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const double ak = __shfl_sync(0xffffffffu, a.v, 4 * g + k);          // A(g, k)
    c[0] = fma(ak, __shfl_sync(0xffffffffu, b, 8 * t + k), c[0]);        // B(k, 2t)
    c[1] = fma(ak, __shfl_sync(0xffffffffu, b, 8 * t + 4 + k), c[1]);    // B(k, 2t + 1)
  }
#else
  constexpr int P = ELEM == 4 ? 1 : 2;   // elements per word
#pragma unroll
  for (int r = 0; r < 2; ++r)            // k = 4 P r + P q + h
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const unsigned a0 = __shfl_sync(0xffffffffu, a.v[2 * r], 4 * g + q);       // A(g, k)
      const unsigned a1 = __shfl_sync(0xffffffffu, a.v[2 * r + 1], 4 * g + q);   // A(g + 8, k)
      const unsigned bw = r ? b.y : b.x;
      const unsigned b0 = __shfl_sync(0xffffffffu, bw, 8 * t + q);               // B(k, 2t)
      const unsigned b1 = __shfl_sync(0xffffffffu, bw, 8 * t + 4 + q);           // B(k, 2t + 1)
#pragma unroll
      for (int h = 0; h < P; ++h) {
        const float x0 = element(a0, h), x1 = element(a1, h), y0 = element(b0, h), y1 = element(b1, h);
        c[0] = fmaf(x0, y0, c[0]);
        c[1] = fmaf(x0, y1, c[1]);
        c[2] = fmaf(x1, y0, c[2]);
        c[3] = fmaf(x1, y1, c[3]);
      }
    }
#endif
#else
#if ELEM == 8
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
               : "+d"(c[0]), "+d"(c[1]) : "d"(a.v), "d"(b));
#elif ELEM == 4
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a.v[0]), "r"(a.v[1]), "r"(a.v[2]), "r"(a.v[3]), "r"(b.x), "r"(b.y));
#elif BF16
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a.v[0]), "r"(a.v[1]), "r"(a.v[2]), "r"(a.v[3]), "r"(b.x), "r"(b.y));
#else
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a.v[0]), "r"(a.v[1]), "r"(a.v[2]), "r"(a.v[3]), "r"(b.x), "r"(b.y));
#endif
#endif
}

// Store a warp's m x 8 tile (acc) at rows gy + {0, 8} (lane row g), columns gx + 2t + {0, 1} of the
// plane out (ny x nx), rounded to storage: the points inside the domain.
__device__ __forceinline__ void store_tile(real* plane, const acc_t (&c)[NACC], int gy, int gx, int ny, int nx) {
#pragma unroll
  for (int i = 0; i < NACC; ++i) {
    const int y = gy + 8 * (i >> 1), x = gx + (i & 1);
    if (y < ny && x < nx) plane[(size_t)y * nx + x] = to_real(c[i]);
  }
}
