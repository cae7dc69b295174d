/* matrix_pixel.cuh - the colour matrix on one pixel, on the GPU: the rule
 * every kernel that applies MATRIX's maths shares (point.cu's matrix, and
 * an ORIENT that carries a matrix in orient.cu), so that a fused op gives
 * the bytes the two ops would give one after the other.
 *
 * Exactness: products and sums use __fmul_rn / __fadd_rn in the
 * reference's order ((m0*R + m1*G) + m2*B) + m3*max, so nvcc cannot
 * contract them into FMAs; results are bit-identical to tsk_ref_apply. */
#ifndef TSK_MATRIX_PIXEL_CUH
#define TSK_MATRIX_PIXEL_CUH

#include "gpu_internal.h"
#include "ts_exact.h"

/* Loads and stores of one channel. FAST = 0: tsk_px (the conversion
 * instructions). FAST = 1, the same values without them (ts_exact.h): an
 * 8- or 16-bit v becomes a float exactly, and a result rounds and
 * saturates as ts_round_sat, the store keeping the low bits. */
template <typename T, bool FAST>
struct point_io {
    static __device__ __forceinline__ float load(T v) { return tsk_px<T>::load(v); }
    static __device__ __forceinline__ T store(float x) { return tsk_px<T>::store(x); }
};
template <typename T>
struct point_io_int {
    static __device__ __forceinline__ float load(T v) { return ts_exact_float((uint32_t)v); }
    static __device__ __forceinline__ T store(float x) { return (T)ts_exact_round_sat_bits(x, tsk_px<T>::maxv()); }
};
template <> struct point_io<uint8_t, true> : point_io_int<uint8_t> {};
template <> struct point_io<uint16_t, true> : point_io_int<uint16_t> {};

/* k = m with m[4i+3]*max precomputed (the same rounded product the
 * reference adds last). */
template <typename T>
__device__ __forceinline__ void matrix_coef(const float *m, float k[12])
{
#pragma unroll
    for (int i = 0; i < 12; i++) k[i] = m[i];
#pragma unroll
    for (int i = 0; i < 3; i++) k[4 * i + 3] = __fmul_rn(k[4 * i + 3], tsk_px<T>::maxv());
}

/* Row i's three products and their sum, in the reference's order
 * (m0*R + m1*G) + m2*B. */
__device__ __forceinline__ float matrix_products(const float k[12], int i, float r, float g, float b)
{
    const float s = __fadd_rn(__fmul_rn(k[4 * i], r), __fmul_rn(k[4 * i + 1], g));
    return __fadd_rn(s, __fmul_rn(k[4 * i + 2], b));
}

/* Output channel i of colour r, g, b before its rounding: the rule every
 * caller applies, in the reference's order. */
__device__ __forceinline__ float matrix_row(const float k[12], int i, float r, float g, float b)
{
    return __fadd_rn(matrix_products(k, i, r, g, b), k[4 * i + 3]);
}

/* Whether matrix_row_plain_bits gives matrix_row's bytes (m as tsk.h keeps it:
 * 12 numbers, the offsets in 0..1 units): every coefficient finite and >= 0
 * and every offset 0, as in the grey and sepia presets. Finite, since an
 * infinite one times a zero channel is NaN, which the general rule's clamp
 * at 0 makes 0 and the plain rule's clamp at 255 alone would make 255. */
static inline bool matrix_is_plain(const float m[12])
{
    for (int i = 0; i < 12; i++)
        if (i % 4 == 3 ? m[i] != 0.0f : !(m[i] >= 0.0f && m[i] < INFINITY)) return false;
    return true;
}

/* Output channel i of a plain matrix (matrix_is_plain), rounded and
 * saturated to a byte in the low bits as ts_exact_round_sat_bits, for
 * channels 0..255: a zero offset added leaves a sum as it is (-0 becomes
 * +0, which rounds alike), and products and sums of non-negative numbers
 * are >= 0, so the offset's add and the clamp at 0 drop out (two
 * instructions a channel) and the bytes are matrix_row's. */
__device__ __forceinline__ uint32_t matrix_row_plain_bits(const float k[12], int i, float r, float g, float b)
{
    return ts_exact_round_bits(fminf(matrix_products(k, i, r, g, b), 255.0f));
}

/* One pixel of C channels, in place; alpha (the last of 2 or 4) is kept. */
template <typename T, int C, bool FAST>
__device__ __forceinline__ void matrix_pixel(T *p, const float k[12])
{
    typedef point_io<T, FAST> X;
    if (C >= 3) {
        float r = X::load(p[0]), g = X::load(p[1]), b = X::load(p[2]);
#pragma unroll
        for (int i = 0; i < 3; i++) p[i] = X::store(matrix_row(k, i, r, g, b));
    } else {
        p[0] = X::store(__fadd_rn(__fmul_rn(k[0], X::load(p[0])), k[3]));
    }
}

#endif
