/* orient.cu - the eight EXIF orientations on the GPU (TSK_ORIENT; tsk.h
 * gives the map, ref_orient.c is the oracle). A pure permutation of pixels,
 * so the kernels move whole pixels as 1- to 16-byte words and never look
 * at the channel type.
 *
 * Versions, as in llm.c's dev/cuda (each one a separate kernel):
 *   v1  naive 32x32: one thread per output pixel reading its source pixel
 *       directly (coalesced writes; for codes 5-8 the reads stride by a
 *       whole row, so each warp touches 32 rows)
 *   v2  32x32 shared-memory tile: coalesced reads and writes, but the
 *       column reads of the tile hit one bank 32 times
 *   v3  as v2 with the tile padded by one pixel per row: no bank conflicts
 *   v4  32x8 threads, each moving 4 rows of the padded tile (fewer
 *       threads, more work each); codes 1-4 skip the tile: a plain row
 *       kernel, 4 rows per thread, is already coalesced both ways
 *   v5  16-byte global accesses: codes 5-8 through a 64x64 padded tile
 *       (4- and 8-byte pixels), codes 1-4 as 16-byte row vectors reversed
 *       in registers for the mirrored codes; where alignment or pixel size
 *       does not allow it, v4.
 *
 * v4 and v5 keep four loads per thread in flight (v5 16-byte ones), since
 * one load per thread and a barrier (v2, v3) cannot cover memory latency
 * (see docs/measurements/kernels.md; the times of every version and
 * NPP's: docs/PERFORMANCE.md, "Transpose family").
 *
 * All versions handle any region: output pixel (x, y) of dst (local) reads
 * local source pixel (a*x + b*y + e, c*x + d*y + f), an affine map with
 * coefficients in {-1, 0, 1} worked out on the host from the code's map
 * (ts_orient_affine), the image size and both regions' offsets.
 *
 * A carried colour matrix (tsk.h) rides in v5's RGBA8 kernels: each pixel
 * goes through it on its way out (matrix_pixel.cuh, the matrix kernel's
 * own rule), so the pair costs one read and one write of the image. Every
 * other case runs the orientation, then the matrix kernel in place. */
#include "gpu_internal.h"
#include "point/matrix_pixel.cuh"
#include "ts_orient.h"

#include <string.h>

/* A pixel as N words of type W (uchar3 for RGB8, uint4 for RGBA F32...). */
template <typename W, int N>
struct orient_px {
    W v[N];
};

typedef struct orient_args {
    const unsigned char *src;
    size_t sp;
    int sw, sh;          /* the source region's size, for bounds */
    unsigned char *dst;
    size_t dp;
    int w, h;            /* the output region */
    int a, b, e, c, d, f; /* sx = a*x + b*y + e, sy = c*x + d*y + f */
    float m[12];          /* the carried matrix (v5 RGBA8 only) */
} orient_args;

/* An RGBA8 pixel word through the matrix k (MAT), or as it is. */
template <bool MAT, typename PW>
__device__ __forceinline__ PW orient_px_out(PW w, const float (&k)[12])
{
    if constexpr (MAT) {
        union { PW w; uint8_t e[4]; } p = { w };
        matrix_pixel<uint8_t, 4, true>(p.e, k);
        return p.w;
    } else {
        return w;
    }
}

template <typename PX>
__device__ __forceinline__ PX orient_load(const orient_args &g, int sx, int sy)
{
    return ((const PX *)(g.src + (size_t)sy * g.sp))[sx];
}

template <typename PX>
__device__ __forceinline__ void orient_store(const orient_args &g, int x, int y, const PX &p)
{
    ((PX *)(g.dst + (size_t)y * g.dp))[x] = p;
}

/* The smallest value of k*t for t in [t0, t0 + n - 1], k in {-1, 0, 1}. */
__device__ __forceinline__ int orient_lo(int k, int t0, int n)
{
    return k > 0 ? t0 : k < 0 ? -(t0 + n - 1) : 0;
}

/* v1 (block 32x32, ROWS 1) and the v4 row kernel (block 32x8, ROWS 4):
 * each thread reads its source pixels directly. */
template <typename PX, int ROWS>
__global__ void orient_direct_kernel(orient_args g)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= g.w) return;
    const int step = blockDim.y * ROWS;
    for (int y0 = blockIdx.y * step + threadIdx.y; y0 < g.h; y0 += gridDim.y * step) {
        PX p[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            int y = y0 + r * blockDim.y;
            if (y < g.h) p[r] = orient_load<PX>(g, g.a * x + g.b * y + g.e, g.c * x + g.d * y + g.f);
        }
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            int y = y0 + r * blockDim.y;
            if (y < g.h) orient_store<PX>(g, x, y, p[r]);
        }
    }
}

/* v2, v3, v4: a TILE x TILE block of output pixels comes from a TILE x TILE
 * block of source pixels. Threads (32 x BY) read the source block row by
 * row (coalesced) into shared memory, then write the output block row by
 * row, each output pixel taking its tile cell through the map. Source
 * pixels outside the source region are skipped; they feed only output
 * pixels outside dst, which are not written. */
template <typename PX, int BY, int PAD>
__global__ void orient_tile_kernel(orient_args g)
{
    enum { TILE = 32 };
    __shared__ PX tile[TILE][TILE + PAD];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x0 = blockIdx.x * TILE;
    for (int y0 = blockIdx.y * TILE; y0 < g.h; y0 += gridDim.y * TILE) {
        const int sx0 = g.e + orient_lo(g.a, x0, TILE) + orient_lo(g.b, y0, TILE);
        const int sy0 = g.f + orient_lo(g.c, x0, TILE) + orient_lo(g.d, y0, TILE);
#pragma unroll
        for (int i = ty; i < TILE; i += BY) {
            int sx = sx0 + tx, sy = sy0 + i;
            if (sx >= 0 && sx < g.sw && sy >= 0 && sy < g.sh) tile[i][tx] = orient_load<PX>(g, sx, sy);
        }
        __syncthreads();
#pragma unroll
        for (int i = ty; i < TILE; i += BY) {
            int x = x0 + tx, y = y0 + i;
            if (x < g.w && y < g.h) {
                int sx = g.a * x + g.b * y + g.e, sy = g.c * x + g.d * y + g.f;
                orient_store<PX>(g, x, y, tile[sy - sy0][sx - sx0]);
            }
        }
        __syncthreads();
    }
}

/* v5, codes 5-8: a 64x64 tile of 4- or 8-byte pixels (PW) moved with
 * 16-byte global loads and stores, V = 16 / sizeof(PW) pixels each. The
 * host has checked that every full vector is 16-byte aligned; vectors cut
 * by the region's edge go pixel by pixel. */
template <typename PW, bool MAT>
__global__ void __launch_bounds__(256) orient_tile16_kernel(orient_args g)
{
    enum { T = 64, V = 16 / sizeof(PW), VPR = T / V, RPP = 256 / VPR };
    union vec { uint4 q; PW p[V]; };
    __shared__ PW tile[T][T + 1];
    float mk[12];
    if constexpr (MAT) matrix_coef<uint8_t>(g.m, mk);
    const int vc = threadIdx.x % VPR, vr = threadIdx.x / VPR;
    const int x0 = blockIdx.x * T;
    for (int y0 = blockIdx.y * T; y0 < g.h; y0 += gridDim.y * T) {
        const int sx0 = g.e + orient_lo(g.b, y0, T);  /* a = d = 0 for codes 5-8 */
        const int sy0 = g.f + orient_lo(g.c, x0, T);
        const int sx = sx0 + vc * V;
#pragma unroll
        for (int r = vr; r < T; r += RPP) {
            int sy = sy0 + r;
            if (sy < 0 || sy >= g.sh) continue;
            const PW *row = (const PW *)(g.src + (size_t)sy * g.sp);
            if (sx >= 0 && sx + V <= g.sw) {
                vec v;
                v.q = *(const uint4 *)(row + sx);
#pragma unroll
                for (int k = 0; k < V; k++) tile[r][vc * V + k] = v.p[k];
            } else {
                for (int k = 0; k < V; k++)
                    if (sx + k >= 0 && sx + k < g.sw) tile[r][vc * V + k] = row[sx + k];
            }
        }
        __syncthreads();
        const int x = x0 + vc * V;
#pragma unroll
        for (int r = vr; r < T; r += RPP) {
            int y = y0 + r;
            if (y >= g.h || x >= g.w) continue;
            vec v;
            const int j = g.b * y + g.e - sx0;  /* the tile column: the same for the whole vector */
#pragma unroll
            for (int q = 0; q < V; q++) v.p[q] = orient_px_out<MAT>(tile[g.c * (x + q) + g.f - sy0][j], mk);
            PW *row = (PW *)(g.dst + (size_t)y * g.dp);
            if (x + V <= g.w) {
                *(uint4 *)(row + x) = v.q;
            } else {
                for (int q = 0; q < V && x + q < g.w; q++) row[x + q] = v.p[q];
            }
        }
        __syncthreads();
    }
}

/* v5, codes 1-4: each thread moves V = 16 / sizeof(PW) pixels of 4 rows as
 * 16-byte vectors; a = -1 (mirrored codes) reverses the vector. */
template <typename PW, bool MAT>
__global__ void orient_row16_kernel(orient_args g)
{
    enum { V = 16 / sizeof(PW), ROWS = 4 };
    union vec { uint4 q; PW p[V]; };
    float mk[12];
    if constexpr (MAT) matrix_coef<uint8_t>(g.m, mk);
    const int x = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (x >= g.w) return;
    const int step = blockDim.y * ROWS;
    /* the source vector's first pixel: the lowest source x of the V outputs */
    const int sxv = g.a > 0 ? x + g.e : g.e - x - (V - 1);
    const bool whole = x + V <= g.w;
    for (int y0 = blockIdx.y * step + threadIdx.y; y0 < g.h; y0 += gridDim.y * step) {
        vec v[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            int y = y0 + r * blockDim.y;
            if (y >= g.h) continue;
            const PW *row = (const PW *)(g.src + (size_t)(g.d * y + g.f) * g.sp);
            if (whole) {
                v[r].q = *(const uint4 *)(row + sxv);
            } else {
                for (int k = 0; k < V && x + k < g.w; k++) {
                    int sx = g.a * (x + k) + g.e;
                    v[r].p[g.a > 0 ? k : V - 1 - k] = row[sx];
                }
            }
        }
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            int y = y0 + r * blockDim.y;
            if (y >= g.h) continue;
            PW *row = (PW *)(g.dst + (size_t)y * g.dp);
            vec o;
#pragma unroll
            for (int k = 0; k < V; k++) o.p[k] = orient_px_out<MAT>(v[r].p[g.a > 0 ? k : V - 1 - k], mk);
            if (whole) {
                *(uint4 *)(row + x) = o.q;
            } else {
                for (int k = 0; k < V && x + k < g.w; k++) row[x + k] = o.p[k];
            }
        }
    }
}

/* ----------------------------------------------------------- launching */

static dim3 orient_grid(int w, int h, int tw, int th)
{
    unsigned gy = (unsigned)((h + th - 1) / th);
    return dim3((unsigned)((w + tw - 1) / tw), gy < 65535 ? gy : 65535);
}

static int orient_mod(int v, int m)
{
    int r = v % m;
    return r < 0 ? r + m : r;
}

/* v5's conditions: 16-byte aligned rows, and every whole vector of the
 * source starting on a multiple of V pixels. */
static int orient_vec_ok(const orient_args *g, int swap, int pixel_bytes)
{
    int V = 16 / pixel_bytes;
    if ((uintptr_t)g->src % 16 || g->sp % 16 || (uintptr_t)g->dst % 16 || g->dp % 16) return 0;
    if (swap) return g->b > 0 ? orient_mod(g->e, V) == 0 : orient_mod(g->e + 1, V) == 0;
    return g->a > 0 ? orient_mod(g->e, V) == 0 : orient_mod(g->e + 1, V) == 0;
}

template <typename PX>
static void orient_launch_v4(const orient_args *g, int swap, cudaStream_t s)
{
    if (swap) orient_tile_kernel<PX, 8, 1><<<orient_grid(g->w, g->h, 32, 32), dim3(32, 8), 0, s>>>(*g);
    else orient_direct_kernel<PX, 4><<<orient_grid(g->w, g->h, 32, 32), dim3(32, 8), 0, s>>>(*g);
}

/* v5 for pixel words PW of 4 or 8 bytes (a pixel is one word). */
template <typename PW, bool MAT = false>
static void orient_launch_v5(const orient_args *g, int swap, cudaStream_t s)
{
    const int V = 16 / (int)sizeof(PW);
    if (!orient_vec_ok(g, swap, (int)sizeof(PW))) {
        orient_launch_v4<orient_px<PW, 1> >(g, swap, s);
    } else if (swap) {
        orient_tile16_kernel<PW, MAT><<<orient_grid(g->w, g->h, 64, 64), 256, 0, s>>>(*g);
    } else {
        orient_row16_kernel<PW, MAT><<<orient_grid(g->w, g->h, 32 * V, 32), dim3(32, 8), 0, s>>>(*g);
    }
}

template <typename W, int N>
static void orient_launch(int version, const orient_args *g, int swap, cudaStream_t s)
{
    typedef orient_px<W, N> PX;
    const int bytes = (int)sizeof(W) * N;
    switch (version) {
    case 1: orient_direct_kernel<PX, 1><<<orient_grid(g->w, g->h, 32, 32), dim3(32, 32), 0, s>>>(*g); break;
    case 2: orient_tile_kernel<PX, 32, 0><<<orient_grid(g->w, g->h, 32, 32), dim3(32, 32), 0, s>>>(*g); break;
    case 3: orient_tile_kernel<PX, 32, 1><<<orient_grid(g->w, g->h, 32, 32), dim3(32, 32), 0, s>>>(*g); break;
    case 4: orient_launch_v4<PX>(g, swap, s); break;
    default:
        if (N == 1 && bytes == 4) orient_launch_v5<uint32_t>(g, swap, s);
        else if (N == 1 && bytes == 8) orient_launch_v5<uint2>(g, swap, s);
        else if (!swap && N == 1 && bytes == 16 && orient_vec_ok(g, swap, 16))
            orient_row16_kernel<uint4, false><<<orient_grid(g->w, g->h, 32, 32), dim3(32, 8), 0, s>>>(*g);
        else orient_launch_v4<PX>(g, swap, s);
        break;
    }
}

/* The widest word that divides the pixel and every address and pitch. */
static int orient_word(size_t pixel_bytes, const ts_view *src, const ts_view *dst)
{
    uintptr_t bits = (uintptr_t)src->data | (uintptr_t)dst->data | src->pitch | dst->pitch | pixel_bytes;
    int word = 16;
    while (word > 1 && (bits % (uintptr_t)word)) word /= 2;
    return word;
}

static ts_status orient_dispatch(int version, const orient_args *g, int swap, int word, int n, cudaStream_t s)
{
    switch (word * 8 + n) {
    case 1 * 8 + 1: orient_launch<uint8_t, 1>(version, g, swap, s); break;
    case 1 * 8 + 2: orient_launch<uint8_t, 2>(version, g, swap, s); break;
    case 1 * 8 + 3: orient_launch<uint8_t, 3>(version, g, swap, s); break;
    case 1 * 8 + 4: orient_launch<uint8_t, 4>(version, g, swap, s); break;
    case 2 * 8 + 1: orient_launch<uint16_t, 1>(version, g, swap, s); break;
    case 2 * 8 + 2: orient_launch<uint16_t, 2>(version, g, swap, s); break;
    case 2 * 8 + 3: orient_launch<uint16_t, 3>(version, g, swap, s); break;
    case 2 * 8 + 4: orient_launch<uint16_t, 4>(version, g, swap, s); break;
    case 4 * 8 + 1: orient_launch<uint32_t, 1>(version, g, swap, s); break;
    case 4 * 8 + 2: orient_launch<uint32_t, 2>(version, g, swap, s); break;
    case 4 * 8 + 3: orient_launch<uint32_t, 3>(version, g, swap, s); break;
    case 4 * 8 + 4: orient_launch<uint32_t, 4>(version, g, swap, s); break;
    case 8 * 8 + 1: orient_launch<uint2, 1>(version, g, swap, s); break;
    case 8 * 8 + 2: orient_launch<uint2, 2>(version, g, swap, s); break;
    case 16 * 8 + 1: orient_launch<uint4, 1>(version, g, swap, s); break;
    default: return TS_E_ARG;
    }
    return TS_OK;
}

static const char *const orient_version_names[] = {
    "v1 naive 32x32, direct reads",
    "v2 smem tile 32x32",
    "v3 padded smem tile 32x32",
    "v4 padded tile, 32x8 threads x 4 rows",
    "v5 16-byte accesses, 64x64 tile",
};

static ts_status orient_apply(const tsk_op *op, const ts_view *src, ts_view *dst, const tsk_launch *l, ts_err *err)
{
    const int code = op->u.orient.code;
    const int W = src->full_w, H = src->full_h, swap = ts_orient_swaps(code);
    const size_t pixel = (size_t)dst->c * (size_t)dst->type;
    cudaStream_t s = l ? (cudaStream_t)l->stream : 0;
    int version, m[6];
    orient_args g;
    ts_status st = tsk_pick_version(&tsk_family_orient, l, &version, err);
    if (st != TS_OK) return st;
    if (code < 1 || code > 8) return ts_err_set(err, TS_E_ARG, "orient: code %d is not 1..8", code);
    if (dst->c < 1 || dst->c > 4 || (dst->type != TS_U8 && dst->type != TS_U16 && dst->type != TS_F32))
        return ts_err_set(err, TS_E_ARG, "orient: %d channels of type %d", dst->c, (int)dst->type);
    if (dst->full_w != (swap ? H : W) || dst->full_h != (swap ? W : H))
        return ts_err_set(err, TS_E_ARG, "orient: code %d makes a %dx%d image of %dx%d, not %dx%d", code,
                          swap ? H : W, swap ? W : H, W, H, dst->full_w, dst->full_h);
    if ((uintptr_t)src->data % (uintptr_t)dst->type || src->pitch % (size_t)dst->type ||
        (uintptr_t)dst->data % (uintptr_t)dst->type || dst->pitch % (size_t)dst->type)
        return ts_err_set(err, TS_E_ARG, "orient: rows not aligned to their %d-byte channels", (int)dst->type);
    ts_orient_affine(code, W, H, m);  /* the global map: SX = m0*X + m1*Y + m2, SY = m3*X + m4*Y + m5 */
    g.a = m[0];
    g.b = m[1];
    g.e = m[0] * dst->x0 + m[1] * dst->y0 + m[2] - src->x0;
    g.c = m[3];
    g.d = m[4];
    g.f = m[3] * dst->x0 + m[4] * dst->y0 + m[5] - src->y0;
    /* The map is affine: if the corners of dst land inside src, all of it does. */
    for (int corner = 0; corner < 4; corner++) {
        int x = corner & 1 ? dst->w - 1 : 0, y = corner & 2 ? dst->h - 1 : 0;
        int sx = g.a * x + g.b * y + g.e, sy = g.c * x + g.d * y + g.f;
        if (sx < 0 || sy < 0 || sx >= src->w || sy >= src->h)
            return ts_err_set(err, TS_E_ARG, "orient: source region %d,%d %dx%d lacks pixel (%d, %d) it needs",
                              src->x0, src->y0, src->w, src->h, sx + src->x0, sy + src->y0);
    }
    g.src = src->data;
    g.sp = src->pitch;
    g.sw = src->w;
    g.sh = src->h;
    g.dst = dst->data;
    g.dp = dst->pitch;
    g.w = dst->w;
    g.h = dst->h;
    int word = orient_word(pixel, src, dst);
    /* the matrix rides along: v5, RGBA8 in 4-byte words, 16-byte vectors */
    if (op->u.orient.matrix && version == 5 && dst->type == TS_U8 && dst->c == 4 && word >= 4 &&
        orient_vec_ok(&g, swap, 4)) {
        memcpy(g.m, op->u.orient.m, sizeof g.m);
        orient_launch_v5<uint32_t, true>(&g, swap, s);
        return TSK_LAUNCH_CHECK("orient", err);
    }
    if (orient_dispatch(version, &g, swap, word, (int)(pixel / (size_t)word), s) != TS_OK)
        return ts_err_set(err, TS_E_ARG, "orient: no kernel for %zu-byte pixels in %d-byte words", pixel, word);
    st = TSK_LAUNCH_CHECK("orient", err);
    if (st != TS_OK || !op->u.orient.matrix) return st;
    /* every other case: the matrix kernel (its default version) in place */
    const tsk_op mat = tsk_orient_matrix_op(op);
    tsk_launch ml = { l ? l->stream : NULL, 0, TS_PATH_GLOBAL, l ? l->slot : 0 };
    return tsk_gpu_apply(&mat, dst, dst, &ml, err);
}

extern "C" const tsk_family tsk_family_orient = {
    "orient",
    orient_version_names,
    (int)(sizeof orient_version_names / sizeof orient_version_names[0]),
    5,
    orient_apply,
};
