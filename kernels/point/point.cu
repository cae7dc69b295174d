/* point.cu - the per-pixel ops on the GPU: the colour matrix, premultiply
 * and unpremultiply (tsk.h gives their maths; ref_point.c is the oracle).
 *
 * Versions, as in llm.c's dev/cuda (each one a separate kernel):
 *   v1  one thread per pixel, matrix read from global memory
 *   v2  one thread per pixel, matrix from a __constant__ bank
 *   v3  grid-stride loop over 16-byte chunks (uint4 loads and stores)
 *   v4  as v3 with four chunks in flight per thread (loads before stores)
 *   v5  as v4 without float<->int conversion instructions: 8- and 16-bit
 *       values become floats by the 2^23 trick, and results round by an
 *       add in round-down mode (same results, see point_io)
 * PREMUL and UNPREMUL have no coefficients: their v1 and v2 are the same
 * kernel. Without alpha (c = 1 or 3) they are a copy, as in the reference.
 *
 * Coefficients: __constant__ memory is one symbol per module, and streams
 * run at the same time, so the matrix lives in one bank per slot
 * (TSK_SLOTS of them). A launch uploads into bank l->slot on l->stream,
 * in stream order before the kernel, and the kernel indexes its bank with
 * a uniform argument: two streams with different matrices never race. A
 * host-side copy of each bank skips the upload when the bank already holds
 * the same matrix. A slot belongs to one stream and one host thread at a
 * time (the engine's contract), so the copy needs no lock.
 *
 * Exactness: sums and products use __fmul_rn / __fadd_rn / __fdiv_rn in
 * the reference's order, so nvcc cannot contract them into FMAs; results
 * are bit-identical to tsk_ref_apply for every type (tolerance 0).
 *
 * Why v5 (the default): v4 is bound by the float<->int conversion
 * instructions (I2F/F2I), which issue at a fraction of the add/multiply
 * rate, not by memory (see docs/measurements/kernels.md; the times of
 * every version and NPP's: docs/PERFORMANCE.md, "Colour matrix"). */
#include "matrix_pixel.cuh"

#include <string.h>

enum { POINT_MATRIX_GLOBAL, POINT_MATRIX_CONST, POINT_PREMUL, POINT_UNPREMUL, POINT_COPY };
enum { POINT_BLOCK = 256 };

__constant__ float c_point_matrix[TSK_SLOTS][12];
__device__ float g_point_matrix[TSK_SLOTS][12];

typedef struct point_args {
    const unsigned char *src;  /* the pixel matching dst's first pixel */
    size_t sp;
    unsigned char *dst;
    size_t dp;
    int w, h;
    int slot;
} point_args;

/* ------------------------------------------------------------ per pixel */

/* The matrix of bank `slot` (matrix_coef). */
template <typename T, int OP>
__device__ __forceinline__ void point_coef(int slot, float k[12])
{
    if constexpr (OP == POINT_MATRIX_GLOBAL || OP == POINT_MATRIX_CONST) {
        matrix_coef<T>(OP == POINT_MATRIX_CONST ? c_point_matrix[slot] : g_point_matrix[slot], k);
    } else {
#pragma unroll
        for (int i = 0; i < 12; i++) k[i] = 0.0f;  /* unused */
    }
}

/* One pixel of C channels, in place. */
template <typename T, int C, int OP, bool FAST = false>
__device__ __forceinline__ void point_pixel(T *p, const float k[12])
{
    typedef point_io<T, FAST> X;
    const float maxv = tsk_px<T>::maxv();
    if (OP == POINT_MATRIX_GLOBAL || OP == POINT_MATRIX_CONST) {
        matrix_pixel<T, C, FAST>(p, k);
    } else if ((OP == POINT_PREMUL || OP == POINT_UNPREMUL) && (C == 2 || C == 4)) {
        float a = X::load(p[C - 1]);
#pragma unroll
        for (int i = 0; i < C - 1; i++) {
            float v = X::load(p[i]);
            if (OP == POINT_PREMUL) p[i] = X::store(__fdiv_rn(__fmul_rn(v, a), maxv));
            else p[i] = X::store(a == 0.0f ? 0.0f : __fdiv_rn(__fmul_rn(v, maxv), a));
        }
    }
    /* POINT_COPY, or PREMUL/UNPREMUL without alpha: the pixel as it is. */
}

/* v1, v2: one thread per pixel over a 2-D grid; rows loop so that any
 * height fits the grid's 65535 limit. */
template <typename T, int C, int OP>
__global__ void point_pixel_kernel(point_args a)
{
    float k[12];
    point_coef<T, OP>(a.slot, k);
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= a.w) return;
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < a.h; y += gridDim.y * blockDim.y) {
        const T *s = tsk_row<const T>((unsigned char *)a.src, a.sp, y) + (size_t)x * C;
        T p[C];
#pragma unroll
        for (int ch = 0; ch < C; ch++) p[ch] = s[ch];
        point_pixel<T, C, OP>(p, k);
        T *d = tsk_row<T>(a.dst, a.dp, y) + (size_t)x * C;
#pragma unroll
        for (int ch = 0; ch < C; ch++) d[ch] = p[ch];
    }
}

/* ----------------------------------------------------- 16-byte chunks */

/* A row is cut into chunks of whole pixels that are a whole number of
 * 16-byte words: 16 bytes, or 48 for 3-, 6- and 12-byte pixels (RGB). The
 * pixels after the last whole chunk form a tail chunk done pixel by pixel. */
template <typename T, int C>
struct point_chunk {
    static constexpr int P = C * (int)sizeof(T);
    static constexpr int BYTES = 16 % P == 0 ? 16 : 48;
    static constexpr int PIXELS = BYTES / P;
    static constexpr int WORDS = BYTES / 16;
    union data { uint4 q[WORDS]; T e[BYTES / sizeof(T)]; };
};

/* v3 (U = 1), v4 (U = 4), v5 (U = 4, FAST): grid-stride over every chunk
 * of the region; each pass loads U chunks, then transforms and stores
 * them, so U loads of 16 bytes per thread are in flight at once. Needs
 * 16-byte aligned rows. */
template <typename T, int C, int OP, int U, bool FAST>
__global__ void __launch_bounds__(POINT_BLOCK) point_chunk_kernel(point_args a, unsigned chunks_per_row,
                                                                  unsigned whole_per_row, unsigned total)
{
    typedef point_chunk<T, C> K;
    float k[12];
    point_coef<T, OP>(a.slot, k);
    const unsigned stride = gridDim.x * blockDim.x;
    for (unsigned base = blockIdx.x * blockDim.x + threadIdx.x; base < total; base += stride * U) {
        typename K::data v[U];
        unsigned row[U], col[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            unsigned i = base + u * stride;
            row[u] = i / chunks_per_row;
            col[u] = i - row[u] * chunks_per_row;
            if (i < total && col[u] < whole_per_row) {
                const uint4 *s = (const uint4 *)(a.src + (size_t)row[u] * a.sp) + (size_t)col[u] * K::WORDS;
#pragma unroll
                for (int q = 0; q < K::WORDS; q++) v[u].q[q] = s[q];
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            unsigned i = base + u * stride;
            if (i >= total) break;
            if (col[u] < whole_per_row) {
#pragma unroll
                for (int p = 0; p < K::PIXELS; p++) point_pixel<T, C, OP, FAST>(v[u].e + p * C, k);
                uint4 *d = (uint4 *)(a.dst + (size_t)row[u] * a.dp) + (size_t)col[u] * K::WORDS;
#pragma unroll
                for (int q = 0; q < K::WORDS; q++) d[q] = v[u].q[q];
            } else {
                /* the tail: fewer than K::PIXELS pixels at the row's end */
                const T *s = tsk_row<const T>((unsigned char *)a.src, a.sp, row[u]);
                T *d = tsk_row<T>(a.dst, a.dp, row[u]);
                for (int x = whole_per_row * K::PIXELS; x < a.w; x++) {
                    T p[C];
#pragma unroll
                    for (int ch = 0; ch < C; ch++) p[ch] = s[(size_t)x * C + ch];
                    point_pixel<T, C, OP, FAST>(p, k);
#pragma unroll
                    for (int ch = 0; ch < C; ch++) d[(size_t)x * C + ch] = p[ch];
                }
            }
        }
    }
}

/* ----------------------------------------------------------- launching */

static int point_aligned16(const point_args *a)
{
    return ((uintptr_t)a->src % 16 == 0) && a->sp % 16 == 0 && ((uintptr_t)a->dst % 16 == 0) && a->dp % 16 == 0;
}

template <typename T, int C, int OP>
static void point_launch_pixel(const point_args *a, cudaStream_t s)
{
    dim3 block(32, 8);
    unsigned gy = (unsigned)((a->h + 7) / 8);
    dim3 grid((unsigned)((a->w + 31) / 32), gy < 65535 ? gy : 65535);
    point_pixel_kernel<T, C, OP><<<grid, block, 0, s>>>(*a);
}

/* Chunked versions; fall back to one thread per pixel when a row is not
 * 16-byte aligned (a tile cut from the middle of an image) or the chunk
 * count does not fit 32 bits. */
template <typename T, int C, int OP, int U, bool FAST>
static void point_launch_chunks(const point_args *a, cudaStream_t s)
{
    typedef point_chunk<T, C> K;
    unsigned long long whole = (unsigned long long)a->w / K::PIXELS;
    unsigned long long per_row = whole + (a->w % K::PIXELS != 0);
    unsigned long long total = per_row * (unsigned long long)a->h;
    if (!point_aligned16(a) || total >= (1ull << 31)) {
        point_launch_pixel<T, C, OP == POINT_MATRIX_GLOBAL ? POINT_MATRIX_CONST : OP>(a, s);
        return;
    }
    int dev = 0, sms = 132;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    unsigned long long need = (total + (unsigned long long)POINT_BLOCK * U - 1) / ((unsigned long long)POINT_BLOCK * U);
    unsigned long long full = (unsigned long long)sms * (2048 / POINT_BLOCK);  /* one resident wave */
    unsigned blocks = (unsigned)(need < full ? need : full);
    point_chunk_kernel<T, C, OP, U, FAST><<<blocks, POINT_BLOCK, 0, s>>>(*a, (unsigned)per_row, (unsigned)whole,
                                                                  (unsigned)total);
}

template <typename T, int C, int OP>
static void point_launch_version(int version, const point_args *a, cudaStream_t s)
{
    switch (version) {
    case 1: point_launch_pixel<T, C, OP>(a, s); break;
    case 2: point_launch_pixel<T, C, OP == POINT_MATRIX_GLOBAL ? POINT_MATRIX_CONST : OP>(a, s); break;
    case 3: point_launch_chunks<T, C, OP == POINT_MATRIX_GLOBAL ? POINT_MATRIX_CONST : OP, 1, false>(a, s); break;
    case 4: point_launch_chunks<T, C, OP == POINT_MATRIX_GLOBAL ? POINT_MATRIX_CONST : OP, 4, false>(a, s); break;
    default: point_launch_chunks<T, C, OP == POINT_MATRIX_GLOBAL ? POINT_MATRIX_CONST : OP, 4, true>(a, s); break;
    }
}

/* PREMUL and UNPREMUL without alpha are copies: one kernel family serves. */
template <typename T, int C>
static void point_launch_typed(tsk_kind kind, int version, const point_args *a, cudaStream_t s)
{
    if (kind == TSK_MATRIX) {
        point_launch_version<T, C, POINT_MATRIX_GLOBAL>(version, a, s);
    } else if constexpr (C == 1 || C == 3) {
        point_launch_version<T, C, POINT_COPY>(version, a, s);
    } else if (kind == TSK_PREMUL) {
        point_launch_version<T, C, POINT_PREMUL>(version, a, s);
    } else {
        point_launch_version<T, C, POINT_UNPREMUL>(version, a, s);
    }
}

template <typename T>
static void point_launch_channels(tsk_kind kind, int c, int version, const point_args *a, cudaStream_t s)
{
    switch (c) {
    case 1: point_launch_typed<T, 1>(kind, version, a, s); break;
    case 2: point_launch_typed<T, 2>(kind, version, a, s); break;
    case 3: point_launch_typed<T, 3>(kind, version, a, s); break;
    default: point_launch_typed<T, 4>(kind, version, a, s); break;
    }
}

/* --------------------------------------------------- coefficient banks */

typedef struct point_bank {
    float m[12];
    int device;
    int valid;
} point_bank;

static point_bank point_const_banks[TSK_SLOTS], point_global_banks[TSK_SLOTS];

/* Upload m into bank `slot` of the symbol on stream s, unless the bank
 * already holds it. The copy is enqueued from pageable memory, which the
 * driver stages before returning, so the host copy may change afterwards. */
static ts_status point_upload(const void *symbol, point_bank *banks, int slot, const float m[12], cudaStream_t s,
                              ts_err *err)
{
    point_bank *b = &banks[slot];
    int dev = 0;
    ts_status st = tsk_cuda_status(cudaGetDevice(&dev), "matrix: current device", err);
    if (st != TS_OK) return st;
    if (b->valid && b->device == dev && memcmp(b->m, m, sizeof b->m) == 0) return TS_OK;
    memcpy(b->m, m, sizeof b->m);
    b->device = dev;
    b->valid = 0;
    st = tsk_cuda_status(cudaMemcpyToSymbolAsync(symbol, b->m, sizeof b->m, (size_t)slot * sizeof b->m,
                                                 cudaMemcpyHostToDevice, s),
                         "matrix: coefficient upload", err);
    if (st == TS_OK) b->valid = 1;
    return st;
}

/* ------------------------------------------------------------- the family */

static const char *const point_version_names[] = {
    "v1 per pixel, global coefficients",
    "v2 per pixel, constant banks",
    "v3 grid-stride 16-byte chunks",
    "v4 grid-stride 16-byte chunks x4",
    "v5 v4 without conversion instructions",
};

static ts_status point_apply(const tsk_op *op, const ts_view *src, ts_view *dst, const tsk_launch *l, ts_err *err)
{
    const char *what = op->kind == TSK_MATRIX ? "matrix" : op->kind == TSK_PREMUL ? "premultiply" : "unpremultiply";
    int version, slot = l ? l->slot : 0;
    cudaStream_t s = l ? (cudaStream_t)l->stream : 0;
    size_t px = (size_t)dst->c * (size_t)dst->type;
    point_args a;
    ts_status st = tsk_pick_version(&tsk_family_point, l, &version, err);
    if (st != TS_OK) return st;
    if (dst->c < 1 || dst->c > 4 || (dst->type != TS_U8 && dst->type != TS_U16 && dst->type != TS_F32))
        return ts_err_set(err, TS_E_ARG, "%s: %d channels of type %d", what, dst->c, (int)dst->type);
    if (dst->x0 < src->x0 || dst->y0 < src->y0 || dst->x0 + dst->w > src->x0 + src->w ||
        dst->y0 + dst->h > src->y0 + src->h)
        return ts_err_set(err, TS_E_ARG, "%s: source region %d,%d %dx%d does not hold %d,%d %dx%d", what, src->x0,
                          src->y0, src->w, src->h, dst->x0, dst->y0, dst->w, dst->h);
    a.src = src->data + (size_t)(dst->y0 - src->y0) * src->pitch + (size_t)(dst->x0 - src->x0) * px;
    a.sp = src->pitch;
    a.dst = dst->data;
    a.dp = dst->pitch;
    a.w = dst->w;
    a.h = dst->h;
    a.slot = slot;
    if (op->kind == TSK_MATRIX) {
        st = version == 1 ? point_upload(g_point_matrix, point_global_banks, slot, op->u.matrix.m, s, err)
                          : point_upload(c_point_matrix, point_const_banks, slot, op->u.matrix.m, s, err);
        if (st != TS_OK) return st;
    }
    switch (dst->type) {
    case TS_U8: point_launch_channels<uint8_t>(op->kind, dst->c, version, &a, s); break;
    case TS_U16: point_launch_channels<uint16_t>(op->kind, dst->c, version, &a, s); break;
    default: point_launch_channels<float>(op->kind, dst->c, version, &a, s); break;
    }
    return TSK_LAUNCH_CHECK(what, err);
}

extern "C" const tsk_family tsk_family_point = {
    "point",
    point_version_names,
    (int)(sizeof point_version_names / sizeof point_version_names[0]),
    5,
    point_apply,
};
