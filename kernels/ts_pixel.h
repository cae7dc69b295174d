/* ts_pixel.h - the numeric rules shared word for word by the CPU reference
 * and the CUDA kernels: rounding, saturation and border mapping. Both sides
 * include this file so that they cannot drift apart. */
#ifndef TS_PIXEL_H
#define TS_PIXEL_H

#include <math.h>

#ifdef __CUDACC__
#define TS_HD __host__ __device__ __forceinline__
#else
#define TS_HD static inline
#endif

/* Round half up and saturate to 0..maxv. NaN becomes 0. The kernels must
 * use this, not __float2int_rn (which rounds half to even). */
TS_HD float ts_round_sat(float x, float maxv)
{
    if (!(x > 0.0f)) return 0.0f;
    if (x >= maxv) return maxv;
    return (float)(int)(x + 0.5f);
}

/* Map a coordinate that may lie outside 0..n-1 to the pixel the border
 * mode reads, or -1 for TS_BORDER_CONSTANT outside (mode values as in
 * ts_border: 0 replicate, 1 reflect101, 2 reflect, 3 wrap, 4 constant). */
TS_HD int ts_border_map(int i, int n, int mode)
{
    if (i >= 0 && i < n) return i;
    switch (mode) {
    case 0: /* replicate */
        return i < 0 ? 0 : n - 1;
    case 1: /* reflect101: period 2n-2 */
        if (n == 1) return 0;
        {
            int p = 2 * n - 2;
            i %= p;
            if (i < 0) i += p;
            return i < n ? i : p - i;
        }
    case 2: /* reflect: period 2n */
        {
            int p = 2 * n;
            i %= p;
            if (i < 0) i += p;
            return i < n ? i : p - 1 - i;
        }
    case 3: /* wrap */
        i %= n;
        return i < 0 ? i + n : i;
    default: /* constant */
        return -1;
    }
}

/* A sampling coordinate (TSK_SAMPLE's sx or sy) made safe to floor and
 * convert to int: clamped to [-2^30, 2^30], NaN to -2^30 (fmaxf returns
 * the number when one operand is NaN). Far-away points then still go
 * through the border mode, and x0 + 1 cannot overflow. */
TS_HD float ts_coord_clamp(float s)
{
    return fminf(fmaxf(s, -1073741824.0f), 1073741824.0f);
}

#endif /* TS_PIXEL_H */
