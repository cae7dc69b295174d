/* sample.cu - TSK_SAMPLE on the GPU: inverse-affine resampling (resize,
 * scale, rotate, affine), nearest and bilinear, with two paths; area and
 * bicubic (the shrinking filters) in their own section below, with the
 * mipmapped-texture versions v5 and v6.
 *
 *   TS_PATH_GLOBAL   plain global-memory loads; the maths of the reference
 *                    (tsk.h, ref_sample.c) done by hand, operation by
 *                    operation, so results match it exactly.
 *   TS_PATH_TEXTURE  a cudaTextureObject_t over the source region. Bilinear
 *                    uses hardware filtering and address modes; nearest
 *                    computes the reference's tap by hand and fetches that
 *                    texel (so it stays exact).
 *
 * Versions (llm.c style; every one takes either path):
 *   v1  one thread per output pixel, 256x1 blocks, plain loads
 *   v2  32x8 blocks (coalesced rows of stores), loads through __ldg
 *   v3  4 output pixels per thread, whole-pixel loads (uchar4 for RGBA8),
 *       an interior fast path without border maths, and int<->float
 *       conversions done on the FP32 pipe (ts_exact.h: the conversion pipe
 *       would bound the kernel)
 *   v4  v3 with 8 pixels per thread: a block spans 256 output pixels, so a
 *       downscale reads longer contiguous runs of each input row
 *   v5  area / bicubic on the texture path: a mipmapped texture read with
 *       trilinear filtering (nearest and bilinear run v3)
 *   v6  v5 with anisotropic filtering from the map's gradients
 *   v7  bilinear on the texture path: 4 adjacent output pixels per thread
 *       and 4 rows, one 16-byte store per row for RGBA8, and for
 *       axis-aligned maps the coordinates hoisted out of the pixel loop
 *       (the same values as v3's, so the same results); every other case
 *       runs v3
 *   v8  v7 for RGBA8 with the filtered texels returned as halves (half
 *       the bytes a fetch returns) and all of a thread's fetches issued
 *       before the first is used; other types and channel counts run v7
 *   v9  bilinear on the texture path in v3's shape (a warp's fetch is 32
 *       adjacent pixels of a row), 2 rows a thread with every fetch issued
 *       before the first is used: v3's results; every other case runs v3
 *   v10 v9 for RGBA8 with the texels returned as halves (v8's packing);
 *       other types and channel counts run v9. Neither is faster than v3:
 *       not the fetches in flight, nor the bytes a fetch returns, hold the
 *       2x-up texture kernels (docs/PERFORMANCE.md)
 * Area and bicubic run one exact kernel (sample_filter) for v1-v4 and
 * v7-v10, and for v5-v6 on the global path or wherever a mipmap does not
 * fit.
 *
 * v3 is the default: the fastest measured, or close to it, on every case
 * (v4 spills on the nearest texture path and halves occupancy on the
 * global one); figures: docs/measurements/kernels.md, and the times of
 * every version on both paths: docs/PERFORMANCE.md ("Resampling").
 *
 * Pixel-centre convention (tsk.h): output pixel (x, y) samples
 *   sx = inv[0]*(x+0.5) + inv[1]*(y+0.5) + inv[2]   (sy likewise)
 * nearest reads pixel floor(sx); bilinear sets px = sx - 0.5, x0 = floor(px),
 * fx = px - x0 and blends the 2x2 taps. Taps go through ts_border_map on the
 * whole image (-1 = border_value); the source view holds only the region
 * tsk_need gives, in global coordinates.
 *
 * Exactness of the global path: the reference is C11 float maths with no
 * contraction, so every product and sum here is rounded on its own
 * (__fmul_rn / __fadd_rn stop nvcc from fusing them into FMAs, which would
 * move a nearest tap at a pixel edge or flip a rounding at .5).
 *
 * Texture path: the hardware keeps 8 bits of fraction in the filter
 * weights (truncated, by the numbers below), so bilinear differs from the
 * reference by less than 2 * max / 256 (one 1/256 step per axis); the
 * test asserts 2, 512 and 0.008 on U8, U16 and F32 in 0..1 (what it
 * measured: docs/PERFORMANCE.md, "Resampling").
 * Where the hardware cannot express the border (reflect101; constant
 * outside 0..max; 3 channels, which have no texture format; a region whose
 * address or pitch the texture unit cannot take) the launch runs the global
 * kernel of the same version instead.
 */
#include "gpu_internal.h"
#include "ts_exact.h"

#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static const char *const sample_version_names[] = {
    "v1 one thread per pixel",
    "v2 32x8 blocks, __ldg",
    "v3 4 pixels per thread, packed loads",
    "v4 8 pixels per thread, packed loads",
    "v5 mipmapped texture, trilinear",
    "v6 mipmapped texture, anisotropic",
    "v7 texture bilinear, 4 adjacent px/thread, 16-byte stores, hoisted coordinates",
    "v8 v7 with RGBA8 fetched as halves, every fetch of a thread first",
    "v9 v3's warp-wide fetches, 2 rows a thread, every fetch first",
    "v10 v9 with RGBA8 fetched as halves",
};

/* Everything a kernel needs, passed by value. */
typedef struct sample_args {
    const unsigned char *src;   /* pixel (in_x0, in_y0) of the input */
    size_t src_pitch;
    unsigned char *dst;         /* pixel (out_x0, out_y0) of the output */
    size_t dst_pitch;
    float inv[6];
    int out_x0, out_y0, out_w, out_h;  /* the output region, global */
    int in_x0, in_y0, in_w, in_h;      /* the input region held, global */
    int full_w, full_h;                /* the whole input image */
    int interp;                        /* tsk_interp */
    int border;                        /* ts_border */
    float border_value;
} sample_args;

/* ------------------------------------------------------------- the maths */

template <int C> struct px { float v[C]; };

static __device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
static __device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
static __device__ __forceinline__ float sub_rn(float a, float b) { return __fsub_rn(a, b); }

/* The reference's source point for global output pixel (gx, gy), through
 * ts_coord_clamp (NaN and far-away points stay defined). */
static __device__ __forceinline__ void source_point(const sample_args &a, int gx, int gy,
                                                    float *sx, float *sy)
{
    float X = add_rn((float)gx, 0.5f), Y = add_rn((float)gy, 0.5f);
    *sx = ts_coord_clamp(add_rn(add_rn(mul_rn(a.inv[0], X), mul_rn(a.inv[1], Y)), a.inv[2]));
    *sy = ts_coord_clamp(add_rn(add_rn(mul_rn(a.inv[3], X), mul_rn(a.inv[4], Y)), a.inv[5]));
}

/* Local index of global tap i along one axis: the pixel the border mode
 * reads, or -1 for the constant border. The host checks that the region
 * holds tsk_need (every tap, with a pixel of slack); the clamp is a second
 * guard against reading outside the region's memory. */
static __device__ __forceinline__ int tap_local(int i, int n, int r0, int rn, int border)
{
    int m = ts_border_map(i, n, border);
    if (m < 0) return -1;
    m -= r0;
    return m < 0 ? 0 : (m >= rn ? rn - 1 : m);
}

/* The fast path's coordinates stay below FAST_LIMIT, inside the range of
 * ts_exact_centre and ts_exact_floor (ts_exact.h). */
#define FAST_LIMIT 2097152.0f       /* 2^21: the range the fast path takes */

/* The bilinear weights and blend of the reference, each step rounded. */
struct bl_weights { float w00, w10, w01, w11; };

static __device__ __forceinline__ bl_weights weights_of(float fx, float fy)
{
    float gx = sub_rn(1.0f, fx), gy = sub_rn(1.0f, fy);
    bl_weights w = { mul_rn(gx, gy), mul_rn(fx, gy), mul_rn(gx, fy), mul_rn(fx, fy) };
    return w;
}

template <int C>
static __device__ __forceinline__ px<C> blend(const bl_weights &w, const px<C> &p00, const px<C> &p10,
                                              const px<C> &p01, const px<C> &p11)
{
    px<C> r;
#pragma unroll
    for (int c = 0; c < C; c++)
        r.v[c] = add_rn(add_rn(add_rn(mul_rn(w.w00, p00.v[c]), mul_rn(w.w10, p10.v[c])),
                               mul_rn(w.w01, p01.v[c])), mul_rn(w.w11, p11.v[c]));
    return r;
}

template <int C>
static __device__ __forceinline__ px<C> border_px(float v)
{
    px<C> r;
#pragma unroll
    for (int c = 0; c < C; c++) r.v[c] = v;
    return r;
}

/* ------------------------------------------------------------ sources
 * A source gives texel(lx, ly) at local coordinates inside the region and
 * says whether bilinear is filtered by hardware (filtered()). */

enum { LOAD_PLAIN = 0, LOAD_LDG, LOAD_PIXEL };

/* The CUDA vector type that holds one pixel, where there is one. */
template <typename T, int C> struct pixel_vec { static const bool ok = false; typedef T type; };
template <> struct pixel_vec<uint8_t, 2> { static const bool ok = true; typedef unsigned short type; };
template <> struct pixel_vec<uint8_t, 4> { static const bool ok = true; typedef unsigned int type; };
template <> struct pixel_vec<uint16_t, 2> { static const bool ok = true; typedef unsigned int type; };
template <> struct pixel_vec<uint16_t, 4> { static const bool ok = true; typedef uint2 type; };
template <> struct pixel_vec<float, 2> { static const bool ok = true; typedef float2 type; };
template <> struct pixel_vec<float, 4> { static const bool ok = true; typedef float4 type; };

/* One pixel loaded whole and widened to float. */
template <typename T, int C>
static __device__ __forceinline__ px<C> load_pixel(const T *p)
{
    px<C> r;
    typedef typename pixel_vec<T, C>::type V;
    V v = __ldg((const V *)p);
    if constexpr (sizeof(T) == 1 && C == 4) {
#pragma unroll
        for (int c = 0; c < 4; c++) r.v[c] = ts_exact_byte_float(v, c);
    } else if constexpr (sizeof(T) == 1 && C == 2) {
        r.v[0] = ts_exact_byte_float(v, 0);
        r.v[1] = ts_exact_byte_float(v, 1);
    } else if constexpr (sizeof(T) == 2 && C == 2) {
        r.v[0] = ts_exact_half_float(v, 0);
        r.v[1] = ts_exact_half_float(v, 1);
    } else if constexpr (sizeof(T) == 2 && C == 4) {
        r.v[0] = ts_exact_half_float(v.x, 0); r.v[1] = ts_exact_half_float(v.x, 1);
        r.v[2] = ts_exact_half_float(v.y, 0); r.v[3] = ts_exact_half_float(v.y, 1);
    } else if constexpr (C == 2) {
        r.v[0] = v.x; r.v[1] = v.y;
    } else {
        r.v[0] = v.x; r.v[1] = v.y; r.v[2] = v.z; r.v[3] = v.w;
    }
    return r;
}

template <typename T, int C, int LOAD>
struct global_src {
    static const bool hw_filter = false;
    const unsigned char *base;
    size_t pitch;  /* below 2^32 for LOAD_PIXEL (v3_fits): one 32x32->64 multiply-add per row */

    __device__ __forceinline__ px<C> texel(int lx, int ly) const
    {
        const unsigned char *row = LOAD == LOAD_PIXEL ? base + (size_t)((unsigned)ly * (unsigned long long)(unsigned)pitch)
                                                      : base + (size_t)ly * pitch;
        const T *p = (const T *)row + (size_t)(unsigned)lx * C;
        if constexpr (LOAD == LOAD_PIXEL && pixel_vec<T, C>::ok) {
            return load_pixel<T, C>(p);
        } else {
            px<C> r;
#pragma unroll
            for (int c = 0; c < C; c++) {
                if constexpr (LOAD == LOAD_PIXEL && sizeof(T) == 1) r.v[c] = ts_exact_byte_float(__ldg(p + c), 0);
                else if constexpr (LOAD == LOAD_PIXEL && sizeof(T) == 2) r.v[c] = ts_exact_half_float(__ldg(p + c), 0);
                else if constexpr (LOAD == LOAD_PLAIN) r.v[c] = tsk_px<T>::load(p[c]);
                else r.v[c] = tsk_px<T>::load(__ldg(p + c));
            }
            return r;
        }
    }
    /* Nearest inside the region: the pixel's bits as stored (exact: the
     * reference's float round trip of a stored value gives it back). */
    __device__ __forceinline__ void copy_to(T *d, int lx, int ly) const
    {
        const T *p = (const T *)(base + (size_t)((unsigned)ly * (unsigned long long)(unsigned)pitch)) +
                     (size_t)(unsigned)lx * C;
        if constexpr (pixel_vec<T, C>::ok) {
            typedef typename pixel_vec<T, C>::type V;
            *(V *)d = __ldg((const V *)p);
        } else {
#pragma unroll
            for (int c = 0; c < C; c++) d[c] = __ldg(p + c);
        }
    }
    __device__ __forceinline__ px<C> filtered(float, float) const { return px<C>(); }
};

/* Texture element types: the stored type (point fetch, nearest) and the
 * filtered float type (bilinear, normalized to 0..1 for U8 and U16). */
template <typename T, int C> struct tex_types;
#define TEX_TYPES(T, C, ELEM, FLT) \
    template <> struct tex_types<T, C> { typedef ELEM elem; typedef FLT flt; };
TEX_TYPES(uint8_t, 1, unsigned char, float)
TEX_TYPES(uint8_t, 2, uchar2, float2)
TEX_TYPES(uint8_t, 4, uchar4, float4)
TEX_TYPES(uint16_t, 1, unsigned short, float)
TEX_TYPES(uint16_t, 2, ushort2, float2)
TEX_TYPES(uint16_t, 4, ushort4, float4)
TEX_TYPES(float, 1, float, float)
TEX_TYPES(float, 2, float2, float2)
TEX_TYPES(float, 4, float4, float4)
#undef TEX_TYPES

template <typename V> static __device__ __forceinline__ float comp(const V &v, int c)
{
    if constexpr (sizeof(V) == sizeof(v.x)) return (float)v.x;
    else if constexpr (sizeof(V) == 2 * sizeof(v.x)) return c == 0 ? (float)v.x : (float)v.y;
    else return c == 0 ? (float)v.x : c == 1 ? (float)v.y : c == 2 ? (float)v.z : (float)v.w;
}
static __device__ __forceinline__ float comp(float v, int) { return v; }
static __device__ __forceinline__ float comp(unsigned char v, int) { return (float)v; }
static __device__ __forceinline__ float comp(unsigned short v, int) { return (float)v; }

template <typename T, int C>
struct tex_src {
    static const bool hw_filter = true;
    cudaTextureObject_t tex;  /* point + element type (nearest) or linear + float (bilinear) */
    float norm_w, norm_h;     /* region size when coordinates are normalized, else 1 */

    /* Nearest: the texel the reference picked, by hand; (lx+0.5, ly+0.5)
     * is its centre, which point sampling reads without rounding doubt. */
    __device__ __forceinline__ px<C> texel(int lx, int ly) const
    {
        typename tex_types<T, C>::elem e = tex2D<typename tex_types<T, C>::elem>(
            tex, (float)lx + 0.5f, (float)ly + 0.5f);
        px<C> r;
#pragma unroll
        for (int c = 0; c < C; c++) r.v[c] = comp(e, c);
        return r;
    }
    __device__ __forceinline__ void copy_to(T *d, int lx, int ly) const
    {
        typedef typename tex_types<T, C>::elem E;
        *(E *)d = tex2D<E>(tex, (float)lx + 0.5f, (float)ly + 0.5f);
    }
    /* Bilinear at local continuous point (u, v): the texture unit takes its
     * taps at u - 0.5, the reference's convention. */
    __device__ __forceinline__ px<C> filtered(float u, float v) const
    {
        if (norm_w != 1.0f || norm_h != 1.0f) { u = __fdiv_rn(u, norm_w); v = __fdiv_rn(v, norm_h); }
        typename tex_types<T, C>::flt f = tex2D<typename tex_types<T, C>::flt>(tex, u, v);
        px<C> r;
#pragma unroll
        for (int c = 0; c < C; c++) r.v[c] = mul_rn(comp(f, c), tsk_px<T>::maxv());  /* F32: x 1 */
        return r;
    }
};

/* ------------------------------------------------------------ sampling */

template <int C, class S>
static __device__ __forceinline__ px<C> fetch_or_border(const S &s, int lx, int ly, float bv)
{
    if (lx < 0 || ly < 0) return border_px<C>(bv);
    return s.texel(lx, ly);
}

/* The reference, tap by tap, for any source point (the general path). */
template <int C, class S>
static __device__ px<C> sample_general(const sample_args &a, const S &s, float sx, float sy)
{
    if (a.interp == TSK_NEAREST) {
        int lx = tap_local((int)floorf(sx), a.full_w, a.in_x0, a.in_w, a.border);
        int ly = tap_local((int)floorf(sy), a.full_h, a.in_y0, a.in_h, a.border);
        return fetch_or_border<C>(s, lx, ly, a.border_value);
    }
    if constexpr (S::hw_filter) {
        return s.filtered(sub_rn(sx, (float)a.in_x0), sub_rn(sy, (float)a.in_y0));
    } else {
        float px_ = sub_rn(sx, 0.5f), py_ = sub_rn(sy, 0.5f);
        float flx = floorf(px_), fly = floorf(py_);
        int ix = (int)flx, iy = (int)fly;
        bl_weights w = weights_of(sub_rn(px_, flx), sub_rn(py_, fly));
        int x0 = tap_local(ix, a.full_w, a.in_x0, a.in_w, a.border);
        int x1 = tap_local(ix + 1, a.full_w, a.in_x0, a.in_w, a.border);
        int y0 = tap_local(iy, a.full_h, a.in_y0, a.in_h, a.border);
        int y1 = tap_local(iy + 1, a.full_h, a.in_y0, a.in_h, a.border);
        float bv = a.border_value;
        return blend<C>(w, fetch_or_border<C>(s, x0, y0, bv), fetch_or_border<C>(s, x1, y0, bv),
                        fetch_or_border<C>(s, x0, y1, bv), fetch_or_border<C>(s, x1, y1, bv));
    }
}

/* ------------------------------------------------------------ stores */

template <typename T, int C>
static __device__ __forceinline__ void store_plain(unsigned char *row, int x, const px<C> &v)
{
    T *d = (T *)row + (size_t)x * C;
#pragma unroll
    for (int c = 0; c < C; c++) d[c] = tsk_px<T>::store(v.v[c]);
}

/* v3: one store per pixel where a vector type holds it, rounding without
 * conversion instructions (ts_exact_round_sat_bits, ts_exact_round_bits:
 * the low bits). CLAMP = false where the value is known to lie in 0..max
 * already (a blend of pixels with weights >= 0 that sum to 1 within a few
 * ulps, or a texture read): then (int)(v + 0.5f) cannot leave 0..max and
 * the clamp changes nothing. */
template <typename T, int C, bool CLAMP = true>
static __device__ __forceinline__ void store_packed(unsigned char *row, int x, const px<C> &v)
{
    T *d = (T *)row + (size_t)x * C;
    if constexpr (sizeof(T) == 4) {
        if constexpr (C == 4) *(float4 *)d = make_float4(v.v[0], v.v[1], v.v[2], v.v[3]);
        else if constexpr (C == 2) *(float2 *)d = make_float2(v.v[0], v.v[1]);
        else {
#pragma unroll
            for (int c = 0; c < C; c++) d[c] = v.v[c];
        }
    } else {
        const float maxv = sizeof(T) == 1 ? 255.0f : 65535.0f;
        unsigned b[C];
#pragma unroll
        for (int c = 0; c < C; c++) b[c] = CLAMP ? ts_exact_round_sat_bits(v.v[c], maxv) : ts_exact_round_bits(v.v[c]);
        if constexpr (sizeof(T) == 1 && C == 4)
            *(unsigned *)d = __byte_perm(__byte_perm(b[0], b[1], 0x0040), __byte_perm(b[2], b[3], 0x0040), 0x5410);
        else if constexpr (sizeof(T) == 1 && C == 2)
            *(unsigned short *)d = (unsigned short)__byte_perm(b[0], b[1], 0x0040);
        else if constexpr (sizeof(T) == 2 && C == 4)
            *(uint2 *)d = make_uint2(__byte_perm(b[0], b[1], 0x5410), __byte_perm(b[2], b[3], 0x5410));
        else if constexpr (sizeof(T) == 2 && C == 2)
            *(unsigned *)d = __byte_perm(b[0], b[1], 0x5410);
        else {
#pragma unroll
            for (int c = 0; c < C; c++) d[c] = (T)b[c];
        }
    }
}

/* ------------------------------------------------------------ v1, v2 */

/* v1: the textbook kernel. One thread per output pixel in 256x1 blocks;
 * rows by blockIdx.y (striding past the 65535 grid limit). */
template <typename T, int C, class S>
__global__ void __launch_bounds__(256) sample_v1(sample_args a, S s)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= a.out_w) return;
    for (int y = blockIdx.y; y < a.out_h; y += gridDim.y) {
        float sx, sy;
        source_point(a, a.out_x0 + x, a.out_y0 + y, &sx, &sy);
        px<C> v = sample_general<C>(a, s, sx, sy);
        store_plain<T, C>(a.dst + (size_t)y * a.dst_pitch, x, v);
    }
}

/* v2: 32x8 blocks: a warp stores 32 neighbouring pixels of one row, and the
 * 8 rows of a block share their input rows in L1. */
template <typename T, int C, class S>
__global__ void __launch_bounds__(256) sample_v2(sample_args a, S s)
{
    int x = blockIdx.x * 32 + threadIdx.x;
    if (x >= a.out_w) return;
    for (int y = blockIdx.y * 8 + threadIdx.y; y < a.out_h; y += gridDim.y * 8) {
        float sx, sy;
        source_point(a, a.out_x0 + x, a.out_y0 + y, &sx, &sy);
        px<C> v = sample_general<C>(a, s, sx, sy);
        store_plain<T, C>(a.dst + (size_t)y * a.dst_pitch, x, v);
    }
}

/* ------------------------------------------------------------ v3, v4 */

/* PX output pixels per thread (v3: 4, v4: 8), 32 apart: each store stays
 * coalesced. v3 and v4 take images and outputs below FAST_LIMIT (v3_fits),
 * so ts_exact_centre and ts_exact_floor are exact wherever the fast path
 * uses them. Per row it forms
 * inv[1]*Y and inv[4]*Y once: the same rounded products the reference
 * forms per pixel. The fast path runs when every tap of the thread's
 * pixels lies inside the region (so inside the image: no border maths);
 * its test is on the unclamped point, which ts_coord_clamp leaves alone
 * there, and fails for NaN. Nearest there copies the pixel's bits. Other
 * threads take the general path, through ts_coord_clamp like the
 * reference. */
template <typename T, int C, int INTERP, int PX, class S>
__global__ void __launch_bounds__(256) sample_v3(sample_args a, S s)
{
    const int x_first = blockIdx.x * (32 * PX) + threadIdx.x;
    /* Bounds of the fast path: bilinear needs px and px + 1 inside. */
    const float lo_x = (float)a.in_x0, lo_y = (float)a.in_y0;
    const float hi_x = (float)(a.in_x0 + a.in_w - (INTERP == TSK_BILINEAR ? 1 : 0));
    const float hi_y = (float)(a.in_y0 + a.in_h - (INTERP == TSK_BILINEAR ? 1 : 0));
    for (int y = blockIdx.y * 8 + threadIdx.y; y < a.out_h; y += gridDim.y * 8) {
        float Y = add_rn((float)(a.out_y0 + y), 0.5f);
        float ty = mul_rn(a.inv[1], Y), ty2 = mul_rn(a.inv[4], Y);
        unsigned char *drow = a.dst + (size_t)y * a.dst_pitch;
        float sx[PX], sy[PX];
#pragma unroll
        for (int k = 0; k < PX; k++) {
            float X = ts_exact_centre(a.out_x0 + x_first + 32 * k);
            sx[k] = add_rn(add_rn(mul_rn(a.inv[0], X), ty), a.inv[2]);
            sy[k] = add_rn(add_rn(mul_rn(a.inv[3], X), ty2), a.inv[5]);
        }
        px<C> out[PX];
        bool fast = x_first + 32 * (PX - 1) < a.out_w;

        if constexpr (INTERP == TSK_BILINEAR && S::hw_filter) {
            /* The texture unit maps borders and filters: nothing to decide,
             * and its results lie in 0..max (border colours too). */
#pragma unroll
            for (int k = 0; k < PX; k++)
                out[k] = s.filtered(sub_rn(ts_coord_clamp(sx[k]), lo_x), sub_rn(ts_coord_clamp(sy[k]), lo_y));
            if (fast) {
#pragma unroll
                for (int k = 0; k < PX; k++) store_packed<T, C, false>(drow, x_first + 32 * k, out[k]);
                continue;
            }
        } else if constexpr (INTERP == TSK_BILINEAR) {
            int lx[PX], ly[PX];
            bl_weights w[PX];
#pragma unroll
            for (int k = 0; k < PX; k++) {
                float p = sub_rn(sx[k], 0.5f), q = sub_rn(sy[k], 0.5f), flx, fly;
                fast = fast && p >= lo_x && p < hi_x && q >= lo_y && q < hi_y;
                lx[k] = ts_exact_floor(p, &flx) - a.in_x0;
                ly[k] = ts_exact_floor(q, &fly) - a.in_y0;
                w[k] = weights_of(sub_rn(p, flx), sub_rn(q, fly));
            }
            if (fast) {
#pragma unroll
                for (int k = 0; k < PX; k++) {
                    out[k] = blend<C>(w[k], s.texel(lx[k], ly[k]), s.texel(lx[k] + 1, ly[k]),
                                      s.texel(lx[k], ly[k] + 1), s.texel(lx[k] + 1, ly[k] + 1));
                    store_packed<T, C, false>(drow, x_first + 32 * k, out[k]);
                }
                continue;
            }
#pragma unroll
            for (int k = 0; k < PX; k++)
                if (x_first + 32 * k < a.out_w)
                    out[k] = sample_general<C>(a, s, ts_coord_clamp(sx[k]), ts_coord_clamp(sy[k]));
        } else {
            int lx[PX], ly[PX];
#pragma unroll
            for (int k = 0; k < PX; k++) {
                float fl;
                fast = fast && sx[k] >= lo_x && sx[k] < hi_x && sy[k] >= lo_y && sy[k] < hi_y;
                lx[k] = ts_exact_floor(sx[k], &fl) - a.in_x0;
                ly[k] = ts_exact_floor(sy[k], &fl) - a.in_y0;
            }
            if (fast) {
#pragma unroll
                for (int k = 0; k < PX; k++) s.copy_to((T *)drow + (size_t)(x_first + 32 * k) * C, lx[k], ly[k]);
                continue;
            }
#pragma unroll
            for (int k = 0; k < PX; k++)
                if (x_first + 32 * k < a.out_w)
                    out[k] = sample_general<C>(a, s, ts_coord_clamp(sx[k]), ts_coord_clamp(sy[k]));
        }
#pragma unroll
        for (int k = 0; k < PX; k++)
            if (x_first + 32 * k < a.out_w) store_packed<T, C>(drow, x_first + 32 * k, out[k]);
    }
}

/* ------------------------------------------------------------ v7, v8
 * Bilinear on the texture path, 4 consecutive output pixels per thread and
 * RPT rows of them (8 apart): the rounding and packing of v3, but the
 * 4 pixels leave in one 16-byte store for RGBA8 (a warp writes 512
 * contiguous bytes), and where the map is axis-aligned (inv[1] = inv[3] =
 * 0: resize and scale) the texture coordinates are the same float
 * operations as v3's with the terms that are zero dropped: u of each
 * column once per thread, v once per row, so a pixel costs the fetch and
 * its rounding. Coordinates differ from v3's at most in the sign of a
 * zero, which names the same point: the results are v3's. Other maps
 * compute each pixel's point as v3 does. */

/* A thread's 4 columns: their centres X and, for axis-aligned maps, u. */
struct v7_cols {
    float X[4], u[4];
};

template <typename T, int C>
static __device__ __forceinline__ v7_cols v7_columns(const sample_args &a, const tex_src<T, C> &s, int x_first)
{
    v7_cols c;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        c.X[k] = ts_exact_centre(a.out_x0 + x_first + k);
        c.u[k] = sub_rn(ts_coord_clamp(add_rn(add_rn(mul_rn(a.inv[0], c.X[k]), 0.0f), a.inv[2])), (float)a.in_x0);
        if (s.norm_w != 1.0f) c.u[k] = __fdiv_rn(c.u[k], s.norm_w);
    }
    return c;
}

/* The texture point (uu, vv) of column k in output row y: v3's float
 * operations, with those a zero term makes idle dropped when axis. */
template <typename T, int C>
static __device__ __forceinline__ void v7_point(const sample_args &a, const tex_src<T, C> &s, const v7_cols &c,
                                                int k, int y, bool axis, float *uu, float *vv)
{
    const float lo_x = (float)a.in_x0, lo_y = (float)a.in_y0;
    const bool norm = s.norm_w != 1.0f || s.norm_h != 1.0f;
    const float Y = add_rn((float)(a.out_y0 + y), 0.5f);
    const float ty = mul_rn(a.inv[1], Y), ty2 = mul_rn(a.inv[4], Y);
    if (axis) {
        *uu = c.u[k];
        *vv = sub_rn(ts_coord_clamp(add_rn(add_rn(0.0f, ty2), a.inv[5])), lo_y);
        if (norm) *vv = __fdiv_rn(*vv, s.norm_h);
        return;
    }
    *uu = sub_rn(ts_coord_clamp(add_rn(add_rn(mul_rn(a.inv[0], c.X[k]), ty), a.inv[2])), lo_x);
    *vv = sub_rn(ts_coord_clamp(add_rn(add_rn(mul_rn(a.inv[3], c.X[k]), ty2), a.inv[5])), lo_y);
    if (norm) { *uu = __fdiv_rn(*uu, s.norm_w); *vv = __fdiv_rn(*vv, s.norm_h); }
}

/* Whether a thread's 4 RGBA8 pixels leave in one 16-byte store. */
template <typename T, int C>
static __device__ __forceinline__ bool v7_vector(const sample_args &a, int x_first)
{
    return sizeof(T) == 1 && C == 4 && x_first + 4 <= a.out_w && ((uintptr_t)a.dst % 16 == 0) && a.dst_pitch % 16 == 0;
}

template <typename T, int C, int RPT>
__global__ void __launch_bounds__(256) sample_v7(sample_args a, tex_src<T, C> s)
{
    typedef typename tex_types<T, C>::flt F;
    const int x_first = blockIdx.x * 128 + 4 * threadIdx.x;
    if (x_first >= a.out_w) return;
    const bool axis = a.inv[1] == 0.0f && a.inv[3] == 0.0f;
    const v7_cols cols = v7_columns(a, s, x_first);
    const bool vec = v7_vector<T, C>(a, x_first);
    for (int i = 0; i < RPT; i++) {
        const int y = (blockIdx.y * RPT + i) * 8 + threadIdx.y;
        if (y >= a.out_h) break;
        px<C> out[4];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            float uu, vv;
            v7_point(a, s, cols, k, y, axis, &uu, &vv);
            const F f = tex2D<F>(s.tex, uu, vv);
#pragma unroll
            for (int c = 0; c < C; c++) out[k].v[c] = mul_rn(comp(f, c), tsk_px<T>::maxv());
        }
        unsigned char *drow = a.dst + (size_t)y * a.dst_pitch;
        if constexpr (sizeof(T) == 1 && C == 4) {
            if (vec) {
                unsigned w[4];
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    unsigned b[4];
#pragma unroll
                    for (int c = 0; c < 4; c++) b[c] = ts_exact_round_bits(out[k].v[c]);
                    w[k] = __byte_perm(__byte_perm(b[0], b[1], 0x0040), __byte_perm(b[2], b[3], 0x0040), 0x5410);
                }
                *(uint4 *)(drow + (size_t)x_first * 4) = make_uint4(w[0], w[1], w[2], w[3]);
                continue;
            }
        }
#pragma unroll
        for (int k = 0; k < 4; k++)
            if (x_first + k < a.out_w) store_packed<T, C, false>(drow, x_first + k, out[k]);
    }
}

/* v8: v7 for RGBA8 with the filtered texel returned as four halves
 * (tex.2d.v2.f16x2: 8 bytes a fetch where float4 takes 16) and every
 * fetch of the thread's RPT rows issued before the first is used. A
 * channel h in 0..1 becomes its byte in one half FMA per two channels:
 * h * 255 + 1536 rounds, in a half (spacing 1 from 1024 to 2048), to
 * 1536 + the nearest integer (ties to even), whose low byte is that
 * integer; one byte permute packs the pixel. The half return rounds the
 * filter's result to 11 significant bits (under 1/16 of a level for
 * U8), so v8's bytes are not v7's: both stay within the texture path's
 * bound of the reference (tests/test_gpu_sample.c). */
static __device__ __forceinline__ uint2 tex_fetch_half4(cudaTextureObject_t tex, float u, float v)
{
    uint2 r;
    asm("tex.2d.v2.f16x2.f32 {%0, %1}, [%2, {%3, %4}];" : "=r"(r.x), "=r"(r.y) : "l"(tex), "f"(u), "f"(v));
    return r;
}

static __device__ __forceinline__ uint32_t half4_pixel(uint2 h)
{
    const __half2 scale = __float2half2_rn(255.0f), magic = __float2half2_rn(1536.0f);
    const __half2 rg = __hfma2(*(const __half2 *)&h.x, scale, magic);
    const __half2 ba = __hfma2(*(const __half2 *)&h.y, scale, magic);
    return __byte_perm(*(const uint32_t *)&rg, *(const uint32_t *)&ba, 0x6420);
}

template <int RPT>
__global__ void __launch_bounds__(256) sample_v8(sample_args a, tex_src<uint8_t, 4> s)
{
    const int x_first = blockIdx.x * 128 + 4 * threadIdx.x;
    if (x_first >= a.out_w) return;
    const bool axis = a.inv[1] == 0.0f && a.inv[3] == 0.0f;
    const v7_cols cols = v7_columns(a, s, x_first);
    uint2 h[RPT][4];
#pragma unroll
    for (int i = 0; i < RPT; i++) {
        const int y = (blockIdx.y * RPT + i) * 8 + threadIdx.y;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            float uu, vv;
            v7_point(a, s, cols, k, y < a.out_h ? y : a.out_h - 1, axis, &uu, &vv);
            h[i][k] = tex_fetch_half4(s.tex, uu, vv);
        }
    }
    const bool vec = v7_vector<uint8_t, 4>(a, x_first);
#pragma unroll
    for (int i = 0; i < RPT; i++) {
        const int y = (blockIdx.y * RPT + i) * 8 + threadIdx.y;
        if (y >= a.out_h) break;
        uint32_t *drow = (uint32_t *)(a.dst + (size_t)y * a.dst_pitch) + x_first;
        uint32_t w[4];
#pragma unroll
        for (int k = 0; k < 4; k++) w[k] = half4_pixel(h[i][k]);
        if (vec) {
            *(uint4 *)drow = make_uint4(w[0], w[1], w[2], w[3]);
        } else {
#pragma unroll
            for (int k = 0; k < 4; k++)
                if (x_first + k < a.out_w) drow[k] = w[k];
        }
    }
}

/* v9, v10: bilinear on the texture path in v3's shape (a warp's fetch is
 * 32 adjacent output pixels of one row, whose taps lie in two input rows
 * of about 17 texels: the fewest cache sectors a fetch), each thread taking
 * 4 pixels (32 apart) of RPT rows (8 apart) with every fetch issued before
 * the first result is used, so a thread keeps RPT x 4 fetches in flight
 * where v3 keeps 4. Each point and its rounding are v3's float operations,
 * so v9's bytes are v3's. HALF (v10, RGBA8 only): the results come back as
 * four halves and are packed as v8 packs them: other bytes than v3's,
 * within the texture path's bound. */
template <typename T, int C, int RPT, bool HALF>
__global__ void __launch_bounds__(256) sample_v9(sample_args a, tex_src<T, C> s)
{
    typedef typename tex_types<T, C>::flt F;
    static_assert(!HALF || (sizeof(T) == 1 && C == 4), "halves are RGBA8's");
    const int x_first = blockIdx.x * 128 + threadIdx.x;
    const float lo_x = (float)a.in_x0, lo_y = (float)a.in_y0;
    const bool norm = s.norm_w != 1.0f || s.norm_h != 1.0f;
    float X[4];
#pragma unroll
    for (int k = 0; k < 4; k++) X[k] = ts_exact_centre(a.out_x0 + x_first + 32 * k);
    F f[HALF ? 1 : RPT][4];
    uint2 hf[HALF ? RPT : 1][4];
#pragma unroll
    for (int i = 0; i < RPT; i++) {
        const int y = min((blockIdx.y * RPT + i) * 8 + threadIdx.y, a.out_h - 1);
        const float Y = add_rn((float)(a.out_y0 + y), 0.5f);
        const float ty = mul_rn(a.inv[1], Y), ty2 = mul_rn(a.inv[4], Y);
#pragma unroll
        for (int k = 0; k < 4; k++) {
            float u = sub_rn(ts_coord_clamp(add_rn(add_rn(mul_rn(a.inv[0], X[k]), ty), a.inv[2])), lo_x);
            float v = sub_rn(ts_coord_clamp(add_rn(add_rn(mul_rn(a.inv[3], X[k]), ty2), a.inv[5])), lo_y);
            if (norm) { u = __fdiv_rn(u, s.norm_w); v = __fdiv_rn(v, s.norm_h); }
            if constexpr (HALF) hf[i][k] = tex_fetch_half4(s.tex, u, v);
            else f[i][k] = tex2D<F>(s.tex, u, v);
        }
    }
#pragma unroll
    for (int i = 0; i < RPT; i++) {
        const int y = (blockIdx.y * RPT + i) * 8 + threadIdx.y;
        if (y >= a.out_h) break;
        unsigned char *drow = a.dst + (size_t)y * a.dst_pitch;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            if (x_first + 32 * k >= a.out_w) continue;
            if constexpr (HALF) {
                *(uint32_t *)(drow + (size_t)(x_first + 32 * k) * 4) = half4_pixel(hf[i][k]);
            } else {
                px<C> out;
#pragma unroll
                for (int c = 0; c < C; c++) out.v[c] = mul_rn(comp(f[i][k], c), tsk_px<T>::maxv());
                store_packed<T, C, false>(drow, x_first + 32 * k, out);
            }
        }
    }
}

/* ------------------------------------------------------------ filtered
 * AREA and BICUBIC (tsk.h): per axis n taps from floor(p - r) + 1, each
 * weighed by the filter at its distance from p, rows summed first, then
 * one division by the product of the weight sums. One thread per output
 * pixel in 32x8 blocks; weights are recomputed per tap rather than kept
 * (up to 256 per axis), the same float operations as the reference in the
 * same order, so the result is the reference's bit for bit. Versions 1-4
 * of the family run this kernel for these interpolations; both paths take
 * it, the texture path fetching each tap as a point sample (exact). */

typedef struct filter_args {
    float kx, ky;  /* footprints (tsk_sample_footprint) */
    float rx, ry;  /* half-widths (tsk_sample_radius) */
    int nx, ny;    /* taps per axis (tsk_sample_taps) */
} filter_args;

static __device__ __forceinline__ float area_weight_dev(float d, float h)
{
    return fmaxf(0.0f, sub_rn(fminf(add_rn(d, 0.5f), h), fmaxf(sub_rn(d, 0.5f), -h)));
}

static __device__ __forceinline__ float cubic_weight_dev(float t)
{
    if (t < 1.0f) return add_rn(mul_rn(mul_rn(sub_rn(mul_rn(1.5f, t), 2.5f), t), t), 1.0f);
    if (t < 2.0f) return add_rn(mul_rn(sub_rn(mul_rn(add_rn(mul_rn(-0.5f, t), 2.5f), t), 4.0f), t), 2.0f);
    return 0.0f;
}

/* The weight of tap i for sample coordinate p = s - 0.5, footprint k. */
template <int INTERP>
static __device__ __forceinline__ float filter_weight(int i, float p, float k)
{
    float d = sub_rn((float)i, p);
    if (INTERP == TSK_AREA) return area_weight_dev(d, mul_rn(0.5f, k));
    return cubic_weight_dev(__fdiv_rn(fabsf(d), k));
}

template <typename T, int C, int INTERP, class S>
__global__ void __launch_bounds__(256) sample_filter(sample_args a, filter_args f, S s)
{
    int x = blockIdx.x * 32 + threadIdx.x;
    if (x >= a.out_w) return;
    for (int y = blockIdx.y * 8 + threadIdx.y; y < a.out_h; y += gridDim.y * 8) {
        float sx, sy;
        source_point(a, a.out_x0 + x, a.out_y0 + y, &sx, &sy);
        float p = sub_rn(sx, 0.5f), q = sub_rn(sy, 0.5f);
        int ix0 = (int)floorf(sub_rn(p, f.rx)) + 1, iy0 = (int)floorf(sub_rn(q, f.ry)) + 1;
        float wx_sum = 0.0f, wy_sum = 0.0f;
        for (int i = 0; i < f.nx; i++) wx_sum = add_rn(wx_sum, filter_weight<INTERP>(ix0 + i, p, f.kx));
        for (int j = 0; j < f.ny; j++) wy_sum = add_rn(wy_sum, filter_weight<INTERP>(iy0 + j, q, f.ky));
        px<C> acc = border_px<C>(0.0f);
        for (int j = 0; j < f.ny; j++) {
            int ly = tap_local(iy0 + j, a.full_h, a.in_y0, a.in_h, a.border);
            px<C> row = border_px<C>(0.0f);
            for (int i = 0; i < f.nx; i++) {
                float w = filter_weight<INTERP>(ix0 + i, p, f.kx);
                int lx = tap_local(ix0 + i, a.full_w, a.in_x0, a.in_w, a.border);
                px<C> v = fetch_or_border<C>(s, lx, ly, a.border_value);
#pragma unroll
                for (int c = 0; c < C; c++) row.v[c] = add_rn(row.v[c], mul_rn(w, v.v[c]));
            }
            float wy = filter_weight<INTERP>(iy0 + j, q, f.ky);
#pragma unroll
            for (int c = 0; c < C; c++) acc.v[c] = add_rn(acc.v[c], mul_rn(wy, row.v[c]));
        }
        float norm = mul_rn(wx_sum, wy_sum);
#pragma unroll
        for (int c = 0; c < C; c++) acc.v[c] = norm > 0.0f ? __fdiv_rn(acc.v[c], norm) : 0.0f;
        store_plain<T, C>(a.dst + (size_t)y * a.dst_pitch, x, acc);
    }
}

/* ------------------------------------------------------------ textures
 * Texture objects must outlive the kernels that read them: the runtime
 * documents use of a handle after cudaDestroyTextureObject as undefined,
 * and a queued kernel still uses it. So each slot (one per stream) keeps a
 * ring of the objects it made, each with an event recorded after its
 * kernel; an entry is destroyed only when the ring comes round to it, after
 * its event (complete by then in practice, so the wait costs nothing). A
 * slot belongs to one stream and one host thread at a time (tsk.h), which
 * is what makes this state safe without a lock. */
enum { TEX_RING = 8 };
typedef struct tex_ring {
    cudaTextureObject_t tex[TEX_RING];
    cudaEvent_t done[TEX_RING];
    unsigned char live[TEX_RING];
    int next;
} tex_ring;
static tex_ring tex_rings[TSK_SLOTS];

/* Free the ring entry the next texture will use. */
static ts_status ring_free_next(tex_ring *r, ts_err *err)
{
    int i = r->next;
    if (r->live[i]) {
        ts_status st = tsk_cuda_status(cudaEventSynchronize(r->done[i]), "sample: texture wait", err);
        cudaDestroyTextureObject(r->tex[i]);
        r->live[i] = 0;
        if (st != TS_OK) return st;
    }
    if (!r->done[i])
        return tsk_cuda_status(cudaEventCreateWithFlags(&r->done[i], cudaEventDisableTiming),
                               "sample: texture event", err);
    return TS_OK;
}

/* Hand tex to the ring after its kernel was queued on stream. */
static ts_status ring_keep(tex_ring *r, cudaTextureObject_t tex, cudaStream_t stream, ts_err *err)
{
    int i = r->next;
    cudaError_t e = cudaEventRecord(r->done[i], stream);
    if (e != cudaSuccess) {
        /* No event to wait on: wait for the stream itself before destroying. */
        cudaStreamSynchronize(stream);
        cudaDestroyTextureObject(tex);
        return tsk_cuda_status(e, "sample: texture event", err);
    }
    r->tex[i] = tex;
    r->live[i] = 1;
    r->next = (i + 1) % TEX_RING;
    return TS_OK;
}

typedef struct tex_plan {
    int use;                       /* 0: the texture path cannot take this launch */
    int linear;                    /* bilinear: hardware filtering */
    int normalized;                /* wrap and mirror need normalized coordinates */
    cudaTextureAddressMode mode;
    float border_color;            /* in the units the texture returns */
} tex_plan;

/* Whether the texture unit can take this source and border, and how. */
static tex_plan plan_texture(const tsk_op *op, const ts_view *src)
{
    tex_plan p = { 0, 0, 0, cudaAddressModeClamp, 0.0f };
    int dev = 0, align = 0, pitch_align = 0, max_w = 0, max_h = 0, max_pitch = 0;
    if (src->c == 3) return p;  /* no 3-channel texture formats: the engine expands RGB to RGBX */
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&align, cudaDevAttrTextureAlignment, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&pitch_align, cudaDevAttrTexturePitchAlignment, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&max_w, cudaDevAttrMaxTexture2DLinearWidth, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&max_h, cudaDevAttrMaxTexture2DLinearHeight, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxTexture2DLinearPitch, dev) != cudaSuccess) {
        cudaGetLastError();
        return p;
    }
    /* A region cut out of a larger buffer is rarely aligned for the texture
     * unit; such launches take the global path rather than copy. */
    if ((uintptr_t)src->data % (uintptr_t)align || src->pitch % (size_t)pitch_align ||
        src->w > max_w || src->h > max_h || src->pitch > (size_t)max_pitch)
        return p;
    if (op->u.sample.interp != TSK_BILINEAR) {
        p.use = 1;  /* nearest, area, bicubic: taps mapped by hand, point fetches, any border */
        return p;
    }
    float maxv = (float)ts_type_max(src->type), v = op->u.sample.border_value;
    p.linear = 1;
    switch (op->u.sample.border) {
    case TS_BORDER_REPLICATE: p.mode = cudaAddressModeClamp; break;
    case TS_BORDER_REFLECT: /* ba|abcd|dc */
    case TS_BORDER_WRAP:
        /* The hardware repeats the texture's own extent, the region: right
         * only when the region is the whole image. A region that is not may
         * still hold a tap that wraps across the image's edge (tsk_need
         * gives the mapped bounding box), which the hardware would wrap
         * across the region's edge instead: those take the global path. */
        if (src->x0 != 0 || src->y0 != 0 || src->w != src->full_w || src->h != src->full_h) return p;
        p.mode = op->u.sample.border == TS_BORDER_WRAP ? cudaAddressModeWrap : cudaAddressModeMirror;
        p.normalized = 1;
        break;
    case TS_BORDER_CONSTANT:
        /* borderColor is returned as the texture's value: normalized for
         * integer types; values outside the type's range are not. */
        if (!(v >= 0.0f && v <= maxv)) return p;
        p.mode = cudaAddressModeBorder;
        p.border_color = src->type == TS_F32 ? v : v / maxv;
        break;
    default:
        return p;  /* reflect101 (cb|abcd|cb) has no hardware mode */
    }
    p.use = 1;
    return p;
}

/* Wrap and mirror repeat the texture's own extent, the region, which
 * plan_texture allows only when the region is the whole image. */
static ts_status make_texture(const ts_view *src, const tex_plan *tp, cudaTextureObject_t *tex, ts_err *err)
{
    int bits = 8 * (int)src->type;
    cudaChannelFormatKind kind = src->type == TS_F32 ? cudaChannelFormatKindFloat : cudaChannelFormatKindUnsigned;
    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = src->data;
    res.res.pitch2D.desc = cudaCreateChannelDesc(bits, src->c > 1 ? bits : 0, src->c > 2 ? bits : 0,
                                                 src->c > 3 ? bits : 0, kind);
    res.res.pitch2D.width = (size_t)src->w;
    res.res.pitch2D.height = (size_t)src->h;
    res.res.pitch2D.pitchInBytes = src->pitch;

    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = tp->mode;
    td.filterMode = tp->linear ? cudaFilterModeLinear : cudaFilterModePoint;
    td.readMode = tp->linear && src->type != TS_F32 ? cudaReadModeNormalizedFloat : cudaReadModeElementType;
    td.normalizedCoords = tp->normalized;
    for (int i = 0; i < 4; i++) td.borderColor[i] = tp->border_color;
    return tsk_cuda_status(cudaCreateTextureObject(tex, &res, &td, NULL), "sample: create texture", err);
}

/* ------------------------------------------------------------ mipmaps (v5, v6)
 * What the texture hardware offers for shrinking: a mipmapped texture (a
 * pyramid of 2x2 box averages, built here per launch) read with trilinear
 * filtering at the level of detail log2(max(kx, ky)) (v5), or with
 * anisotropic filtering (up to 16 taps along the footprint's long axis,
 * the hardware's choice) from the map's gradients (v6). A different filter
 * from AREA and BICUBIC, not an approximation of them: how far it lands
 * from the reference, and from the double-precision ideal, is measured by
 * tests/test_gpu_sample.c. It takes whole images only (a pyramid built
 * from a region would not line up with the whole image's), 1, 2 or 4
 * channels and the borders with an address mode (not reflect101); other
 * launches run the exact kernel above. Costs a cudaMallocMipmappedArray
 * and a pyramid build per launch, both inside what a launch times. */

enum { MIP_MAX_LEVELS = 8, MIP_RING = 4 };

typedef struct mip_entry {
    cudaMipmappedArray_t arr;
    cudaTextureObject_t tex;
    cudaSurfaceObject_t surf[MIP_MAX_LEVELS];
    int n_surf;
    cudaEvent_t done;
    int live;
} mip_entry;
typedef struct mip_ring { mip_entry e[MIP_RING]; int next; } mip_ring;
static mip_ring mip_rings[TSK_SLOTS];

static void mip_release(mip_entry *m)
{
    if (m->tex) cudaDestroyTextureObject(m->tex);
    for (int i = 0; i < m->n_surf; i++) cudaDestroySurfaceObject(m->surf[i]);
    if (m->arr) cudaFreeMipmappedArray(m->arr);
    m->tex = 0;
    m->arr = NULL;
    m->n_surf = 0;
    m->live = 0;
}

/* The ring entry for the next launch: its previous resources freed once
 * their kernels are done, and an event to mark this launch's end. */
static ts_status mip_take(mip_ring *r, mip_entry **out, ts_err *err)
{
    mip_entry *m = &r->e[r->next];
    if (m->live) {
        ts_status st = tsk_cuda_status(cudaEventSynchronize(m->done), "sample: mipmap wait", err);
        mip_release(m);
        if (st != TS_OK) return st;
    }
    if (!m->done) {
        ts_status st = tsk_cuda_status(cudaEventCreateWithFlags(&m->done, cudaEventDisableTiming),
                                       "sample: mipmap event", err);
        if (st != TS_OK) return st;
    }
    *out = m;
    return TS_OK;
}

/* One pyramid level from the one above: the mean of each 2x2 block (the
 * last row or column of an odd size clamps), rounded for integer types. */
template <typename T, int C>
__global__ void mip_down(cudaSurfaceObject_t from, int fw, int fh, cudaSurfaceObject_t to, int tw, int th)
{
    typedef typename tex_types<T, C>::elem E;
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= tw || y >= th) return;
    float sum[C];
#pragma unroll
    for (int c = 0; c < C; c++) sum[c] = 0.0f;
#pragma unroll
    for (int j = 0; j < 2; j++)
#pragma unroll
        for (int i = 0; i < 2; i++) {
            int sx = min(2 * x + i, fw - 1), sy = min(2 * y + j, fh - 1);
            E e = surf2Dread<E>(from, sx * (int)sizeof(E), sy);
            T v[C];
            memcpy(v, &e, sizeof e);
#pragma unroll
            for (int c = 0; c < C; c++) sum[c] += tsk_px<T>::load(v[c]);
        }
    T out[C];
#pragma unroll
    for (int c = 0; c < C; c++) out[c] = tsk_px<T>::store(0.25f * sum[c]);
    E e;
    memcpy(&e, out, sizeof e);
    surf2Dwrite<E>(e, to, x * (int)sizeof(E), y);
}

typedef struct mip_args {
    float lod;                 /* v5: log2 of the larger footprint */
    float2 ddx, ddy;           /* v6: the map's gradients in normalised units */
    float inv_w, inv_h;        /* 1 / image size */
} mip_args;

template <typename T, int C, bool ANISO>
__global__ void __launch_bounds__(256) sample_mip(sample_args a, mip_args m, cudaTextureObject_t tex)
{
    typedef typename tex_types<T, C>::flt F;
    int x = blockIdx.x * 32 + threadIdx.x;
    if (x >= a.out_w) return;
    for (int y = blockIdx.y * 8 + threadIdx.y; y < a.out_h; y += gridDim.y * 8) {
        float sx, sy;
        source_point(a, a.out_x0 + x, a.out_y0 + y, &sx, &sy);
        float u = sx * m.inv_w, v = sy * m.inv_h;
        F f;
        if constexpr (ANISO) f = tex2DGrad<F>(tex, u, v, m.ddx, m.ddy);
        else f = tex2DLod<F>(tex, u, v, m.lod);
        px<C> r;
#pragma unroll
        for (int c = 0; c < C; c++) r.v[c] = comp(f, c) * tsk_px<T>::maxv();
        store_plain<T, C>(a.dst + (size_t)y * a.dst_pitch, x, r);
    }
}

/* Whether v5/v6 take this launch: a whole image, a border with an address
 * mode, sizes the hardware takes. */
static int mip_fits(const tsk_op *op, const ts_view *src, cudaTextureAddressMode *mode, float *border_color)
{
    float maxv = (float)ts_type_max(src->type), v = op->u.sample.border_value;
    if (src->c == 3 || src->x0 != 0 || src->y0 != 0 || src->w != src->full_w || src->h != src->full_h) return 0;
    if (src->w > 65536 || src->h > 65536) return 0;
    *border_color = 0.0f;
    switch (op->u.sample.border) {
    case TS_BORDER_REPLICATE: *mode = cudaAddressModeClamp; return 1;
    case TS_BORDER_WRAP: *mode = cudaAddressModeWrap; return 1;
    case TS_BORDER_REFLECT: *mode = cudaAddressModeMirror; return 1;
    case TS_BORDER_CONSTANT:
        if (!(v >= 0.0f && v <= maxv)) return 0;
        *mode = cudaAddressModeBorder;
        *border_color = src->type == TS_F32 ? v : v / maxv;
        return 1;
    default: return 0;
    }
}

/* Build the pyramid of src in m (levels 0 .. levels-1) on stream st. */
template <typename T, int C>
static ts_status mip_build(const ts_view *src, int levels, mip_entry *m, cudaStream_t st, ts_err *err)
{
    int bits = 8 * (int)src->type;
    cudaChannelFormatKind kind = src->type == TS_F32 ? cudaChannelFormatKindFloat : cudaChannelFormatKindUnsigned;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc(bits, C > 1 ? bits : 0, C > 2 ? bits : 0, C > 3 ? bits : 0, kind);
    ts_status s = tsk_cuda_status(cudaMallocMipmappedArray(&m->arr, &desc, make_cudaExtent((size_t)src->w, (size_t)src->h, 0),
                                                           (unsigned)levels, cudaArraySurfaceLoadStore),
                                  "sample: mipmap allocation", err);
    if (s != TS_OK) { m->arr = NULL; return s; }
    int w = src->w, h = src->h;
    for (int l = 0; l < levels; l++) {
        cudaArray_t lvl;
        cudaResourceDesc rd;
        s = tsk_cuda_status(cudaGetMipmappedArrayLevel(&lvl, m->arr, (unsigned)l), "sample: mipmap level", err);
        if (s != TS_OK) return s;
        memset(&rd, 0, sizeof rd);
        rd.resType = cudaResourceTypeArray;
        rd.res.array.array = lvl;
        s = tsk_cuda_status(cudaCreateSurfaceObject(&m->surf[l], &rd), "sample: mipmap surface", err);
        if (s != TS_OK) return s;
        m->n_surf = l + 1;
        if (l == 0) {
            s = tsk_cuda_status(cudaMemcpy2DToArrayAsync(lvl, 0, 0, src->data, src->pitch,
                                                         (size_t)src->w * sizeof(T) * C, (size_t)src->h,
                                                         cudaMemcpyDeviceToDevice, st),
                                "sample: mipmap level 0", err);
        } else {
            int tw = w / 2 > 0 ? w / 2 : 1, th = h / 2 > 0 ? h / 2 : 1;
            dim3 grid((unsigned)((tw + 15) / 16), (unsigned)((th + 15) / 16));
            mip_down<T, C><<<grid, dim3(16, 16), 0, st>>>(m->surf[l - 1], w, h, m->surf[l], tw, th);
            s = TSK_LAUNCH_CHECK("sample: mipmap level", err);
            w = tw;
            h = th;
        }
        if (s != TS_OK) return s;
    }
    return TS_OK;
}

/* v5 (ANISO false) and v6: returns 0 in *done when the launch does not
 * fit and the caller should run the exact kernel instead. */
template <typename T, int C, bool ANISO>
static ts_status launch_mip(const tsk_op *op, const ts_view *src, const sample_args &a, float kx, float ky,
                            int slot, cudaStream_t st, int *done, ts_err *err)
{
    cudaTextureAddressMode mode;
    float border_color;
    *done = 0;
    if constexpr (C == 3) {
        return TS_OK;
    } else {
        if (!mip_fits(op, src, &mode, &border_color)) return TS_OK;
        float kmax = kx > ky ? kx : ky;
        int levels = 1 + (int)ceilf(log2f(kmax)), top = 1;
        for (int n = src->w > src->h ? src->w : src->h; n > 1; n /= 2) top++;
        if (levels > top) levels = top;
        if (levels > MIP_MAX_LEVELS) levels = MIP_MAX_LEVELS;
        mip_entry *m;
        ts_status s = mip_take(&mip_rings[slot], &m, err);
        if (s != TS_OK) return s;
        s = mip_build<T, C>(src, levels, m, st, err);
        if (s == TS_OK) {
            cudaResourceDesc res;
            cudaTextureDesc td;
            memset(&res, 0, sizeof res);
            res.resType = cudaResourceTypeMipmappedArray;
            res.res.mipmap.mipmap = m->arr;
            memset(&td, 0, sizeof td);
            td.addressMode[0] = td.addressMode[1] = mode;
            td.filterMode = cudaFilterModeLinear;
            td.mipmapFilterMode = cudaFilterModeLinear;
            td.readMode = src->type == TS_F32 ? cudaReadModeElementType : cudaReadModeNormalizedFloat;
            td.normalizedCoords = 1;
            td.maxMipmapLevelClamp = (float)(levels - 1);
            td.minMipmapLevelClamp = 0.0f;
            td.maxAnisotropy = ANISO ? 16 : 0;
            for (int i = 0; i < 4; i++) td.borderColor[i] = border_color;
            s = tsk_cuda_status(cudaCreateTextureObject(&m->tex, &res, &td, NULL), "sample: mipmap texture", err);
        }
        if (s == TS_OK) {
            mip_args ma;
            ma.lod = log2f(kmax);
            ma.inv_w = 1.0f / (float)src->w;
            ma.inv_h = 1.0f / (float)src->h;
            ma.ddx = make_float2(a.inv[0] * ma.inv_w, a.inv[3] * ma.inv_h);
            ma.ddy = make_float2(a.inv[1] * ma.inv_w, a.inv[4] * ma.inv_h);
            dim3 grid((unsigned)((a.out_w + 31) / 32), (unsigned)(a.out_h < 65535 * 8 ? (a.out_h + 7) / 8 : 65535));
            sample_mip<T, C, ANISO><<<grid, dim3(32, 8), 0, st>>>(a, ma, m->tex);
            s = TSK_LAUNCH_CHECK(ANISO ? "sample (mipmap, anisotropic)" : "sample (mipmap, trilinear)", err);
        }
        if (s == TS_OK) s = tsk_cuda_status(cudaEventRecord(m->done, st), "sample: mipmap event", err);
        if (s != TS_OK) {
            cudaStreamSynchronize(st);  /* nothing of ours may still run when freed */
            mip_release(m);
            return s;
        }
        m->live = 1;
        mip_rings[slot].next = (mip_rings[slot].next + 1) % MIP_RING;
        *done = 1;
        return TS_OK;
    }
}

/* ------------------------------------------------------------ launching */

static int ceil_div(int a, int b) { return (a + b - 1) / b; }
static unsigned grid_rows(int rows) { return (unsigned)(rows < 65535 ? (rows > 0 ? rows : 1) : 65535); }

template <typename T, int C, class S>
static void launch_v1(const sample_args &a, const S &s, cudaStream_t st)
{
    dim3 grid((unsigned)ceil_div(a.out_w, 256), grid_rows(a.out_h));
    sample_v1<T, C, S><<<grid, 256, 0, st>>>(a, s);
}

template <typename T, int C, class S>
static void launch_v2(const sample_args &a, const S &s, cudaStream_t st)
{
    dim3 grid((unsigned)ceil_div(a.out_w, 32), grid_rows(ceil_div(a.out_h, 8)));
    sample_v2<T, C, S><<<grid, dim3(32, 8), 0, st>>>(a, s);
}

template <typename T, int C, int PX, class S>
static void launch_v3(const sample_args &a, const S &s, cudaStream_t st)
{
    dim3 grid((unsigned)ceil_div(a.out_w, 32 * PX), grid_rows(ceil_div(a.out_h, 8)));
    if (a.interp == TSK_NEAREST)
        sample_v3<T, C, TSK_NEAREST, PX, S><<<grid, dim3(32, 8), 0, st>>>(a, s);
    else
        sample_v3<T, C, TSK_BILINEAR, PX, S><<<grid, dim3(32, 8), 0, st>>>(a, s);
}

/* v3 and v4 need coordinates below FAST_LIMIT, a source pitch below 4 GiB
 * and whole-pixel alignment of their loads and stores; otherwise v2 runs
 * (same results, plainer loads). */
static int v3_fits(const sample_args &a, size_t pixel_bytes)
{
    const int lim = (int)FAST_LIMIT;
    int pow2 = (pixel_bytes & (pixel_bytes - 1)) == 0;
    size_t al = pow2 ? pixel_bytes : 1;
    return a.full_w < lim && a.full_h < lim && a.out_x0 + a.out_w < lim && a.out_y0 + a.out_h < lim &&
           a.src_pitch < ((size_t)1 << 32) &&
           (uintptr_t)a.src % al == 0 && a.src_pitch % al == 0 && (uintptr_t)a.dst % al == 0 &&
           a.dst_pitch % al == 0;
}

enum { V7_RPT = 4 };  /* rows per thread of v7 */

template <typename T, int C>
static void launch_v7(const sample_args &a, const tex_src<T, C> &s, cudaStream_t st)
{
    dim3 grid((unsigned)ceil_div(a.out_w, 128), grid_rows(ceil_div(a.out_h, 8 * V7_RPT)));
    sample_v7<T, C, V7_RPT><<<grid, dim3(32, 8), 0, st>>>(a, s);
}

/* v8 launches only for RGBA8 (launch_typed); other types compile to v7. */
template <typename T, int C>
static void launch_v8(const sample_args &a, const tex_src<T, C> &s, cudaStream_t st)
{
    if constexpr (sizeof(T) == 1 && C == 4) {
        dim3 grid((unsigned)ceil_div(a.out_w, 128), grid_rows(ceil_div(a.out_h, 8 * V7_RPT)));
        sample_v8<V7_RPT><<<grid, dim3(32, 8), 0, st>>>(a, s);
    } else {
        launch_v7<T, C>(a, s, st);
    }
}

enum { V9_RPT = 2 };  /* rows per thread of v9 and v10 */

/* v9 (HALF: v10, which launches only for RGBA8; other types run v9) */
template <typename T, int C, bool HALF>
static void launch_v9(const sample_args &a, const tex_src<T, C> &s, cudaStream_t st)
{
    dim3 grid((unsigned)ceil_div(a.out_w, 128), grid_rows(ceil_div(a.out_h, 8 * V9_RPT)));
    if constexpr (HALF && sizeof(T) == 1 && C == 4) sample_v9<T, C, V9_RPT, true><<<grid, dim3(32, 8), 0, st>>>(a, s);
    else sample_v9<T, C, V9_RPT, false><<<grid, dim3(32, 8), 0, st>>>(a, s);
}

template <typename T, int C, class S>
static void launch_filter_kernel(const sample_args &a, const filter_args &f, const S &s, cudaStream_t st)
{
    dim3 grid((unsigned)ceil_div(a.out_w, 32), grid_rows(ceil_div(a.out_h, 8)));
    if (a.interp == TSK_AREA) sample_filter<T, C, TSK_AREA, S><<<grid, dim3(32, 8), 0, st>>>(a, f, s);
    else sample_filter<T, C, TSK_BICUBIC, S><<<grid, dim3(32, 8), 0, st>>>(a, f, s);
}

/* AREA and BICUBIC: v5 and v6 on the texture path try the mipmapped
 * texture; everything else runs the exact filter kernel, on global memory
 * or point-sampling a texture object. */
template <typename T, int C>
static ts_status launch_filtered(const tsk_op *op, const ts_view *src, const sample_args &a, int version,
                                 ts_path path, int slot, cudaStream_t st, ts_err *err)
{
    filter_args f;
    tsk_interp interp = op->u.sample.interp;
    tsk_sample_footprint(op, &f.kx, &f.ky);
    f.rx = tsk_sample_radius(interp, f.kx);
    f.ry = tsk_sample_radius(interp, f.ky);
    f.nx = tsk_sample_taps(interp, f.kx);
    f.ny = tsk_sample_taps(interp, f.ky);
    if (path == TS_PATH_TEXTURE && (version == 5 || version == 6)) {
        int done = 0;
        ts_status s0 = version == 5 ? launch_mip<T, C, false>(op, src, a, f.kx, f.ky, slot, st, &done, err)
                                    : launch_mip<T, C, true>(op, src, a, f.kx, f.ky, slot, st, &done, err);
        if (s0 != TS_OK || done) return s0;
    }
    if constexpr (C != 3) {
        tex_plan tp = path == TS_PATH_TEXTURE ? plan_texture(op, src) : tex_plan{ 0, 0, 0, cudaAddressModeClamp, 0.0f };
        if (tp.use) {
            tex_ring *r = &tex_rings[slot];
            tex_src<T, C> ts;
            ts_status s0 = ring_free_next(r, err);
            if (s0 != TS_OK) return s0;
            s0 = make_texture(src, &tp, &ts.tex, err);
            if (s0 != TS_OK) return s0;
            ts.norm_w = ts.norm_h = 1.0f;
            launch_filter_kernel<T, C>(a, f, ts, st);
            s0 = TSK_LAUNCH_CHECK("sample filtered (texture)", err);
            if (s0 != TS_OK) {
                cudaDestroyTextureObject(ts.tex);  /* nothing was queued */
                return s0;
            }
            return ring_keep(r, ts.tex, st, err);
        }
    }
    launch_filter_kernel<T, C>(a, f, global_src<T, C, LOAD_LDG>{ a.src, a.src_pitch }, st);
    return TSK_LAUNCH_CHECK("sample filtered", err);
}

template <typename T, int C>
static ts_status launch_typed(const tsk_op *op, const ts_view *src, const sample_args &a, int version,
                              ts_path path, int slot, cudaStream_t st, ts_err *err)
{
    if (op->u.sample.interp == TSK_AREA || op->u.sample.interp == TSK_BICUBIC)
        return launch_filtered<T, C>(op, src, a, version, path, slot, st, err);
    if (version == 5 || version == 6) version = 3;  /* the mipmap versions are for shrinking filters: v3 otherwise */
    if (version >= 3 && !v3_fits(a, sizeof(T) * C)) version = 2;
    /* v7 and v8 are bilinear on the texture path; what else they are asked
     * runs v3, and v8 on other than RGBA8 runs v7 */
    if (version == 8 && !(sizeof(T) == 1 && C == 4)) version = 7;
    const int v7_rows = (version == 7 || version == 8) && a.out_h <= 65535 * 8 * V7_RPT;
    if ((version == 7 || version == 8) && (op->u.sample.interp != TSK_BILINEAR || !v7_rows)) version = 3;
    /* v9 and v10 likewise (v10 on other than RGBA8 runs v9) */
    if ((version == 9 || version == 10) && (op->u.sample.interp != TSK_BILINEAR || a.out_h > 65535 * 8 * V9_RPT))
        version = 3;
    if constexpr (C != 3) {
        tex_plan tp = path == TS_PATH_TEXTURE ? plan_texture(op, src) : tex_plan{ 0, 0, 0, cudaAddressModeClamp, 0.0f };
        if (tp.use) {
            tex_ring *r = &tex_rings[slot];
            ts_status s0 = ring_free_next(r, err);
            if (s0 != TS_OK) return s0;
            tex_src<T, C> ts;
            s0 = make_texture(src, &tp, &ts.tex, err);
            if (s0 != TS_OK) return s0;
            ts.norm_w = tp.normalized ? (float)src->w : 1.0f;
            ts.norm_h = tp.normalized ? (float)src->h : 1.0f;
            if (version == 1) launch_v1<T, C>(a, ts, st);
            else if (version == 2) launch_v2<T, C>(a, ts, st);
            else if (version == 3) launch_v3<T, C, 4>(a, ts, st);
            else if (version == 7 && tp.linear) launch_v7<T, C>(a, ts, st);
            else if (version == 8 && tp.linear) launch_v8(a, ts, st);
            else if (version == 9 && tp.linear) launch_v9<T, C, false>(a, ts, st);
            else if (version == 10 && tp.linear) launch_v9<T, C, true>(a, ts, st);
            else if (version >= 7) launch_v3<T, C, 4>(a, ts, st);
            else launch_v3<T, C, 8>(a, ts, st);
            s0 = TSK_LAUNCH_CHECK("sample (texture)", err);
            if (s0 != TS_OK) {
                cudaDestroyTextureObject(ts.tex);  /* nothing was queued */
                return s0;
            }
            return ring_keep(r, ts.tex, st, err);
        }
    }
    if (version == 1) launch_v1<T, C>(a, global_src<T, C, LOAD_PLAIN>{ a.src, a.src_pitch }, st);
    else if (version == 2) launch_v2<T, C>(a, global_src<T, C, LOAD_LDG>{ a.src, a.src_pitch }, st);
    else if (version == 3 || version >= 7)
        launch_v3<T, C, 4>(a, global_src<T, C, LOAD_PIXEL>{ a.src, a.src_pitch }, st);
    else launch_v3<T, C, 8>(a, global_src<T, C, LOAD_PIXEL>{ a.src, a.src_pitch }, st);
    return TSK_LAUNCH_CHECK("sample", err);
}

template <typename T>
static ts_status launch_channels(const tsk_op *op, const ts_view *src, const sample_args &a, int version,
                                 ts_path path, int slot, cudaStream_t st, ts_err *err)
{
    switch (src->c) {
    case 1: return launch_typed<T, 1>(op, src, a, version, path, slot, st, err);
    case 2: return launch_typed<T, 2>(op, src, a, version, path, slot, st, err);
    case 3: return launch_typed<T, 3>(op, src, a, version, path, slot, st, err);
    default: return launch_typed<T, 4>(op, src, a, version, path, slot, st, err);
    }
}

static ts_status check_views(const tsk_op *op, const ts_view *src, const ts_view *dst, ts_err *err)
{
    const char *what = "sample";
    if ((int)op->u.sample.interp < TSK_NEAREST || op->u.sample.interp >= TSK_INTERP_COUNT)
        return ts_err_set(err, TS_E_ARG, "%s: unknown interpolation %d", what, (int)op->u.sample.interp);
    if ((int)op->u.sample.border < TS_BORDER_REPLICATE || op->u.sample.border > TS_BORDER_CONSTANT)
        return ts_err_set(err, TS_E_ARG, "%s: unknown border mode %d", what, (int)op->u.sample.border);
    if (src->c < 1 || src->c > 4)
        return ts_err_set(err, TS_E_ARG, "%s: %d channels (1 to 4 supported)", what, src->c);
    if (src->type != TS_U8 && src->type != TS_U16 && src->type != TS_F32)
        return ts_err_set(err, TS_E_ARG, "%s: unknown channel type %d", what, (int)src->type);
    if ((uintptr_t)src->data % (uintptr_t)src->type || src->pitch % (size_t)src->type ||
        (uintptr_t)dst->data % (uintptr_t)dst->type || dst->pitch % (size_t)dst->type)
        return ts_err_set(err, TS_E_ARG, "%s: view not aligned to its channel type", what);
    if (src->full_w <= 0 || src->full_h <= 0 || src->x0 < 0 || src->y0 < 0 ||
        src->x0 + src->w > src->full_w || src->y0 + src->h > src->full_h)
        return ts_err_set(err, TS_E_ARG, "%s: source region %d,%d %dx%d outside its %dx%d image", what,
                          src->x0, src->y0, src->w, src->h, src->full_w, src->full_h);
    /* The reference refuses a read outside src; here a tap outside it would
     * read foreign memory, so a source short of tsk_need is refused. */
    ts_rect out = { dst->x0, dst->y0, dst->w, dst->h };
    ts_rect need = tsk_need(op, src->full_w, src->full_h, out);
    if (need.w > 0 && need.h > 0 &&
        (need.x0 < src->x0 || need.y0 < src->y0 || need.x0 + need.w > src->x0 + src->w ||
         need.y0 + need.h > src->y0 + src->h))
        return ts_err_set(err, TS_E_ARG, "%s: source region %d,%d %dx%d lacks %d,%d %dx%d that the output needs",
                          what, src->x0, src->y0, src->w, src->h, need.x0, need.y0, need.w, need.h);
    return TS_OK;
}

static ts_status sample_apply(const tsk_op *op, const ts_view *src, ts_view *dst, const tsk_launch *l,
                              ts_err *err)
{
    ts_status st = check_views(op, src, dst, err);
    if (st != TS_OK) return st;
    cudaStream_t stream = l ? (cudaStream_t)l->stream : 0;

    /* An empty source region: every tap is outside the image (possible only
     * with the constant border). The plain global kernel then reads no pixel
     * and blends border values with the reference's weights, which a plain
     * fill of border_value would not match exactly (float weights sum to
     * 1 within an ulp; a fill of 127.5 would round up where the blend may
     * not). */
    const int empty = src->w <= 0 || src->h <= 0;
    if (empty && op->u.sample.border != TS_BORDER_CONSTANT)
        return ts_err_set(err, TS_E_ARG, "sample: empty source region with a border mode that needs pixels");

    sample_args a;
    a.src = src->data; a.src_pitch = src->pitch;
    a.dst = dst->data; a.dst_pitch = dst->pitch;
    for (int i = 0; i < 6; i++) a.inv[i] = op->u.sample.inv[i];
    a.out_x0 = dst->x0; a.out_y0 = dst->y0; a.out_w = dst->w; a.out_h = dst->h;
    a.in_x0 = src->x0; a.in_y0 = src->y0; a.in_w = src->w; a.in_h = src->h;
    a.full_w = src->full_w; a.full_h = src->full_h;
    a.interp = (int)op->u.sample.interp;
    a.border = (int)op->u.sample.border;
    a.border_value = op->u.sample.border_value;

    int version;
    st = tsk_pick_version(&tsk_family_sample, l, &version, err);
    if (st != TS_OK) return st;
    if (empty) version = 1;
    ts_path path = l && !empty ? l->path : TS_PATH_GLOBAL;
    int slot = l ? l->slot : 0;
    switch (src->type) {
    case TS_U8: return launch_channels<uint8_t>(op, src, a, version, path, slot, stream, err);
    case TS_U16: return launch_channels<uint16_t>(op, src, a, version, path, slot, stream, err);
    default: return launch_channels<float>(op, src, a, version, path, slot, stream, err);
    }
}

extern "C" const tsk_family tsk_family_sample = {
    "sample",
    sample_version_names,
    (int)(sizeof sample_version_names / sizeof sample_version_names[0]),
    3,
    sample_apply,
};
