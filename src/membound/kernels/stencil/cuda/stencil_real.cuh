// The stencil kernels' element types and the helpers every stencil kernel shares: one source per
// algorithm, compiled per precision with -DELEM=<bytes of an element> (stencil_plan.py sets it;
// stencil_sp.cu derives it from PREC): `real` is the storage type of the field in
// global and shared memory, `acc_t` the CUDA cores' arithmetic type (the weights' type and every
// sum), to_acc widens a stored value (exact) and to_real rounds a sum to storage (to nearest).
//   ELEM 8: fp64, double and double;  ELEM 4: fp32, float and float;
//   ELEM 2: fp16 (BF16 1: bf16) stored as raw 16-bit words (PTX cvt, so NVRTC needs no cuda_fp16.h or
//           cuda_bf16.h), summed in float: both store 16 bits and accumulate in fp32 (docs/precision.md).
#pragma once
#ifndef STENCIL_REAL_CUH   // also when inlined twice (kernels.source_text)
#define STENCIL_REAL_CUH

#ifndef ELEM
#define ELEM 8
#endif
#ifndef BF16   // with ELEM 2: 1 bf16, 0 fp16 (runner.options adds it for bf16)
#define BF16 0
#endif

#if ELEM == 8
typedef double real;
typedef double acc_t;
__device__ __forceinline__ acc_t to_acc(real v) { return v; }
__device__ __forceinline__ real to_real(acc_t v) { return v; }
#elif ELEM == 4
typedef float real;
typedef float acc_t;
__device__ __forceinline__ acc_t to_acc(real v) { return v; }
__device__ __forceinline__ real to_real(acc_t v) { return v; }
#elif ELEM == 2 && BF16
typedef unsigned short real;
typedef float acc_t;
#ifdef MEMBOUND_EMULATE   // tests/emulated_cuda.h: bf16 is the high half of a float; round to nearest even
__device__ __forceinline__ acc_t to_acc(real v) { const unsigned u = static_cast<unsigned>(v) << 16; float f; memcpy(&f, &u, 4); return f; }
__device__ __forceinline__ real to_real(acc_t v) {
  unsigned u;
  memcpy(&u, &v, 4);
  return static_cast<real>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);   // finite values (the checks' range)
}
#else
__device__ __forceinline__ acc_t to_acc(real v) { return __uint_as_float(static_cast<unsigned>(v) << 16); }
__device__ __forceinline__ real to_real(acc_t v) {
  real h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v));
  return h;
}
#endif
#elif ELEM == 2
typedef unsigned short real;
typedef float acc_t;
#ifdef MEMBOUND_EMULATE   // tests/emulated_cuda.h: the CPU's IEEE binary16
__device__ __forceinline__ acc_t to_acc(real v) { _Float16 h; memcpy(&h, &v, 2); return static_cast<float>(h); }
__device__ __forceinline__ real to_real(acc_t v) { const _Float16 h = static_cast<_Float16>(v); real r; memcpy(&r, &h, 2); return r; }
#else
__device__ __forceinline__ acc_t to_acc(real v) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
  return f;
}
__device__ __forceinline__ real to_real(acc_t v) {
  real h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
  return h;
}
#endif
#else
#error "ELEM must be 8, 4 or 2 (the bytes of an fp64, fp32 or fp16 / bf16 element)"
#endif

#define VW (16 / ELEM)                // elements per 16-byte vector
#define HV ((RAD + VW - 1) / VW)      // vectors holding a radius of halo columns

// The periodic index: i wrapped into [0, n).
__device__ __forceinline__ int wrap(int i, int n) {
  if (i < 0 || i >= n) { i %= n; if (i < 0) i += n; }
  return i;
}

// What a tensor-core tile holds of an input value: its operand (fp32: rounded to tf32 as it enters,
// to nearest with ties away from zero).
__device__ __forceinline__ real operand(real v) {
#if ELEM == 4 && defined(MEMBOUND_EMULATE)
  unsigned r;
  memcpy(&r, &v, 4);
  r = (r + 0x1000u) & 0xffffe000u;   // finite values: the 13 low mantissa bits rounded off
  memcpy(&v, &r, 4);
  return v;
#elif ELEM == 4
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
  return __uint_as_float(r);
#else
  return v;
#endif
}

// One row of a tensor-core tile: COLS elements of the field row `row` from column x0 on (periodic)
// into `dst`, by the 32 lanes of a warp (element lane + 32 i): a lane's loads all issued before its
// stores (a loop of lane-dependent trip count cost the 2D sparse kernels up to 1.5x,
// docs/kernels_stencil.md); `inside`: x0 .. x0 + COLS - 1 lie in the field, no wrap.
template <int COLS>
__device__ __forceinline__ void tile_row(real* dst, const real* row, int x0, int nx, bool inside, int lane) {
  constexpr int N = (COLS + 31) / 32;
  real v[N];
#pragma unroll
  for (int i = 0; i < N; ++i)
    if (lane + 32 * i < COLS) v[i] = row[inside ? x0 + lane + 32 * i : wrap(x0 + lane + 32 * i, nx)];
#pragma unroll
  for (int i = 0; i < N; ++i)
    if (lane + 32 * i < COLS) dst[lane + 32 * i] = operand(v[i]);
}
#endif  // STENCIL_REAL_CUH
