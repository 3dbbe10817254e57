// What stencil_sp.cu (2D) and stencil_sp3.cu (3D) share: the tile's geometry, a lane's B registers
// from the shared tile, the mma.sp of each precision and the fragment tables' copy.
// Macros: RF, PREC, NX, WX, WY, XO, LXT, PITCH, RUNS, NFRAG (stencil_sp.cu's header comment).
#pragma once

#define BX (16 * NX * WX)
#define BY (8 * WY)
#define LYT (BY + 2 * RF)
#ifndef RUNS
#define RUNS 0
#endif
#define NW (WX * WY)

// real (fp16, bf16 with BF16 1: raw bits, conversions in PTX), to_real, wrap and the tf32 operand:
#define ELEM (PREC / 8)
#include "stencil_real.cuh"

__device__ __forceinline__ unsigned b_reg(const real* p, const int* off, int r) {
#if PREC == 32
  return __float_as_uint(p[off[r]]);
#else
  return (unsigned)p[off[2 * r]] | ((unsigned)p[off[2 * r + 1]] << 16);   // low half: the lower k
#endif
}

__device__ __forceinline__ void b_regs(unsigned* b, const real* p, const int* off) {
#if RUNS && PREC == 32        // slots q, q+4, q+8, q+12: four consecutive floats, 16-byte aligned
  const float4 v = *reinterpret_cast<const float4*>(p + off[0]);
  b[0] = __float_as_uint(v.x); b[1] = __float_as_uint(v.y); b[2] = __float_as_uint(v.z); b[3] = __float_as_uint(v.w);
#elif RUNS                    // slots 8r+2q, 8r+2q+1: eight consecutive halves, 16-byte aligned
  const uint4 v = *reinterpret_cast<const uint4*>(p + off[0]);
  b[0] = v.x; b[1] = v.y; b[2] = v.z; b[3] = v.w;
#else
#pragma unroll
  for (int r = 0; r < 4; ++r) b[r] = b_reg(p, off, r);
#endif
}

#ifndef MEMBOUND_EMULATE   // tests/emulated_cuda.h: the warp's product from every lane's registers
__device__ __forceinline__ void mma_sp(float* d, const uint4& a, const unsigned* b, unsigned e) {
#if PREC == 32
  asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
               "{%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x0;"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e));
#elif BF16
  asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
               "{%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x0;"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e));
#else
  asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
               "{%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x0;"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e));
#endif
}
#endif

// The fragment tables: A (32 lanes a fragment), metadata (the same) and B offsets. The first NF
// fragments' A and metadata and the first NOFFS offsets are copied to shared memory (at smem) once per
// block and read there; with NF = 0 the tables are read through L1 from global memory.
struct Tables {
  const uint4* a;
  const unsigned* e;
  const int* o;
};

template <int NF, int NOFFS>
__device__ __forceinline__ Tables tables(unsigned char* smem, const uint4* afrag, const unsigned* meta,
                                         const int* offs) {
  if (NF == 0) return {afrag, meta, offs};
  uint4* s_a = reinterpret_cast<uint4*>(smem);
  unsigned* s_e = reinterpret_cast<unsigned*>(s_a + NF * 32);
  int* s_o = reinterpret_cast<int*>(s_e + NF * 32);
  for (int i = threadIdx.x; i < NF * 32; i += blockDim.x) { s_a[i] = afrag[i]; s_e[i] = meta[i]; }
  for (int i = threadIdx.x; i < NOFFS; i += blockDim.x) s_o[i] = offs[i];
  return {s_a, s_e, s_o};
}
