/* conv_common.cuh - (internal, CUDA only) what the two convolution families
 * (conv_sep.cu, conv2d.cu) share: their views as kernel arguments, pixels
 * as vectors of C floats, border reads, the reference's multiply-add,
 * pixel loads and stores with the exact integer conversions of ts_exact.h,
 * the shared memory tile with its halo, and the register-blocked 1-D
 * convolution that the fast versions of both families are built from; and
 * on the host, the whole launcher (conv_apply): tap banks, the version
 * table's rows, the choice of version and the dispatch to it. A family
 * file holds its
 * kernels, their launch shapes, its version table and a struct naming
 * what differs (see "dispatch and launch").
 *
 * Exactness. The reference (ref_conv.c) sums in float, products rounded
 * before each add (ISO C: gcc does not contract). conv_mac<false> does the
 * same with __fmul_rn/__fadd_rn, which nvcc never fuses, in the same order:
 * such versions are bit-identical to the reference. conv_mac<true> fuses
 * the multiply-add (one rounding instead of two, half the instructions);
 * the order of summation is unchanged, so results differ only in the last
 * bit of some sums: integer outputs by at most 1 where a sum lies within
 * an ulp of a rounding boundary, floats by a few ulps of the largest
 * partial sum. */
#ifndef TSK_CONV_COMMON_CUH
#define TSK_CONV_COMMON_CUH

#include "gpu_internal.h"
#include "ts_exact.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <type_traits>
#include <utility>

enum { CONV_THREADS = 256 };  /* threads per block of the tiled versions */

/* ---------------------------------------------------------------- views */

/* src and dst of one convolution as a kernel argument. Both are regions of
 * images of fw x fh pixels (a convolution keeps the size); coordinates
 * are global: pixel (gx, gy) of src is at (gx - sx0, gy - sy0). */
struct conv_io {
    const unsigned char *src;
    size_t sp;
    int sx0, sy0;
    unsigned char *dst;
    size_t dp;
    int dx0, dy0, dw, dh;
    int fw, fh;
    int c;
    int border;
    float bv;   /* border_value, for TS_BORDER_CONSTANT */
    int alpha;  /* 1: the last channel is the centre pixel's (c = 2, 4) */
};

static inline conv_io conv_io_of(const ts_view *src, ts_view *dst, int border, float bv, int alpha)
{
    conv_io io;
    io.src = src->data;
    io.sp = src->pitch;
    io.sx0 = src->x0;
    io.sy0 = src->y0;
    io.dst = dst->data;
    io.dp = dst->pitch;
    io.dx0 = dst->x0;
    io.dy0 = dst->y0;
    io.dw = dst->w;
    io.dh = dst->h;
    io.fw = dst->full_w;
    io.fh = dst->full_h;
    io.c = dst->c;
    io.border = border;
    io.bv = bv;
    io.alpha = alpha && (dst->c == 2 || dst->c == 4);
    return io;
}

/* The checks every version relies on: a pixel format we have kernels
 * for, dst inside its image, and src holding all that tsk_need() says dst
 * needs (the kernels read nothing else, and a smaller src would make them
 * read memory they do not own). */
static inline ts_status conv_check_views(const tsk_op *op, const ts_view *src, const ts_view *dst,
                                         const char *what, ts_err *err)
{
    if (dst->c < 1 || dst->c > 4 || (dst->type != TS_U8 && dst->type != TS_U16 && dst->type != TS_F32))
        return ts_err_set(err, TS_E_ARG, "%s: %d channels of type %d", what, dst->c, (int)dst->type);
    int ow, oh;
    tsk_out_size(op, src->full_w, src->full_h, &ow, &oh);
    if (ow != dst->full_w || oh != dst->full_h)
        return ts_err_set(err, TS_E_ARG, "%s: a %dx%d source image makes a %dx%d image, not %dx%d", what,
                          src->full_w, src->full_h, ow, oh, dst->full_w, dst->full_h);
    if (dst->x0 < 0 || dst->y0 < 0 || dst->w > dst->full_w - dst->x0 || dst->h > dst->full_h - dst->y0)
        return ts_err_set(err, TS_E_ARG, "%s: destination region %d,%d %dx%d is not inside its %dx%d image",
                          what, dst->x0, dst->y0, dst->w, dst->h, dst->full_w, dst->full_h);
    ts_rect out = { dst->x0, dst->y0, dst->w, dst->h };
    ts_rect need = tsk_need(op, src->full_w, src->full_h, out);
    if (need.x0 < src->x0 || need.y0 < src->y0 || need.x0 + need.w > src->x0 + src->w ||
        need.y0 + need.h > src->y0 + src->h)
        return ts_err_set(err, TS_E_ARG, "%s: source region %d,%d %dx%d lacks the needed %d,%d %dx%d", what,
                          src->x0, src->y0, src->w, src->h, need.x0, need.y0, need.w, need.h);
    if (!src->data || !dst->data) return ts_err_set(err, TS_E_ARG, "%s: a view has no pixels", what);
    return TS_OK;
}

/* Vector loads and stores of whole pixels need the pixel's size (C = 1, 2,
 * 4) or the channel's (C = 3) to divide both the start and the pitch. */
static inline int conv_view_aligned(const ts_view *v)
{
    size_t a = v->c == 3 ? (size_t)v->type : (size_t)v->c * (size_t)v->type;
    return ((uintptr_t)v->data % a) == 0 && v->pitch % a == 0;
}

/* ------------------------------------------------------- pixel vectors */

template <int C> struct vecf { float v[C]; };

template <int C>
static __device__ __forceinline__ vecf<C> vfill(float x)
{
    vecf<C> r;
#pragma unroll
    for (int ch = 0; ch < C; ch++) r.v[ch] = x;
    return r;
}

/* acc + k * p as the reference computes it (product rounded, then the
 * sum), or fused. */
template <bool FMA>
static __device__ __forceinline__ float conv_mac(float k, float p, float acc)
{
    return FMA ? fmaf(k, p, acc) : __fadd_rn(acc, __fmul_rn(k, p));
}

template <int C, bool FMA>
static __device__ __forceinline__ void vmac(vecf<C> &acc, float k, const vecf<C> &p)
{
#pragma unroll
    for (int ch = 0; ch < C; ch++) acc.v[ch] = conv_mac<FMA>(k, p.v[ch], acc.v[ch]);
}

/* A pixel of C floats in shared memory (16-byte aligned for C = 4). */
template <int C>
static __device__ __forceinline__ vecf<C> lds_px(const float *p)
{
    vecf<C> r;
    if constexpr (C == 4) {
        float4 q = *(const float4 *)p;
        r.v[0] = q.x; r.v[1] = q.y; r.v[2] = q.z; r.v[3] = q.w;
    } else if constexpr (C == 2) {
        float2 q = *(const float2 *)p;
        r.v[0] = q.x; r.v[1] = q.y;
    } else {
#pragma unroll
        for (int ch = 0; ch < C; ch++) r.v[ch] = p[ch];
    }
    return r;
}

template <int C>
static __device__ __forceinline__ void sts_px(float *p, const vecf<C> &v)
{
    if constexpr (C == 4) {
        *(float4 *)p = make_float4(v.v[0], v.v[1], v.v[2], v.v[3]);
    } else if constexpr (C == 2) {
        *(float2 *)p = make_float2(v.v[0], v.v[1]);
    } else {
#pragma unroll
        for (int ch = 0; ch < C; ch++) p[ch] = v.v[ch];
    }
}

/* ------------------------------------------------------- pixel loads
 * Pixel x of a row (x local to the view). FAST: one vector load per pixel
 * (the view must be aligned: conv_view_aligned) and ts_exact.h's
 * conversions, which a convolution would otherwise make once per channel
 * read and written; otherwise one load per channel and the plain rules of
 * gpu_internal.h. */
template <typename T, int C, bool FAST>
static __device__ __forceinline__ vecf<C> conv_ldg(const unsigned char *row, int x)
{
    vecf<C> r;
    const T *p = (const T *)row + (size_t)x * C;
    if constexpr (!FAST || C == 3) {
#pragma unroll
        for (int ch = 0; ch < C; ch++) {
            if constexpr (FAST && !std::is_same<T, float>::value)
                r.v[ch] = ts_exact_float((uint32_t)p[ch]);
            else
                r.v[ch] = tsk_px<T>::load(p[ch]);
        }
    } else if constexpr (std::is_same<T, uint8_t>::value) {
        if constexpr (C == 4) {
            uint32_t w = *(const uint32_t *)p;
            r.v[0] = ts_exact_byte_float(w, 0); r.v[1] = ts_exact_byte_float(w, 1);
            r.v[2] = ts_exact_byte_float(w, 2); r.v[3] = ts_exact_byte_float(w, 3);
        } else if constexpr (C == 2) {
            uint32_t w = *(const uint16_t *)p;
            r.v[0] = ts_exact_byte_float(w, 0); r.v[1] = ts_exact_byte_float(w, 1);
        } else {
            r.v[0] = ts_exact_float((uint32_t)p[0]);
        }
    } else if constexpr (std::is_same<T, uint16_t>::value) {
        if constexpr (C == 4) {
            uint2 w = *(const uint2 *)p;
            r.v[0] = ts_exact_half_float(w.x, 0); r.v[1] = ts_exact_half_float(w.x, 1);
            r.v[2] = ts_exact_half_float(w.y, 0); r.v[3] = ts_exact_half_float(w.y, 1);
        } else if constexpr (C == 2) {
            uint32_t w = *(const uint32_t *)p;
            r.v[0] = ts_exact_half_float(w, 0); r.v[1] = ts_exact_half_float(w, 1);
        } else {
            r.v[0] = ts_exact_float((uint32_t)p[0]);
        }
    } else {
        r = lds_px<C>((const float *)p);  /* a plain vector load; any address space */
    }
    return r;
}

/* Pixel x of a row gets v, rounded and saturated for integer types. */
template <typename T, int C, bool FAST>
static __device__ __forceinline__ void conv_stg(unsigned char *row, int x, const vecf<C> &v)
{
    T *p = (T *)row + (size_t)x * C;
    if constexpr (std::is_same<T, float>::value && FAST) {
        sts_px<C>(p, v);
    } else if constexpr (!FAST) {
#pragma unroll
        for (int ch = 0; ch < C; ch++) p[ch] = tsk_px<T>::store(v.v[ch]);
    } else {
        const float m = tsk_px<T>::maxv();
        uint32_t b[C];
#pragma unroll
        for (int ch = 0; ch < C; ch++) b[ch] = ts_exact_round_sat_bits(v.v[ch], m);
        if constexpr (std::is_same<T, uint8_t>::value && C == 4) {
            uint32_t lo = __byte_perm(b[0], b[1], 0x0040u), hi = __byte_perm(b[2], b[3], 0x0040u);
            *(uint32_t *)p = __byte_perm(lo, hi, 0x5410u);
        } else if constexpr (std::is_same<T, uint8_t>::value && C == 2) {
            *(uint16_t *)p = (uint16_t)__byte_perm(b[0], b[1], 0x0040u);
        } else if constexpr (std::is_same<T, uint16_t>::value && C == 4) {
            *(uint2 *)p = make_uint2(__byte_perm(b[0], b[1], 0x5410u), __byte_perm(b[2], b[3], 0x5410u));
        } else if constexpr (std::is_same<T, uint16_t>::value && C == 2) {
            *(uint32_t *)p = __byte_perm(b[0], b[1], 0x5410u);
        } else {
#pragma unroll
            for (int ch = 0; ch < C; ch++) p[ch] = (T)b[ch];  /* the low bits */
        }
    }
}

/* Copy one pixel of T x C (shared staging to global memory). */
template <typename T, int C>
static __device__ __forceinline__ void conv_copy_px(unsigned char *to, const unsigned char *from)
{
    constexpr int PS = (int)sizeof(T) * C;
    if constexpr (PS == 16) *(uint4 *)to = *(const uint4 *)from;
    else if constexpr (PS == 8) *(uint2 *)to = *(const uint2 *)from;
    else if constexpr (PS == 4) *(uint32_t *)to = *(const uint32_t *)from;
    else if constexpr (PS == 2) *(uint16_t *)to = *(const uint16_t *)from;
    else if constexpr (PS == 1) *to = *from;
    else {
#pragma unroll
        for (int ch = 0; ch < C; ch++) ((T *)to)[ch] = ((const T *)from)[ch];
    }
}

/* ------------------------------------------------------- border reads */

/* Channel ch of the tap at global (gx, gy), through the border mode (the
 * reference's ref_read_border, one channel). */
template <typename T>
static __device__ __forceinline__ float conv_read(const conv_io &io, int gx, int gy, int ch)
{
    int bx = ts_border_map(gx, io.fw, io.border), by = ts_border_map(gy, io.fh, io.border);
    if (bx < 0 || by < 0) return io.bv;
    const T *row = (const T *)(io.src + (size_t)(by - io.sy0) * io.sp);
    return tsk_px<T>::load(row[(size_t)(bx - io.sx0) * io.c + ch]);
}

/* --------------------------------------------------- shared-memory tile
 * A block computes tw x th output pixels. Its input tile, iw x ih = the
 * outputs grown by the radii, is read once from global memory (through
 * the border mode at the image's edges) into S as floats. Rows of S are
 * padded so that rows differ by C banks (C = 1, 2, 4; odd for C = 3):
 * threads that walk down consecutive rows then hit distinct banks. */
struct conv_tile {
    int tw, th, tw_log2, th_log2;  /* output pixels per block (powers of 2) */
    int iw, ih;                    /* the input tile */
    int pitch_s;                   /* floats per row of S */
    int pitch_r;                   /* floats per row of R (separable: row sums) */
    int off_r;                     /* R's offset in floats */
    int pitch_o;                   /* bytes per row of O (staged outputs) */
    int off_o;                     /* O's offset in bytes */
    unsigned iw_magic, ih_magic;   /* t / iw == __umulhi(t, iw_magic) for the t used */
    size_t smem;                   /* dynamic shared memory, bytes */
};

/* Smallest p >= n with p = c (mod 32), or p odd for c = 3. */
static inline int conv_pad_floats(int n, int c)
{
    if (c == 3) return n | 1;
    return n + (((c - n) % 32) + 32) % 32;
}

/* ceil(2^32 / d): for t * d < 2^32, __umulhi(t, m) == t / d. */
static inline unsigned conv_magic(int d) { return (unsigned)((0x100000000ull + (unsigned)d - 1) / (unsigned)d); }

static inline int conv_log2(int n)
{
    int l = 0;
    while ((1 << l) < n) l++;
    return l;
}

/* Largest dynamic shared memory a block may have on the current device. */
static inline size_t conv_smem_limit(void)
{
    int dev = 0, v = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess) {
        cudaGetLastError();
        return 48 * 1024;
    }
    return (size_t)v;
}

/* What both families' tiles share: tw x th outputs, the input tile
 * around them (radii rx, ry) and the pitch of S; the rest zero. */
static inline void conv_tile_shape(conv_tile *g, int c, int tw, int th, int rx, int ry)
{
    memset(g, 0, sizeof *g);
    g->tw = tw;
    g->th = th;
    g->tw_log2 = conv_log2(tw);
    g->th_log2 = conv_log2(th);
    g->iw = tw + 2 * rx;
    g->ih = th + 2 * ry;
    g->pitch_s = conv_pad_floats(g->iw * c, c);
    g->iw_magic = conv_magic(g->iw);
    g->ih_magic = conv_magic(g->ih);
}

/* Load the input tile: pixels (gx0 + ix, gy0 + iy) for ix < lw, iy < lh
 * (the part that valid outputs read); the rest of S is zeroed so that no
 * thread ever computes on uninitialised memory. Consecutive threads take
 * consecutive pixels: coalesced reads, conflict-free writes. */
template <typename T, int C, bool FAST>
static __device__ __forceinline__ void conv_load_tile(const conv_io &io, float *S, const conv_tile &g, int gx0,
                                                      int gy0, int lw, int lh)
{
    const bool inside = gx0 >= 0 && gy0 >= 0 && gx0 + lw <= io.fw && gy0 + lh <= io.fh;
    const int n = g.iw * g.ih;
#pragma unroll 4
    for (int t = threadIdx.x; t < n; t += blockDim.x) {
        int iy = (int)__umulhi((unsigned)t, g.iw_magic), ix = t - iy * g.iw;
        vecf<C> v = vfill<C>(0.0f);
        if (ix < lw && iy < lh) {
            int bx = gx0 + ix, by = gy0 + iy;
            if (!inside) {  /* the same for the whole block */
                bx = ts_border_map(bx, io.fw, io.border);
                by = ts_border_map(by, io.fh, io.border);
            }
            if (bx < 0 || by < 0)
                v = vfill<C>(io.bv);
            else
                v = conv_ldg<T, C, FAST>(io.src + (size_t)(by - io.sy0) * io.sp, bx - io.sx0);
        }
        sts_px<C>(S + iy * g.pitch_s + ix * C, v);
    }
}

/* ------------------------------------- register-blocked 1-D convolution
 * For K consecutive outputs k = 0..K-1 at in, in + stride, ...:
 *   acc[k] += taps[i] * in[(k + i) * stride]   for i = 0..n-1, in order
 * (and acc2 with taps2 when TWO). Every pixel loaded from shared memory
 * feeds up to K outputs from registers. The window is two banks of K
 * pixels used alternately (w0 then w1, w1 then w0), so the loop moves no
 * register. The taps stay in __constant__ memory: the index is the same
 * for every thread of the warp (a broadcast). */

template <int C, int K>
static __device__ __forceinline__ void conv_window(vecf<C> (&w)[K], const float *p, int stride, int count)
{
#pragma unroll
    for (int m = 0; m < K; m++)
        if (m < count) w[m] = lds_px<C>(p + m * stride);
}

/* Taps t = 0..K-1 (t < left when GUARD) on the window wa:wb. */
template <int C, int K, bool FMA, bool TWO, bool GUARD>
static __device__ __forceinline__ void conv_taps(const vecf<C> (&wa)[K], const vecf<C> (&wb)[K], const float *taps,
                                                 const float *taps2, int left, vecf<C> (&acc)[K],
                                                 vecf<C> (&acc2)[K])
{
#pragma unroll
    for (int t = 0; t < K; t++) {
        if (GUARD && t >= left) break;
        const float k1 = taps[t];
        const float k2 = TWO ? taps2[t] : 0.0f;
#pragma unroll
        for (int k = 0; k < K; k++) {
            const vecf<C> &p = k + t < K ? wa[k + t] : wb[k + t - K];
            vmac<C, FMA>(acc[k], k1, p);
            if (TWO) vmac<C, FMA>(acc2[k], k2, p);
        }
    }
}

template <int C, int K, bool FMA, bool TWO>
static __device__ __forceinline__ void conv_run(const float *in, int stride, int n, const float *taps,
                                                const float *taps2, vecf<C> (&acc)[K], vecf<C> (&acc2)[K])
{
    vecf<C> w0[K], w1[K];
    /* Position m of the window is needed while m < K + n - 1. */
    conv_window<C, K>(w0, in, stride, K);
    int c = 0;
    for (; c + 2 * K <= n; c += 2 * K) {
        conv_window<C, K>(w1, in + (c + K) * stride, stride, K);
        conv_taps<C, K, FMA, TWO, false>(w0, w1, taps + c, taps2 + c, K, acc, acc2);
        conv_window<C, K>(w0, in + (c + 2 * K) * stride, stride, n - 1 - c - K);
        conv_taps<C, K, FMA, TWO, false>(w1, w0, taps + c + K, taps2 + c + K, K, acc, acc2);
    }
    if (c < n) {
        conv_window<C, K>(w1, in + (c + K) * stride, stride, n - 1 - c);
        conv_taps<C, K, FMA, TWO, true>(w0, w1, taps + c, taps2 + c, n - c, acc, acc2);
        if (c + K < n) {
            conv_window<C, K>(w0, in + (c + 2 * K) * stride, stride, n - 1 - c - K);
            conv_taps<C, K, FMA, TWO, true>(w1, w0, taps + c + K, taps2 + c + K, n - c - K, acc, acc2);
        }
    }
}

/* ------------------------------------------- column walk (RGBA8 only)
 * Separable v8 and 2-D v7 walk down a strip
 * instead of filling a tile. A block of CW_THREADS threads owns a strip
 * CW_THREADS pixels wide and CW_ROWS output rows tall and reads its input
 * one row at a time: thread t loads pixel t of the row (one 4-byte load,
 * coalesced), the first 2 rx threads the halo on the right, several rows
 * ahead of use (registers; D rows in flight). Each row is converted once
 * (byte permute + subtraction, no conversion unit) into four channel
 * planes of floats in shared memory, double buffered: one barrier per row.
 * Thread t then computes channel t % 4 of the four pixels 4 (t / 4) ..
 * 4 (t / 4) + 3 from 1 + R4 / 2 aligned 16-byte shared loads (R4 = rx
 * rounded up to 4; the planes' pitch is 8 mod 32 words, so a quarter warp
 * of such loads touches 32 distinct banks). The vertical direction never
 * touches shared memory: the rows a thread needs stay in its registers (a
 * ring indexed at compile time, the loop unrolled by the tap count).
 *
 * Results are clamped for free (the last add carries .SAT: the taps are
 * pre-scaled by 1/255 on the host, so outputs live in [0, 1]) and rounded
 * by one fma with 1.5 * 2^23 (round half to even: within the +-1 of the
 * fused versions). Four lanes then swap bytes (three shuffles, four
 * permutes) so that lane t holds pixel t whole and stores it: coalesced.
 * The taps are kernel parameters (constant bank 0 at compile-time
 * offsets): multiply-adds take them as operands, costing no register or
 * load. A constant border is the pixel with every byte = the border value
 * (the launchers use the column walk only when that value is an integer
 * in 0..255). */
enum { CW_THREADS = 256, CW_ROWS = 128 };

static __host__ __device__ constexpr int cw_r4(int r) { return (r + 3) & ~3; }
/* Floats per channel plane: >= CW_THREADS + 2 R4, = 8 (mod 32). */
static __host__ __device__ constexpr int cw_pitch(int r)
{
    return CW_THREADS + 2 * cw_r4(r) + (((8 - CW_THREADS - 2 * cw_r4(r)) % 32) + 32) % 32;
}

/* Byte offset in a src row of strip column gx (through the border mode);
 * -1 for a constant border, -2 for a column no output needs. */
static __device__ __forceinline__ int cw_col(const conv_io &io, int gx, bool needed)
{
    if (!needed) return -2;
    const int bx = ts_border_map(gx, io.fw, io.border);
    return bx < 0 ? -1 : (bx - io.sx0) * 4;
}

/* Image row gy of src (through the border mode); NULL for a constant border. */
static __device__ __forceinline__ const unsigned char *cw_row(const conv_io &io, int gy)
{
    const int by = ts_border_map(gy, io.fh, io.border);
    return by < 0 ? (const unsigned char *)0 : io.src + (size_t)(by - io.sy0) * io.sp;
}

static __device__ __forceinline__ uint32_t cw_load(const unsigned char *row, int col, uint32_t border_px)
{
    return row && col >= 0 ? *(const uint32_t *)(row + col) : border_px;
}

/* Pixel w into the four planes (P floats apart) at column q. */
template <int P>
static __device__ __forceinline__ void cw_put(float *planes, int q, uint32_t w)
{
    planes[q] = ts_exact_byte_float(w, 0);
    planes[P + q] = ts_exact_byte_float(w, 1);
    planes[2 * P + q] = ts_exact_byte_float(w, 2);
    planes[3 * P + q] = ts_exact_byte_float(w, 3);
}

/* Channel c of columns 4 g .. 4 g + 4 M - 1 of the planes. */
template <int P, int M>
static __device__ __forceinline__ void cw_get(const float *planes, int g, int c, float (&v)[4 * M])
{
    const float *p = planes + c * P + 4 * g;
#pragma unroll
    for (int m = 0; m < M; m++) {
        const float4 q = *(const float4 *)(p + 4 * m);
        v[4 * m] = q.x; v[4 * m + 1] = q.y; v[4 * m + 2] = q.z; v[4 * m + 3] = q.w;
    }
}

/* Byte selectors of the 4 x 4 byte transpose for the lane of channel c:
 * step x takes byte c of the word of channel c ^ x to byte c ^ x. */
static __device__ __forceinline__ void cw_transpose_sel(int c, uint32_t (&sel)[4])
{
#pragma unroll
    for (int x = 0; x < 4; x++) {
        uint32_t s = 0;
#pragma unroll
        for (int q = 0; q < 4; q++) s |= (uint32_t)(q == (c ^ x) ? c : 4 + q) << (4 * q);
        sel[x] = s;
    }
}

/* y[p] (in [0, 1]) is channel c of pixel 4 (t / 4) + p of output row gy;
 * lane t writes pixel t of the strip (x0 = its first column) when t < vw.
 * Every thread of the block must call it (shuffles). */
static __device__ __forceinline__ void cw_store(const conv_io &io, int gy, int x0, int t, int vw, const float (&y)[4],
                                                const uint32_t (&sel)[4])
{
    uint32_t n[4];
#pragma unroll
    for (int p = 0; p < 4; p++) n[p] = (uint32_t)__float_as_int(fmaf(y[p], 255.0f, TS_EXACT_1P5));
    const uint32_t w = __byte_perm(__byte_perm(n[0], n[1], 0x0040u), __byte_perm(n[2], n[3], 0x0040u), 0x5410u);
    uint32_t px = __byte_perm(w, 0u, sel[0]);
#pragma unroll
    for (int x = 1; x < 4; x++) px = __byte_perm(__shfl_xor_sync(0xFFFFFFFFu, w, x), px, sel[x]);
    if (t < vw)
        *(uint32_t *)(io.dst + (size_t)(gy - io.dy0) * io.dp + (size_t)(x0 - io.dx0 + t) * 4) = px;
}

/* The constant border as a pixel of four equal bytes; 0 when v is not an
 * integer in 0..255 (then the column walk cannot express it). */
static inline int cw_border_px(const conv_io &io, uint32_t *px)
{
    *px = 0;
    if (io.border != TS_BORDER_CONSTANT) return 1;
    if (!(io.bv >= 0.0f && io.bv <= 255.0f) || io.bv != (float)(int)io.bv) return 0;
    *px = 0x01010101u * (uint32_t)io.bv;
    return 1;
}

/* The column walk's grid: a block per strip of CW_THREADS x CW_ROWS outputs. */
static inline dim3 cw_grid(const conv_io &io)
{
    return dim3((unsigned)((io.dw + CW_THREADS - 1) / CW_THREADS), (unsigned)((io.dh + CW_ROWS - 1) / CW_ROWS));
}

/* The walk itself: rows 0 .. rows - 1 of the block's input window (image
 * rows y0 - RY ..), each converted into the planes once and handed to
 * step(s, r, v) with v channel t % 4 of window columns 4 (t / 4) ..; s = r
 * mod N is a constant after unrolling, so step can index register rings
 * with it. D rows are in flight ahead of use (D divides N). Columns start
 * at x0 - RX; vw valid output columns. */
template <int N, int D, int RX, int RY, class Step>
static __device__ __forceinline__ void cw_walk(const conv_io &io, uint32_t border_px, int x0, int y0, int vw,
                                               int rows, Step &&step)
{
    static_assert(N % D == 0, "the prefetch ring must divide the unrolled loop");
    static_assert(2 * RX <= 32, "the halo is loaded by the first warp");
    constexpr int R4 = cw_r4(RX), M = 1 + R4 / 2, P = cw_pitch(RX);
    __shared__ __align__(16) float buf[2][4 * P];
    const int t = threadIdx.x, g = t >> 2, c = t & 3;
    const bool halo = t < 2 * RX;
    const int col = cw_col(io, x0 - RX + t, t < vw + 2 * RX);
    const int colh = halo ? cw_col(io, x0 - RX + CW_THREADS + t, CW_THREADS + t < vw + 2 * RX) : -2;
    uint32_t pf[D], pfh[D];
#pragma unroll
    for (int d = 0; d < D; d++) {
        pf[d] = pfh[d] = border_px;
        if (d < rows) {
            const unsigned char *row = cw_row(io, y0 - RY + d);
            pf[d] = cw_load(row, col, border_px);
            if (halo) pfh[d] = cw_load(row, colh, border_px);
        }
    }
    for (int r0 = 0; r0 < rows; r0 += N) {
#pragma unroll
        for (int s = 0; s < N; s++) {
            const int r = r0 + s;
            if (r >= rows) break;
            float *b = buf[r & 1];
            cw_put<P>(b, R4 - RX + t, pf[s % D]);
            if (halo) cw_put<P>(b, R4 - RX + CW_THREADS + t, pfh[s % D]);
            if (r + D < rows) {
                const unsigned char *row = cw_row(io, y0 - RY + r + D);
                pf[s % D] = cw_load(row, col, border_px);
                if (halo) pfh[s % D] = cw_load(row, colh, border_px);
            }
            __syncthreads();
            float v[4 * M];
            cw_get<P, M>(b, g, c, v);
            step(s, r, v);
        }
    }
}

/* -------------------------------------------- warp walk (RGBA8 only)
 * The column walk without shared memory or barriers (separable v9 and v10,
 * 2-D v8 and v9), and with half its instructions per pixel: the column walk
 * issues in most of its cycles, so its time is its instruction count, much
 * of it integer work (docs/PERFORMANCE.md, "Separable convolution"). Whole
 * pixels per lane remove the output's lane transpose, most load and store
 * instructions, and the shared stores and loads. Each warp walks on its
 * own: it owns a strip ww_out(P) = 30 P pixels wide and WW_ROWS output rows
 * tall; lane l holds the P pixels (4 or 2) at strip columns P (l - 1) ..
 * P (l - 1) + P - 1, all four channels. Lanes 1..30 make outputs; lanes 0
 * and 31 load the halo (R <= P pixels each side) and their sums are thrown
 * away. Per row a lane loads its P pixels with one 4P-byte load (128 P
 * coalesced bytes per warp; D rows in flight ahead of use), converts its 4P
 * values once (byte permute and a subtraction, as the column walk does),
 * and takes the R pixels on either side from its neighbours' registers: 8
 * R shuffles. The step then keeps whatever ring it needs in registers,
 * indexed at compile time. Outputs are rounded as in the column walk (the
 * last fma carries .SAT, one fma with 1.5 * 2^23 rounds), and each lane
 * stores its P pixels with one store where the view allows (align: bit 0
 * src, bit 1 dst, both 16-byte aligned with 16-byte pitches), else pixel
 * by pixel. Two pixels a lane halve the registers a ring takes (16 N to
 * 8 N), so twice the warps fit an SM; four halve the shuffles per pixel.
 *
 * LEAN (separable v11 and v12, 2-D v10 and v11) cuts what a row costs
 * besides its sums: where a strip's rows all lie inside the image, its
 * load and store addresses are stepped by a pitch per row instead of
 * mapped through the border and multiplied out (the bytes are the same).
 * A version may also size its grid to one wave of blocks (ww_wave_rows):
 * strips as tall as that makes them, less halo, no partial last wave, but
 * also no blocks left to hand to an SM that finishes early. */
enum { WW_WARPS = 4, WW_THREADS = 32 * WW_WARPS, WW_ROWS = 64, WW_MIN_ROWS = 8 };

/* The output columns of a warp's strip, at P pixels a lane. */
static constexpr __host__ __device__ int ww_out(int P) { return 30 * P; }

/* The warp walk's grid: WW_WARPS strips side by side per block, each
 * `rows` output rows tall. */
template <int P>
static inline dim3 ww_grid(const conv_io &io, int rows)
{
    const int strip = WW_WARPS * ww_out(P);
    return dim3((unsigned)((io.dw + strip - 1) / strip), (unsigned)((io.dh + rows - 1) / rows));
}

/* A one-wave grid's strip height: the fewest rows (at least WW_MIN_ROWS) for which
 * the grid is at most one wave, blocks_per_sm blocks on every SM of the
 * current device. A smaller grid leaves SMs idle, a larger one a partial
 * last wave; within one wave the taller the strip the smaller its halo's
 * share. WW_ROWS where the device cannot be asked. */
template <int P>
static inline int ww_wave_rows(const conv_io &io, int blocks_per_sm)
{
    int dev = 0, sms = 0;
    if (blocks_per_sm < 1 || cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms < 1)
        return WW_ROWS;
    const long strip = WW_WARPS * ww_out(P), cols = (io.dw + strip - 1) / strip;
    const long strips_down = (long)sms * blocks_per_sm / cols;
    if (strips_down <= 1) return io.dh > WW_MIN_ROWS ? io.dh : WW_MIN_ROWS;
    const long rows = (io.dh + strips_down - 1) / strips_down;
    return rows < WW_MIN_ROWS ? WW_MIN_ROWS : (int)rows;
}

/* How many blocks of Kernel (WW_THREADS each) an SM holds; asked once
 * per kernel (its registers set the limit). */
template <auto Kernel>
static inline int ww_blocks_per_sm()
{
    static const int n = [] {
        int b = 0;
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, Kernel, WW_THREADS, 0) == cudaSuccess ? b : 0;
    }();
    return n;
}

/* bit 0: src rows 16-byte aligned; bit 1: dst rows likewise. */
static inline unsigned ww_align(const conv_io &io)
{
    return (((uintptr_t)io.src % 16 == 0 && io.sp % 16 == 0) ? 1u : 0u) |
           (((uintptr_t)io.dst % 16 == 0 && io.dp % 16 == 0) ? 2u : 0u);
}

/* The calling warp's strip: its first output column and row, and how many
 * of its columns and rows are in the region (vw <= 0: none). */
struct ww_strip {
    int x0, y0, vw, vh;
};
template <int P>
static __device__ __forceinline__ ww_strip ww_strip_of(const conv_io &io, int rows)
{
    ww_strip t;
    t.x0 = io.dx0 + ((int)blockIdx.x * WW_WARPS + (int)(threadIdx.x >> 5)) * ww_out(P);
    t.y0 = io.dy0 + (int)blockIdx.y * rows;
    t.vw = min(ww_out(P), io.dx0 + io.dw - t.x0);
    t.vh = min(rows, io.dy0 + io.dh - t.y0);
    return t;
}

/* P pixels of a lane, packed RGBA8. */
template <int P>
struct ww_px {
    uint32_t w[P];
};

/* The lane's P pixels of a src row: one 4P-byte load where they are P
 * consecutive pixels of an aligned row, else one by one (cw_load). */
template <int P>
static __device__ __forceinline__ ww_px<P> ww_load(const unsigned char *row, const int (&cols)[P], bool vec,
                                                   uint32_t border_px)
{
    static_assert(P == 2 || P == 4, "a lane holds 2 or 4 pixels");
    ww_px<P> v;
    if (vec && row) {
        if constexpr (P == 4) {
            const uint4 q = __ldg((const uint4 *)(row + cols[0]));
            v.w[0] = q.x; v.w[1] = q.y; v.w[2] = q.z; v.w[3] = q.w;
        } else {
            const uint2 q = __ldg((const uint2 *)(row + cols[0]));
            v.w[0] = q.x; v.w[1] = q.y;
        }
        return v;
    }
#pragma unroll
    for (int k = 0; k < P; k++) v.w[k] = cw_load(row, cols[k], border_px);
    return v;
}

/* The walk: rows 0 .. rows - 1 of the warp's input window (image rows
 * y0 - R ..), each handed to step(s, r, win, out) with win[q][c] channel c
 * of strip column P (l - 1) - R + q, q < P + 2 R; s = r mod N is a
 * constant after unrolling; from r = N - 1 on, out is the start of dst's
 * row of output row y0 + r - (N - 1), which step writes (ww_store). x0:
 * the strip's first output column; vw valid output columns (> 0). Every
 * lane of the warp must call it (shuffles). STEP (LEAN, where the window
 * lies inside the image): row addresses stepped by a pitch. */
template <int N, int D, int R, int P, bool STEP, class Step>
static __device__ __forceinline__ void ww_walk_rows(const conv_io &io, uint32_t border_px, const int (&cols)[P],
                                                    bool vec, int y0, int rows, Step &&step)
{
    static_assert(N % D == 0, "the prefetch ring must divide the unrolled loop");
    const unsigned char *ahead = io.src + (ptrdiff_t)(y0 - R + D - io.sy0) * (ptrdiff_t)io.sp;  /* STEP */
    unsigned char *out = io.dst + (ptrdiff_t)(y0 - io.dy0) * (ptrdiff_t)io.dp;                 /* STEP */
    ww_px<P> pf[D];
#pragma unroll
    for (int d = 0; d < D; d++) {
        if (d < rows) {
            pf[d] = ww_load<P>(cw_row(io, y0 - R + d), cols, vec, border_px);
        } else {
#pragma unroll
            for (int k = 0; k < P; k++) pf[d].w[k] = border_px;
        }
    }
    for (int r0 = 0; r0 < rows; r0 += N) {
#pragma unroll
        for (int s = 0; s < N; s++) {
            const int r = r0 + s;
            if (r >= rows) break;
            const ww_px<P> w = pf[s % D];
            if (r + D < rows) {
                pf[s % D] = ww_load<P>(STEP ? ahead : cw_row(io, y0 - R + r + D), cols, vec, border_px);
                if (STEP) ahead += io.sp;
            }
            float win[P + 2 * R][4];
#pragma unroll
            for (int k = 0; k < P; k++)
#pragma unroll
                for (int c = 0; c < 4; c++) win[R + k][c] = ts_exact_byte_float(w.w[k], c);
#pragma unroll
            for (int k = 0; k < R; k++)
#pragma unroll
                for (int c = 0; c < 4; c++) {
                    win[k][c] = __shfl_up_sync(0xFFFFFFFFu, win[P + k][c], 1);
                    win[R + P + k][c] = __shfl_down_sync(0xFFFFFFFFu, win[R + k][c], 1);
                }
            step(s, r, win, STEP ? out : io.dst + (ptrdiff_t)(y0 + r - (N - 1) - io.dy0) * (ptrdiff_t)io.dp);
            if (STEP && r >= N - 1) out += io.dp;
        }
    }
}

/* The walk of a strip (ww_walk_rows): the lane's columns through the
 * border, then rows mapped one by one, or, LEAN and every row of the
 * window inside the image (the same for the whole warp), stepped. */
template <int N, int D, int R, int P, bool LEAN, class Step>
static __device__ __forceinline__ void ww_walk(const conv_io &io, uint32_t border_px, unsigned align, int x0, int y0,
                                               int vw, int rows, Step &&step)
{
    static_assert(R <= P, "the halo comes from the next lane only");
    const int lane = threadIdx.x & 31;
    int cols[P];
#pragma unroll
    for (int k = 0; k < P; k++) {
        const int gx = x0 - P + P * lane + k;
        cols[k] = cw_col(io, gx, gx >= x0 - R && gx < x0 + vw + R);
    }
    bool vec = (align & 1u) && cols[0] >= 0 && (cols[0] & (4 * P - 1)) == 0;
#pragma unroll
    for (int k = 1; k < P; k++) vec = vec && cols[k] == cols[0] + 4 * k;
    if (LEAN && y0 - R >= 0 && y0 - R + rows <= io.fh)
        ww_walk_rows<N, D, R, P, true>(io, border_px, cols, vec, y0, rows, step);
    else
        ww_walk_rows<N, D, R, P, false>(io, border_px, cols, vec, y0, rows, step);
}

/* y[p][c] (in [0, 1]) is channel c of pixel p of the lane's P in the
 * output row that starts at dst_row: rounded, packed and stored by lanes
 * 1..30 (those of valid columns). */
template <int P>
static __device__ __forceinline__ void ww_store(const conv_io &io, unsigned char *dst_row, int x0, int vw,
                                                unsigned align, const float (&y)[P][4])
{
    const int lane = threadIdx.x & 31, ox = P * (lane - 1);
    if (lane == 0 || lane == 31 || ox >= vw) return;
    uint32_t px[P];
#pragma unroll
    for (int p = 0; p < P; p++) {
        uint32_t n[4];
#pragma unroll
        for (int c = 0; c < 4; c++) n[c] = (uint32_t)__float_as_int(fmaf(y[p][c], 255.0f, TS_EXACT_1P5));
        px[p] = __byte_perm(__byte_perm(n[0], n[1], 0x0040u), __byte_perm(n[2], n[3], 0x0040u), 0x5410u);
    }
    unsigned char *row = dst_row + (size_t)(x0 + ox - io.dx0) * 4;
    if ((align & 2u) && ox + P <= vw) {
        if constexpr (P == 4)
            *(uint4 *)row = make_uint4(px[0], px[1], px[2], px[3]);
        else
            *(uint2 *)row = make_uint2(px[0], px[1]);
    } else {
#pragma unroll
        for (int p = 0; p < P; p++)
            if (ox + p < vw) ((uint32_t *)row)[p] = px[p];
    }
}

/* ------------------------------------------------ coefficient banks
 * __constant__ memory is one symbol per module and streams run at the
 * same time, so the taps live in one bank per slot (TSK_SLOTS of them); a
 * launch uploads into bank l->slot on l->stream, in stream order before its
 * kernel, and the kernel indexes its bank with a uniform argument. The
 * host keeps a copy of each bank and skips the upload when the bank
 * already holds the same taps on the same device. A slot belongs to one
 * stream and one host thread at a time (the engine's contract), so the
 * copy needs no lock. The bank is built on the stack: a copy from pageable
 * memory has consumed its source when the call returns. */
template <typename Bank>
struct conv_bank_cache {
    int valid, device;
    Bank bank;
};

/* 1 when bank slot of the cache already holds b on the current device. */
template <typename Bank>
static inline int conv_bank_cached(const conv_bank_cache<Bank> *cache, int device, const Bank &b)
{
    return cache->valid && cache->device == device && memcmp(&cache->bank, &b, sizeof b) == 0;
}

/* Upload b into bank `slot` of both symbols (the __constant__ one the
 * kernels read and the global one v1 reads) on stream s, unless the host's
 * copy (one per family: per Bank) says the bank holds it already. what
 * names the family in messages. */
template <typename Bank>
static ts_status conv_upload_bank(const Bank (&c_sym)[TSK_SLOTS], const Bank (&g_sym)[TSK_SLOTS], const Bank &b,
                                  int slot, cudaStream_t s, const char *what, ts_err *err)
{
    static conv_bank_cache<Bank> cache[TSK_SLOTS];
    char msg[96];
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) {
        snprintf(msg, sizeof msg, "%s: current device", what);
        return tsk_cuda_status(e, msg, err);
    }
    if (conv_bank_cached(&cache[slot], dev, b)) return TS_OK;
    cache[slot].valid = 0;
    e = cudaMemcpyToSymbolAsync(c_sym, &b, sizeof b, (size_t)slot * sizeof b, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess)
        e = cudaMemcpyToSymbolAsync(g_sym, &b, sizeof b, (size_t)slot * sizeof b, cudaMemcpyHostToDevice, s);
    if (e != cudaSuccess) {
        snprintf(msg, sizeof msg, "%s: uploading taps", what);
        return tsk_cuda_status(e, msg, err);
    }
    cache[slot].bank = b;
    cache[slot].device = dev;
    cache[slot].valid = 1;
    return TS_OK;
}

/* ------------------------------------------------------ version tables
 * A family lists its versions in one table, row v - 1 for version v: the
 * name tsk_version_name gives, how the version runs, whether it fuses
 * multiply-add, and the shape of its work. What the dispatch below and the
 * family's launchers know of a version comes from its row. */
enum conv_path {
    CONV_NAIVE_GLOBAL,  /* F::naive<T, false>: a thread per channel value, taps in global memory */
    CONV_NAIVE_CONST,   /* F::naive<T, true>: the same, taps in the __constant__ bank */
    CONV_TILED,         /* F::tiled: a shared-memory tile per block, any type and channel count */
    CONV_WALK,          /* F::walk: the column walk, RGBA8 only; what it does not take runs v4 */
    CONV_WARP,          /* F::warp: the warp walk, RGBA8 only; what it does not take runs the
                         * column walk, then v4 */
};

struct conv_version {
    const char *name;
    conv_path path;
    bool fma;   /* fused multiply-add (integers within 1 of the reference); false: bit-exact */
    bool fast;  /* a vector load or store per pixel and conversions without the conversion
                 * unit (conv_ldg's FAST): the views must be aligned, else v3 runs */
    int px;      /* CONV_TILED: outputs per thread in units of conv_k (0: one output) */
    int rows;    /* CONV_TILED: tile rows before halving to fit (0: 8 per output of a thread) */
    int lane_px; /* CONV_WARP: pixels a lane (ww_walk's P: 4 or 2) */
    bool lean;   /* CONV_WARP: ww_walk's LEAN (row addresses stepped inside the image) */
    bool wave;   /* CONV_WARP: a grid of one wave, strips as tall as that makes them (else WW_ROWS) */
    int mma;     /* CONV_WARP: the tensor cores from this many taps on, where the family has them
                  * for the op (0: never); else the warp walk */
    int raw;     /* with mma: 0 for the tensor-core kernel that converts tiles on their way into
                  * shared memory (separable v13), else the one that copies them raw (v15), at
                  * this many blocks an SM */
    bool steps;  /* with raw = 3: an orientation after stored by byte steps, the matrix on the
                  * rounded values (separable v18) */
    bool outer;  /* separable, 3 and 5 taps without an orientation after: 2-D v12's kernel on the
                  * outer product of the taps (separable v20) */
    int mb;      /* with raw = 3: m-blocks of 16 output rows a tile (0: 2, v15's 32 rows; 4: 64 rows,
                  * separable v21) */
    bool tiny;   /* with mb = 4: the inputs as exact subnormal halves, no offset (separable v23) */
    int c2d;     /* 2-D, with mma: the tensor-core kernel of that version (0: v12's; 13: the tile converted
                  * once into half2 planes; 14: that with two accumulator chains a channel pair;
                  * 15: k8 products from shifted planes at 5x5; 16: v13 on tiles of 32 rows, four
                  * blocks an SM; 17: v13 on exact small inputs, no offset; 18: 8-bit integer
                  * products from the raw tile; 19: 18 with the next block's reads early; 20: 19 on
                  * 56-row tiles; 21: 19 with its outputs on the grid; 22: 18 with its outputs on
                  * the grid; 23: 22 at four blocks an SM; 24: 22 on 56-row tiles) */
};

/* K, the outputs per thread of the register-blocked versions: 8 pixels of
 * C <= 2 channels, 4 of more. */
static constexpr int conv_k(int c) { return c <= 2 ? 8 : 4; }

static constexpr int conv_outputs(const conv_version &v, int c) { return v.px ? v.px * conv_k(c) : 1; }

static constexpr int conv_tile_rows(const conv_version &v, int c) { return v.rows ? v.rows : 8 * conv_outputs(v, c); }

/* tsk_family's version_names and fma, read off family F's table. */
template <class F, class I = std::make_index_sequence<F::count>>
struct conv_table;
template <class F, size_t... I>
struct conv_table<F, std::index_sequence<I...>> {
    static constexpr const char *names[] = { F::versions[I].name... };
    static constexpr unsigned char fma[] = { (unsigned char)F::versions[I].fma... };
};

/* ------------------------------------------------ dispatch and launch
 * A family F is a struct naming what differs between the two: args (its
 * kernel argument, holding io), what (its name in messages), versions and
 * count (its table), default_version, family (its tsk_family), and its
 * functions
 *   check(op, err)                         the op's parameters but the border
 *   upload(op, slot, s, err)               its taps into bank `slot`
 *   args_of(op, src, dst, slot)            the kernel argument
 *   naive<T, CONST_TAPS>(a, s, err)        v1 and v2
 *   tiled<T, C, K, FMA, FAST>(a, th, s, err)  a CONV_TILED version: K outputs
 *                                          per thread, tiles th rows tall
 *   walk(a, op, border_px, s, done, err)   the column walk, for the ops it
 *                                          takes (*done = 1); else nothing
 *   warp(a, op, border_px, v, s, done, err)  the warp walk as version v's
 *                                          row says (lane_px, lean, wave), likewise
 * Versions are picked the same way in both: the launch's (or the
 * default), then v3 when a view is not aligned to whole pixels for a fast
 * version; for a warp-walk version the warp walk when it takes the op,
 * else the column walk; for either walk, v4 when neither takes it. */
template <class F>
static inline ts_status conv_pick_version(const tsk_launch *l, const ts_view *src, const ts_view *dst,
                                          int *version, ts_err *err)
{
    static_assert(F::versions[2].path == CONV_TILED && !F::versions[2].fast, "v3 runs unaligned views");
    ts_status st = tsk_pick_version(F::family, l, version, err);
    if (st != TS_OK) return st;
    if (F::versions[*version - 1].fast && !(conv_view_aligned(src) && conv_view_aligned(dst))) *version = 3;
    return TS_OK;
}

/* Tiled version `version` of F on T x C, as its row says: the row of that
 * number is found at compile time, and each CONV_TILED row instantiates
 * its own kernels. */
template <class F, typename T, int C, int V = 1>
static ts_status conv_run_tiled(const typename F::args &a, int version, cudaStream_t s, ts_err *err)
{
    if constexpr (V > F::count) {
        return ts_err_set(err, TS_E_ARG, "%s: version %d has no tiled kernel", F::what, version);
    } else {
        constexpr conv_version v = F::versions[V - 1];
        if constexpr (v.path == CONV_TILED)
            if (version == V)
                return F::template tiled<T, C, conv_outputs(v, C), v.fma, v.fast>(a, conv_tile_rows(v, C), s, err);
        return conv_run_tiled<F, T, C, V + 1>(a, version, s, err);
    }
}

/* Version `version` (not the column walk) of F on channels of type T. */
template <class F, typename T>
static ts_status conv_run_version(const typename F::args &a, int version, cudaStream_t s, ts_err *err)
{
    switch (F::versions[version - 1].path) {
    case CONV_NAIVE_GLOBAL: return F::template naive<T, false>(a, s, err);
    case CONV_NAIVE_CONST: return F::template naive<T, true>(a, s, err);
    default: break;
    }
    switch (a.io.c) {
    case 1: return conv_run_tiled<F, T, 1>(a, version, s, err);
    case 2: return conv_run_tiled<F, T, 2>(a, version, s, err);
    case 3: return conv_run_tiled<F, T, 3>(a, version, s, err);
    default: return conv_run_tiled<F, T, 4>(a, version, s, err);
    }
}

template <class F>
static ts_status conv_run_type(ts_type t, const typename F::args &a, int version, cudaStream_t s, ts_err *err)
{
    switch (t) {
    case TS_U8: return conv_run_version<F, uint8_t>(a, version, s, err);
    case TS_U16: return conv_run_version<F, uint16_t>(a, version, s, err);
    default: return conv_run_version<F, float>(a, version, s, err);
    }
}

/* The column walk (WARP false: F::walk) or the warp walk (F::warp, as
 * version v's row says), when it takes the op: RGBA8, no alpha
 * pass-through, a region that is not empty, a border it can express, and
 * an op the family's walk takes. Otherwise *done = 0 and the caller runs
 * the next choice. */
template <class F, bool WARP>
static ts_status conv_walk(const typename F::args &a, const tsk_op *op, ts_type type, const conv_version &v,
                           cudaStream_t s, int *done, ts_err *err)
{
    uint32_t border_px = 0;
    *done = 0;
    if (type != TS_U8 || a.io.c != 4 || a.io.alpha || a.io.dw < 1 || a.io.dh < 1 || !cw_border_px(a.io, &border_px))
        return TS_OK;
    return WARP ? F::warp(a, op, border_px, v, s, done, err) : F::walk(a, op, border_px, s, done, err);
}

/* Launch a tiled kernel with tile g over the destination region, raising
 * the shared-memory limit first when the tile needs more than 48 KB. */
template <class Args>
static ts_status conv_launch_tiled(void (*kernel)(Args, conv_tile), const Args &a, const conv_tile &g,
                                   cudaStream_t s, const char *what, ts_err *err)
{
    if (g.smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)g.smem);
        if (e != cudaSuccess) {
            char msg[96];
            snprintf(msg, sizeof msg, "%s: shared memory", what);
            return tsk_cuda_status(e, msg, err);
        }
    }
    const dim3 grid((unsigned)((a.io.dw + g.tw - 1) / g.tw), (unsigned)((a.io.dh + g.th - 1) / g.th));
    kernel<<<grid, CONV_THREADS, g.smem, s>>>(a, g);
    return TSK_LAUNCH_CHECK(what, err);
}

/* The launcher of F (its tsk_family.apply): the version picked as above
 * (an unknown one refused), the op's parameters, its border and the views
 * checked, the taps uploaded into the launch's bank, then the version run. */
template <class F>
static ts_status conv_apply(const tsk_op *op, const ts_view *src, ts_view *dst, const tsk_launch *l, ts_err *err)
{
    static_assert(F::versions[3].path == CONV_TILED, "v4 runs what the column walk does not take");
    cudaStream_t s = l ? (cudaStream_t)l->stream : 0;
    const int slot = l ? l->slot : 0;
    const typename F::args a = F::args_of(op, src, dst, slot);
    int version;
    ts_status st = conv_pick_version<F>(l, src, dst, &version, err);
    if (st != TS_OK) return st;
    st = F::check(op, err);
    if (st != TS_OK) return st;
    if (a.io.border < 0 || a.io.border > TS_BORDER_CONSTANT)
        return ts_err_set(err, TS_E_ARG, "%s: border %d", F::what, a.io.border);
    st = conv_check_views(op, src, dst, F::what, err);
    if (st != TS_OK) return st;
    st = F::upload(op, slot, s, err);
    if (st != TS_OK) return st;

    const conv_path path = F::versions[version - 1].path;
    /* an orientation after the convolution (tsk.h, u.sep.then): only the
     * version that writes it in the same pass takes it */
    if (op->kind == TSK_CONV_SEP && op->u.sep.then.code != 0) {
        int done = 0;
        if (path == CONV_WARP) st = conv_walk<F, true>(a, op, dst->type, F::versions[version - 1], s, &done, err);
        if (done) return st;
        return ts_err_set(err, TS_E_ARG, "%s: version %d does not write an orientation after it (%s)", F::what,
                          version, "the tensor-core version does, for RGBA8 gauss and box of up to 15 taps");
    }
    if (path == CONV_WARP) {
        int done = 0;
        st = conv_walk<F, true>(a, op, dst->type, F::versions[version - 1], s, &done, err);
        if (done) return st;
    }
    if (path == CONV_WARP || path == CONV_WALK) {
        int done = 0;
        st = conv_walk<F, false>(a, op, dst->type, F::versions[version - 1], s, &done, err);
        if (done) return st;
        version = 4;
    }
    return conv_run_type<F>(dst->type, a, version, s, err);
}

/* F's tsk_family. */
template <class F>
static constexpr tsk_family conv_family()
{
    return tsk_family{ F::what, conv_table<F>::names, F::count, F::default_version, conv_apply<F>,
                       conv_table<F>::fma };
}

#endif
