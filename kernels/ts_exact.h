/* ts_exact.h - exact conversions between integers and floats done with
 * float adds (the "2^23 trick") instead of the conversion instructions,
 * which issue at a fraction of the FP32 rate on the GPU (figures: see
 * docs/measurements/kernels.md). Every function gives the same value as
 * the plain cast or ts_round_sat (ts_pixel.h), so the kernels that use them
 * (point.cu v5, the convolutions' fast loads and stores, sample.cu v3/v4)
 * stay bit-identical to the reference.
 *
 * The rule: a float in [2^23, 2^24) has an ulp of 1, so its low 23
 * mantissa bits hold an integer. An integer 0 <= v < 2^23 placed there
 * (bits 0x4B000000 | v) is the float 2^23 + v exactly; subtracting 2^23
 * gives (float)v. The other way, adding 2^23 rounding down leaves floor(t)
 * in the low bits for 0 <= t < 2^23.
 *
 * The conversions use CUDA intrinsics, so they exist only in CUDA code;
 * the C side (the reference and the fast CPU ops) converts with casts and
 * ts_round_sat, whose values these reproduce. Compiled as C11 the header
 * gives the constants alone. */
#ifndef TS_EXACT_H
#define TS_EXACT_H

#define TS_EXACT_2P23 8388608.0f   /* 2^23, bits 0x4B000000 */
#define TS_EXACT_1P5 12582912.0f   /* 1.5 * 2^23, bits 0x4B400000 */

#ifdef __CUDACC__
#include <math.h>
#include <stdint.h>

/* The float whose bits are 0x4B000000 | v (v < 2^23) less 2^23: v exactly. */
static __device__ __forceinline__ float ts_exact_float_of_bits(uint32_t bits)
{
    return __fsub_rn(__uint_as_float(bits), TS_EXACT_2P23);
}

/* (float)v for 0 <= v < 2^23 (any 8- or 16-bit channel value). */
static __device__ __forceinline__ float ts_exact_float(uint32_t v)
{
    return ts_exact_float_of_bits(0x4B000000u | v);
}

/* Byte k (0..3) of w as a float: one byte permute puts it under 0x4B. */
static __device__ __forceinline__ float ts_exact_byte_float(uint32_t w, int k)
{
    return ts_exact_float_of_bits(__byte_perm(w, 0x4B000000u, 0x7440u | (unsigned)k));
}

/* 16-bit half h (0 or 1) of w as a float. */
static __device__ __forceinline__ float ts_exact_half_float(uint32_t w, int h)
{
    return ts_exact_float_of_bits(__byte_perm(w, 0x4B000000u, h ? 0x7432u : 0x7410u));
}

/* (int)(y + 0.5f) in the low bits of the result, for 0 <= y < 2^23 - 1:
 * y + 0.5f rounded to nearest as the reference adds it, then 2^23 added
 * rounding down (toward zero is the same: the sum is positive) leaves its
 * floor, which is the reference's truncation of a positive number. The
 * high bits are 0x4B000000: callers keep the low 8 or 16. */
static __device__ __forceinline__ uint32_t ts_exact_round_bits(float y)
{
    return __float_as_uint(__fadd_rd(__fadd_rn(y, 0.5f), TS_EXACT_2P23));
}

/* ts_round_sat(x, maxv) in the low bits (maxv 255 or 65535): the clamp
 * gives 0 for x <= 0 and NaN (fmaxf returns the number) and maxv for
 * x >= maxv, then ts_exact_round_bits. */
static __device__ __forceinline__ uint32_t ts_exact_round_sat_bits(float x, float maxv)
{
    return ts_exact_round_bits(fminf(fmaxf(x, 0.0f), maxv));
}

/* (float)i + 0.5f for 0 <= i < 2^22, exactly: 2^23 + i less 2^23 - 0.5. */
static __device__ __forceinline__ float ts_exact_centre(int i)
{
    return __fsub_rn(__int_as_float(0x4B000000 + i), 8388607.5f);
}

/* floor(p) as int, and as float in *fl, for |p| <= 2^22: adding 1.5 * 2^23
 * rounding down gives 1.5 * 2^23 + floor(p) exactly, whose bits less
 * 0x4B400000 are floor(p). */
static __device__ __forceinline__ int ts_exact_floor(float p, float *fl)
{
    float r = __fadd_rd(p, TS_EXACT_1P5);
    *fl = __fsub_rn(r, TS_EXACT_1P5);
    return __float_as_int(r) - 0x4B400000;
}
#endif /* __CUDACC__ */

#endif /* TS_EXACT_H */
