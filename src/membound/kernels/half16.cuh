// The 16-bit storage formats' conversions, shared by the families' kernels that hold fp16 or bf16 as raw
// 16-bit words (PTX cvt, so NVRTC needs neither cuda_fp16.h nor cuda_bf16.h): F16 (binary16) and BF16
// (bfloat16, the upper half of a float: widening is exact), each with
//   to_float(h): the stored value as a float (exact);  round(s): a float rounded to storage (to nearest).
// Each family's sources issue their MMA in the format themselves (the instruction is in their text).
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
};

struct BF16 {
    __device__ static float to_float(unsigned short h) { return __uint_as_float(static_cast<unsigned>(h) << 16); }
    __device__ static unsigned short round(float s) {
        unsigned short h;
        asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(s));
        return h;
    }
};
#endif  // HALF16_CUH
