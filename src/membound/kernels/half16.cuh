// The 16-bit storage formats' conversions, shared by the families' kernels that hold fp16 or bf16 as raw
// 16-bit words (PTX cvt, so NVRTC needs neither cuda_fp16.h nor cuda_bf16.h): F16 (binary16) and BF16
// (bfloat16, the upper half of a float: widening is exact), each with
//   to_float(h): the stored value as a float (exact);  round(s): a float rounded to storage (to nearest);
//   mma(d, a0..a3, b0, b1): d += A B, mma.sync m16n8k16 in the format with fp32 accumulate (sm_80 and
//   later), on the PTX ISA's fragments (the 32-bit words of two elements each).
#pragma once
#ifndef HALF16_CUH   // also when inlined twice (kernels.source_text)
#define HALF16_CUH

struct F16 {
    __device__ static float to_float(unsigned short h) {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
        return f;
    }
    __device__ static unsigned short round(float s) {
        unsigned short h;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(s));
        return h;
    }
    __device__ static void mma(float (&d)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0,
                               unsigned b1) {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
};

struct BF16 {
    __device__ static float to_float(unsigned short h) { return __uint_as_float(static_cast<unsigned>(h) << 16); }
    __device__ static unsigned short round(float s) {
        unsigned short h;
        asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(s));
        return h;
    }
    __device__ static void mma(float (&d)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0,
                               unsigned b1) {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
};
#endif  // HALF16_CUH
