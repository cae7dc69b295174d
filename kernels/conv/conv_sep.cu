/* conv_sep.cu - TSK_CONV_SEP on the GPU: separable convolution (gauss, box,
 * and sharpen as an unsharp mask). tsk.h gives the maths; ref_conv.c is
 * the oracle:
 *
 *   t(x,y) = sum_j ky[j] * sum_i kx[i] * p(x + i - rx, y + j - ry)
 *   out    = center_w * p(x,y) + conv_w * t(x,y)
 *
 * Per output pixel, for each row j a row sum over i in float, added times
 * ky[j] in index order. The row sum of image row y' at column x does not
 * depend on the output row, so every version computes it once per (x, y')
 * and sums columns of row sums: the same numbers in the same order.
 *
 * Versions, as in llm.c's dev/cuda (tsk_launch.version picks one):
 *   v1  two passes through a float buffer in global memory: a kernel of row
 *       sums, then a kernel of column sums; one thread per channel value,
 *       taps read from global memory.
 *   v2  v1 with the taps in a __constant__ bank.
 *   v3  fused: a block loads its input tile and halo into shared memory
 *       once, writes the row sums into a second padded shared tile, then
 *       sums columns; one output pixel per thread at a time.
 *   v4  v3 with K pixels per thread (each value loaded from shared memory
 *       feeds K outputs from registers), one vector load or store per pixel,
 *       integer conversions without the conversion unit, and fused
 *       multiply-add (see conv_common.cuh: +-1 on integers).
 *   v5  v4 with the reference's separate multiply and add: bit-exact.
 *   v6  v4 with tiles twice as tall (less halo, fewer blocks per SM).
 *   v7  v4 with 2K pixels per thread and tiles 8K rows tall (fewer shared
 *       memory loads per output, more registers).
 *   v8  column walk (conv_common.cuh): a block walks down a strip 256
 *       pixels wide and 128 rows tall; each input row is loaded once (4
 *       bytes per thread, coalesced, 3..13 rows in flight), converted once
 *       into channel planes in shared memory; a thread makes the row sums
 *       of one channel of 4 pixels from 16-byte shared loads and keeps the
 *       last N row sums in registers, so the vertical pass touches no
 *       shared memory; fma, +-1 on integers. Only RGBA8 gauss and box
 *       (centre weight 0, conv weight 1, no alpha pass-through) with
 *       nx = ny = N in 3..15 odd, a constant border value a whole number
 *       in 0..255; everything else runs v4.
 *   v9  warp walk (conv_common.cuh): v8's sums in v8's order, but each
 *       warp walks its own strip 120 pixels wide with no shared memory and
 *       no barrier: a lane loads 4 whole pixels per row (16 bytes), keeps
 *       all 16 channel values and the ring of N row sums for them in
 *       registers, and takes the horizontal halo from its neighbours by
 *       shuffles; 16-byte stores. The ops v8 takes with N = 3 or 5; other
 *       N run v8 (the ring would not fit in registers).
 *   v10 v9 with 2 pixels a lane (8-byte loads and stores, strips 60 wide):
 *       half the ring's registers, so more warps an SM to hide latency,
 *       for twice the shuffles per pixel. The same sums: v9's bytes.
 *   v11 v10, lean (conv_common.cuh, ww_walk): inside the image the row
 *       addresses are stepped by the pitch, not mapped through the border
 *       and multiplied out per row. v10's bytes.
 *   v12 v11 in a grid of one wave, each strip as tall as that makes it
 *       (less halo, no partial last wave, but idle SMs at the end). v10's
 *       bytes.
 *   v13 the row and column sums as matrix products on the tensor cores
 *       (sep_mma.cuh): taps and row sums rounded to half, sums in float,
 *       within 1 of the reference as the fma versions. RGBA8 gauss and box
 *       with N x N taps, N <= 15, absolute tap sums at most 1, compute
 *       capability 8.0 on; everything else runs as v11.
 *   v14 v13 from 7 taps on, v11 below: each where it is the faster.
 *   v15 v13 with the tiles copied raw into shared memory by cp.async (no
 *       registers hold the next tile, no conversion pass), three blocks an
 *       SM, and output slots ordered for one 8-byte store per lane and row
 *       (sep_mma.cuh). v13's sums in v13's order: its bytes.
 *   v16 v15 at four blocks an SM (64 registers, a few bytes spilled).
 *   v17 v15 from 7 taps on, v11 below.
 *   v18 v15 with a leaner output where an orientation (and a matrix) is
 *       fused after it: the destination's byte steps per column and row
 *       worked out once, one address a lane; the matrix applied to the
 *       rounded values, not to bytes packed and unpacked; no per-pixel
 *       region checks in tiles wholly inside. v15's bytes. Alone, v15.
 *   v19 v18 from 7 taps on, v11 below.
 *   v20 v19, except that 3 and 5 taps without an orientation after run as
 *       2-D v12 (c2d_mma.cuh) on the outer product of the taps.
 *   v21 v18 with tiles of 64 rows, not 32 (80 input rows in place of 48):
 *       half the barriers and tile walks a pixel, and 1.25 input rows an
 *       output row in place of 1.5; the edge tiles' input copied by
 *       cp.async too, and the plain output of a tile wholly inside the
 *       region stored with one address a lane, unchecked (sep_mma.cuh,
 *       the profile in docs/PERFORMANCE.md). Each output column and row
 *       takes the same taps in the same k16 steps as in v15: its bytes.
 *   v22 v21 from 7 taps on, v11 below.
 *   v23 v21 with each input byte as the exact half byte * 2^-24 (a
 *       subnormal), the row taps scaled by 2^15 and the column taps by 2^9:
 *       no accumulator starts at the -1024 * (sum of the taps) offset, so
 *       no register moves put it there (sep_mma.cuh). Other float
 *       roundings than v15's: within 1 of the reference, not v15's bytes.
 * v1, v2, v3 and v5 are bit-identical to tsk_ref_apply.
 *
 * v3..v7 fall back to v2 when their tile does not fit in shared memory
 * (only for the longest kernels on devices with little of it), and v4..v7
 * to v3 when a view is not aligned to its pixel size.
 *
 * Why the versions are what they are, with the cost model, the
 * predictions and the measured times of each: docs/PERFORMANCE.md
 * ("Separable convolution"). */
#include "conv_common.cuh"
#include "point/matrix_pixel.cuh"

#include <cuda_fp16.h>
#include <limits.h>
#include <stdlib.h>

/* Taps of one slot; unused taps are zero so that equal banks compare equal. */
struct sep_bank {
    float kx[TSK_MAX_SEP_TAPS];
    float ky[TSK_MAX_SEP_TAPS];
};

__constant__ sep_bank c_sep_bank[TSK_SLOTS];
__device__ sep_bank g_sep_bank[TSK_SLOTS];  /* v1: the same taps in global memory */

enum { SEP_MATRIX_PLAIN = 2 };

/* An orientation (and matrix) written with the convolution's output
 * (tsk.h, u.sep.then; only v13 and v15 take it): output pixel (x, y) of the
 * convolution, in the image's coordinates, goes to byte (y' dp + 4 x') of
 * the destination with x' = a x + b y + e, y' = c x + d y + f (the
 * destination region's origin folded into e and f). */
struct sep_then {
    int on;
    int a, b, e, c, d, f;
    int matrix;   /* 0 none, 1 a matrix, SEP_MATRIX_PLAIN one that matrix_is_plain */
    float k[12];  /* matrix_coef's k: m with m[4i+3] * 255 */
    /* v18: the same map as byte steps, pixel (x, y) at byte base + x sx +
     * y sy of the destination; steps = 0 where they do not fit an int */
    int steps, sx, sy;
    long long base;
};

struct sep_args {
    conv_io io;   /* with an orientation after: the region and image of the convolution's output */
    int slot;
    int nx, ny;
    float cw, kw;  /* center_w, conv_w */
    sep_then then;
};

/* The versions, row v - 1 for version v (conv_version in conv_common.cuh):
 * name, how it runs, fused multiply-add, fast loads and stores, outputs per
 * thread in units of K or (warp walk) pixels a lane, tile rows (v7: 8 per
 * output of a thread, 16 K). */
static constexpr conv_version sep_versions[] = {
    { "v1 naive two-pass global, taps in global memory", CONV_NAIVE_GLOBAL, false, false, 0, 0, 0, false, false, 0, 0 },
    { "v2 two-pass global, taps in constant memory", CONV_NAIVE_CONST, false, false, 0, 0, 0, false, false, 0, 0 },
    { "v3 fused smem tile + padded row sums, 1 px/thread", CONV_TILED, false, false, 0, 32, 0, false, false, 0, 0 },
    { "v4 fused smem tile, K px/thread in registers, vector io, fma", CONV_TILED, true, true, 1, 32, 0, false, false, 0, 0 },
    { "v5 v4 with exact mul+add (bit-exact)", CONV_TILED, false, true, 1, 32, 0, false, false, 0, 0 },
    { "v6 v4 with 64-row tiles", CONV_TILED, true, true, 1, 64, 0, false, false, 0, 0 },
    { "v7 v4 with 2K px/thread, 8K-row tiles", CONV_TILED, true, true, 2, 0, 0, false, false, 0, 0 },
    { "v8 column walk, rows in registers, fma (RGBA8 NxN gauss/box, else v4)", CONV_WALK, true, true, 0, 0, 0, false, false, 0, 0 },
    { "v9 warp walk, no smem/barriers, fma (RGBA8 NxN gauss/box N<=5, else v8)", CONV_WARP, true, true, 0, 0, 4, false, false, 0, 0 },
    { "v10 v9 with 2 px/lane: half the ring, more warps (else v8)", CONV_WARP, true, true, 0, 0, 2, false, false, 0, 0 },
    { "v11 v10 with row addresses stepped inside the image (else v8)", CONV_WARP, true, true, 0, 0, 2, true, false, 0, 0 },
    { "v12 v11 in one wave of tall strips (else v8)", CONV_WARP, true, true, 0, 0, 2, true, true, 0, 0 },
    { "v13 tensor cores, half taps, float sums (RGBA8 NxN gauss/box N<=15, else as v11)", CONV_WARP, true, true, 0, 0, 2, true, false, 3, 0 },
    { "v14 v13 from 7 taps on, v11 below (else v8)", CONV_WARP, true, true, 0, 0, 2, true, false, 7, 0 },
    { "v15 v13 with raw tiles by cp.async, 3 blocks/SM, 8-byte stores (else as v11)", CONV_WARP, true, true, 0, 0, 2, true, false, 3, 3 },
    { "v16 v15 at 4 blocks/SM (else as v11)", CONV_WARP, true, true, 0, 0, 2, true, false, 3, 4 },
    { "v17 v15 from 7 taps on, v11 below (else v8)", CONV_WARP, true, true, 0, 0, 2, true, false, 7, 3 },
    { "v18 v15 with a lean fused orientation (else as v11)", CONV_WARP, true, true, 0, 0, 2, true, false, 3, 3, true },
    { "v19 v18 from 7 taps on, v11 below (else v8)", CONV_WARP, true, true, 0, 0, 2, true, false, 7, 3, true },
    { "v20 v19, with 3 and 5 taps as 2-D v12 on the taps' outer product (else v8)", CONV_WARP, true, true, 0, 0, 2, true, false, 7, 3, true, true },
    { "v21 v18 with 64-row tiles, async edges, lean output (else as v11)", CONV_WARP, true, true, 0, 0, 2, true, false, 3, 3, true, false, 4 },
    { "v22 v21 from 7 taps on, v11 below (else v8)", CONV_WARP, true, true, 0, 0, 2, true, false, 7, 3, true, false, 4 },
    { "v23 v21 with exact small inputs, no offset (else as v11)", CONV_WARP, true, true, 0, 0, 2, true, false, 3, 3, true, false, 4, true },
};

/* out = center_w * p + conv_w * t, one channel. */
template <bool FMA>
static __device__ __forceinline__ float sep_out(float cw, float kw, float p, float t)
{
    return FMA ? fmaf(cw, p, __fmul_rn(kw, t)) : __fadd_rn(__fmul_rn(cw, p), __fmul_rn(kw, t));
}

template <bool CONST_TAPS>
static __device__ __forceinline__ const float *sep_kx(int slot)
{
    return CONST_TAPS ? c_sep_bank[slot].kx : g_sep_bank[slot].kx;
}
template <bool CONST_TAPS>
static __device__ __forceinline__ const float *sep_ky(int slot)
{
    return CONST_TAPS ? c_sep_bank[slot].ky : g_sep_bank[slot].ky;
}

/* ---------------------------------------------------- v1, v2: two passes */

/* Row sums: tmp[r][e] for image row dy0 - ry + r and channel value e of
 * the dst row (e = x * c + ch), r = 0 .. dh + 2 ry - 1. */
template <typename T, bool CONST_TAPS>
__global__ void sep_rows_naive(sep_args a, float *tmp)
{
    const conv_io &io = a.io;
    const int ew = io.dw * io.c, rows = io.dh + a.ny - 1, rx = (a.nx - 1) / 2, ry = (a.ny - 1) / 2;
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= ew) return;
    const int x = io.dx0 + e / io.c, ch = e % io.c;
    const float *kx = sep_kx<CONST_TAPS>(a.slot);
    for (int r = blockIdx.y; r < rows; r += gridDim.y) {
        const int gy = io.dy0 - ry + r;
        float s = 0.0f;
        for (int i = 0; i < a.nx; i++) s = conv_mac<false>(kx[i], conv_read<T>(io, x + i - rx, gy, ch), s);
        tmp[(size_t)r * ew + e] = s;
    }
}

/* Column sums of the row sums, then the centre term. */
template <typename T, bool CONST_TAPS>
__global__ void sep_cols_naive(sep_args a, const float *tmp)
{
    const conv_io &io = a.io;
    const int ew = io.dw * io.c;
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= ew) return;
    const int x = io.dx0 + e / io.c, ch = e % io.c;
    const float *ky = sep_ky<CONST_TAPS>(a.slot);
    for (int y = blockIdx.y; y < io.dh; y += gridDim.y) {
        float t = 0.0f;
        for (int j = 0; j < a.ny; j++) t = conv_mac<false>(ky[j], tmp[(size_t)(y + j) * ew + e], t);
        const float p = conv_read<T>(io, x, io.dy0 + y, ch);
        const float o = io.alpha && ch == io.c - 1 ? p : sep_out<false>(a.cw, a.kw, p, t);
        T *row = (T *)(io.dst + (size_t)y * io.dp);
        row[e] = tsk_px<T>::store(o);
    }
}

template <typename T, bool CONST_TAPS>
static ts_status sep_two_pass(const sep_args &a, cudaStream_t s, ts_err *err)
{
    const int ew = a.io.dw * a.io.c, rows = a.io.dh + a.ny - 1;
    const dim3 block(256);
    float *tmp = NULL;
    cudaError_t e = cudaMallocAsync((void **)&tmp, (size_t)rows * (size_t)ew * sizeof(float), s);
    if (e != cudaSuccess) return tsk_cuda_status(e, "separable convolution: row-sum buffer", err);
    sep_rows_naive<T, CONST_TAPS><<<dim3((ew + 255) / 256, rows < 65535 ? rows : 65535), block, 0, s>>>(a, tmp);
    ts_status st = TSK_LAUNCH_CHECK("separable convolution: row pass", err);
    if (st == TS_OK) {
        const int h = a.io.dh;
        sep_cols_naive<T, CONST_TAPS><<<dim3((ew + 255) / 256, h < 65535 ? h : 65535), block, 0, s>>>(a, tmp);
        st = TSK_LAUNCH_CHECK("separable convolution: column pass", err);
    }
    e = cudaFreeAsync(tmp, s);
    if (st == TS_OK && e != cudaSuccess) st = tsk_cuda_status(e, "separable convolution: row-sum buffer", err);
    return st;
}

/* --------------------------------------------------- v3..v6: fused tiles
 * One block: load the input tile into S; row sums of all ih tile rows for
 * the tw output columns into R (K consecutive columns per thread, threads
 * on consecutive rows: conflict-free by R's and S's padding); then column
 * sums down K consecutive rows per thread, threads on consecutive columns
 * (conflict-free, and coalesced writes). */
template <typename T, int C, int K, bool FMA, bool FAST>
__global__ void __launch_bounds__(CONV_THREADS) sep_fused(sep_args a, conv_tile g)
{
    extern __shared__ float4 conv_smem[];
    float *S = (float *)conv_smem, *R = S + g.off_r;
    const conv_io &io = a.io;
    const int rx = (a.nx - 1) / 2, ry = (a.ny - 1) / 2;
    const int ox0 = io.dx0 + (int)blockIdx.x * g.tw, oy0 = io.dy0 + (int)blockIdx.y * g.th;
    const int vw = min(g.tw, io.dx0 + io.dw - ox0), vh = min(g.th, io.dy0 + io.dh - oy0);

    conv_load_tile<T, C, FAST>(io, S, g, ox0 - rx, oy0 - ry, vw + 2 * rx, vh + 2 * ry);
    __syncthreads();

    const float *kx = c_sep_bank[a.slot].kx;
    const int groups = g.tw / K;
    for (int t = threadIdx.x; t < g.ih * groups; t += blockDim.x) {
        const int q = (int)__umulhi((unsigned)t, g.ih_magic), r = t - q * g.ih;
        vecf<C> acc[K];
#pragma unroll
        for (int k = 0; k < K; k++) acc[k] = vfill<C>(0.0f);
        conv_run<C, K, FMA, false>(S + r * g.pitch_s + q * K * C, C, a.nx, kx, kx, acc, acc);
#pragma unroll
        for (int k = 0; k < K; k++) sts_px<C>(R + r * g.pitch_r + (q * K + k) * C, acc[k]);
    }
    __syncthreads();

    /* gauss and box (centre weight 0, conv weight 1) skip the centre term in
     * the fused versions: fmaf(0, p, t) is t for every finite p. */
    const bool plain = FMA && a.cw == 0.0f && a.kw == 1.0f && !io.alpha;
    const float *ky = c_sep_bank[a.slot].ky;
    for (int t = threadIdx.x; t < g.tw * (g.th / K); t += blockDim.x) {
        const int q = t >> g.tw_log2, ox = t & (g.tw - 1);
        if (ox >= vw || q * K >= vh) continue;
        vecf<C> acc[K];
#pragma unroll
        for (int k = 0; k < K; k++) acc[k] = vfill<C>(0.0f);
        conv_run<C, K, FMA, false>(R + q * K * g.pitch_r + ox * C, g.pitch_r, a.ny, ky, ky, acc, acc);
#pragma unroll
        for (int k = 0; k < K; k++) {
            const int y = q * K + k;
            if (y >= vh) break;
            vecf<C> o = acc[k];
            if (!plain) {
                const vecf<C> p = lds_px<C>(S + (y + ry) * g.pitch_s + (ox + rx) * C);
#pragma unroll
                for (int ch = 0; ch < C; ch++) o.v[ch] = sep_out<FMA>(a.cw, a.kw, p.v[ch], acc[k].v[ch]);
                if (io.alpha) o.v[C - 1] = p.v[C - 1];
            }
            conv_stg<T, C, FAST>(io.dst + (size_t)(oy0 + y - io.dy0) * io.dp, ox0 + ox - io.dx0, o);
        }
    }
}

/* Tile of tw x th outputs (th halved until it fits); 0 when none fits. */
static int sep_tile(conv_tile *g, int c, int k, int tw, int th, int rx, int ry, size_t limit)
{
    for (; th >= k && th >= 8; th /= 2) {
        conv_tile_shape(g, c, tw, th, rx, ry);
        g->pitch_r = conv_pad_floats(tw * c, c);
        g->off_r = (g->ih * g->pitch_s + 3) & ~3;  /* 16-byte aligned */
        g->smem = sizeof(float) * ((size_t)g->off_r + (size_t)g->ih * (size_t)g->pitch_r);
        if (g->smem <= limit) return 1;
    }
    return 0;
}

template <typename T, int C, int K, bool FMA, bool FAST>
static ts_status sep_fused_go(const sep_args &a, int th, cudaStream_t s, ts_err *err)
{
    conv_tile g;
    if (!sep_tile(&g, C, K, 32, th, (a.nx - 1) / 2, (a.ny - 1) / 2, conv_smem_limit()))
        return sep_two_pass<T, true>(a, s, err);
    return conv_launch_tiled(sep_fused<T, C, K, FMA, FAST>, a, g, s, "separable convolution", err);
}

/* ------------------------------------------------ v8: column walk, RGBA8
 * conv_common.cuh's column walk. Per row a thread makes the row sums of
 * channel c of its four pixels from the planes (kx pre-scaled by 1/255)
 * into slot s of a ring of N rows in registers; from row N - 1 on, the
 * column sum of the ring (oldest first: the reference's order) is output
 * row r - (N - 1). Gauss and box only (centre weight 0, conv weight 1, no
 * alpha pass-through), nx = ny = N. */
template <int N>
struct sep_walk_taps {
    float kx[N], ky[N];
};

template <int N, int D>
__global__ void __launch_bounds__(CW_THREADS, N <= 5 ? 4 : N <= 7 ? 3 : 2) sep_walk(conv_io io, sep_walk_taps<N> k, uint32_t border_px)
{
    constexpr int R = (N - 1) / 2, R4 = cw_r4(R);
    const int t = threadIdx.x;
    const int ox0 = io.dx0 + (int)blockIdx.x * CW_THREADS, oy0 = io.dy0 + (int)blockIdx.y * CW_ROWS;
    const int vw = min(CW_THREADS, io.dx0 + io.dw - ox0), vh = min(CW_ROWS, io.dy0 + io.dh - oy0);
    uint32_t sel[4];
    cw_transpose_sel(t & 3, sel);
    float h[N][4];
    cw_walk<N, D, R, R>(io, border_px, ox0, oy0, vw, vh + 2 * R, [&](int s, int r, const float(&v)[4 * (1 + R4 / 2)]) {
#pragma unroll
        for (int p = 0; p < 4; p++) {
            float a = 0.0f;
#pragma unroll
            for (int i = 0; i < N; i++) a = fmaf(k.kx[i], v[p + i + R4 - R], a);
            h[s][p] = a;
        }
        if (r >= N - 1) {
            float y[4];
#pragma unroll
            for (int p = 0; p < 4; p++) {
                float a = 0.0f;
#pragma unroll
                for (int j = 0; j < N - 1; j++) a = fmaf(k.ky[j], h[(s + 1 + j) % N][p], a);
                y[p] = __saturatef(fmaf(k.ky[N - 1], h[s][p], a));
            }
            cw_store(io, oy0 + r - (N - 1), ox0, t, vw, y, sel);
        }
    });
}

template <int N, int D>
static ts_status sep_walk_go(const sep_args &a, const tsk_op *op, uint32_t border_px, cudaStream_t s, ts_err *err)
{
    sep_walk_taps<N> k;
    for (int i = 0; i < N; i++) {
        k.kx[i] = op->u.sep.kx[i] / 255.0f;
        k.ky[i] = op->u.sep.ky[i];
    }
    sep_walk<N, D><<<cw_grid(a.io), CW_THREADS, 0, s>>>(a.io, k, border_px);
    return TSK_LAUNCH_CHECK("separable convolution (column walk)", err);
}

/* v8 for the RGBA8 views conv_walk lets through, when it takes the op
 * (gauss or box: centre weight 0, conv weight 1; nx = ny in 3..15): *done
 * = 1 and the status; otherwise *done stays 0 and the caller runs v4. */
static ts_status sep_walk_version(const sep_args &a, const tsk_op *op, uint32_t border_px, cudaStream_t s, int *done,
                                  ts_err *err)
{
    if (a.cw != 0.0f || a.kw != 1.0f || a.nx != a.ny)
        return TS_OK;
    *done = 1;
    switch (a.nx) {
    case 3: return sep_walk_go<3, 3>(a, op, border_px, s, err);
    case 5: return sep_walk_go<5, 5>(a, op, border_px, s, err);
    case 7: return sep_walk_go<7, 7>(a, op, border_px, s, err);
    case 9: return sep_walk_go<9, 9>(a, op, border_px, s, err);
    case 11: return sep_walk_go<11, 11>(a, op, border_px, s, err);
    case 13: return sep_walk_go<13, 13>(a, op, border_px, s, err);
    case 15: return sep_walk_go<15, 5>(a, op, border_px, s, err);
    default: *done = 0; return TS_OK;
    }
}

/* ------------------------------------------ v13: tensor cores, RGBA8 */
#include "sep_mma.cuh"
#include "c2d_mma.cuh"

/* ------------------------------------------- v9, v10: warp walk, RGBA8
 * conv_common.cuh's warp walk, P pixels a lane (v9 4, v10 2). Per row a
 * lane makes the row sums of its P pixels x 4 channels from the window (kx
 * pre-scaled by 1/255) into slot s of a ring of N rows in registers; from
 * row N - 1 on, the column sum of the ring (oldest first: the reference's
 * order) is output row r - (N - 1). The same sums as v8, in the same
 * order; gauss and box only, nx = ny = N <= 5 (the ring is 4 P N
 * registers). v10's ring is half v9's, so it asks for 6 blocks an SM. */
template <int N, int D, int P, bool LEAN>
__global__ void __launch_bounds__(WW_THREADS, P == 2 ? 6 : N <= 3 ? 4 : 3)
    sep_warp(conv_io io, sep_walk_taps<N> k, uint32_t border_px, unsigned align, int strip_rows)
{
    constexpr int R = (N - 1) / 2;
    const ww_strip t = ww_strip_of<P>(io, strip_rows);
    if (t.vw <= 0) return;  /* the whole warp */
    float h[N][P][4];
    ww_walk<N, D, R, P, LEAN>(io, border_px, align, t.x0, t.y0, t.vw, t.vh + 2 * R,
                              [&](int s, int r, const float(&win)[P + 2 * R][4], unsigned char *out) {
#pragma unroll
        for (int p = 0; p < P; p++)
#pragma unroll
            for (int c = 0; c < 4; c++) {
                float a = 0.0f;
#pragma unroll
                for (int i = 0; i < N; i++) a = fmaf(k.kx[i], win[p + i][c], a);
                h[s][p][c] = a;
            }
        if (r >= N - 1) {
            float y[P][4];
#pragma unroll
            for (int p = 0; p < P; p++)
#pragma unroll
                for (int c = 0; c < 4; c++) {
                    float a = 0.0f;
#pragma unroll
                    for (int j = 0; j < N - 1; j++) a = fmaf(k.ky[j], h[(s + 1 + j) % N][p][c], a);
                    y[p][c] = __saturatef(fmaf(k.ky[N - 1], h[s][p][c], a));
                }
            ww_store<P>(io, out, t.x0, t.vw, align, y);
        }
    });
}

template <int N, int D, int P, bool LEAN>
static ts_status sep_warp_go(const sep_args &a, const tsk_op *op, uint32_t border_px, bool wave, cudaStream_t s,
                             ts_err *err)
{
    sep_walk_taps<N> k;
    for (int i = 0; i < N; i++) {
        k.kx[i] = op->u.sep.kx[i] / 255.0f;
        k.ky[i] = op->u.sep.ky[i];
    }
    const int rows = wave ? ww_wave_rows<P>(a.io, ww_blocks_per_sm<sep_warp<N, D, P, LEAN>>()) : WW_ROWS;
    sep_warp<N, D, P, LEAN><<<ww_grid<P>(a.io, rows), WW_THREADS, 0, s>>>(a.io, k, border_px, ww_align(a.io), rows);
    return TSK_LAUNCH_CHECK("separable convolution (warp walk)", err);
}

/* The warp walk of N taps as version v's row says: v9 (4 pixels a
 * lane), v10 (2), v11 (2, lean) or v12 (2, lean, one wave). */
template <int N>
static ts_status sep_warp_of(const sep_args &a, const tsk_op *op, uint32_t border_px, const conv_version &v,
                             cudaStream_t s, ts_err *err)
{
    if (v.lane_px == 4) return sep_warp_go<N, N, 4, false>(a, op, border_px, v.wave, s, err);
    return v.lean ? sep_warp_go<N, N, 2, true>(a, op, border_px, v.wave, s, err)
                  : sep_warp_go<N, N, 2, false>(a, op, border_px, v.wave, s, err);
}

/* v9..v12 for the RGBA8 views conv_walk lets through, when it
 * takes the op (gauss or box: centre weight 0, conv weight 1; nx = ny in
 * 3..5): *done = 1 and the status; otherwise *done stays 0 and the caller
 * tries v8. */
static ts_status sep_warp_version(const sep_args &a, const tsk_op *op, uint32_t border_px, const conv_version &v,
                                  cudaStream_t s, int *done, ts_err *err)
{
    if (a.cw != 0.0f || a.kw != 1.0f || a.nx != a.ny)
        return TS_OK;
    if (v.mma && a.nx >= v.mma) {
        const ts_status st = sep_mma_version(a, op, border_px, v, s, done, err);
        if (*done) return st;
    }
    if (v.outer && !a.then.on && (a.nx == 3 || a.nx == 5) && sep_mma_takes(a, op)) {
        /* sum |ky[j] kx[i]| = (sum |ky|)(sum |kx|) <= 1: within 2-D v12's bound */
        float k2[25];
        for (int j = 0; j < a.nx; j++)
            for (int i = 0; i < a.nx; i++) k2[j * a.nx + i] = op->u.sep.ky[j] * op->u.sep.kx[i];
        *done = 1;
        return a.nx == 3 ? c2d_mma_run<3>(a.io, k2, 0.0f, false, 12, border_px, s, err)
                         : c2d_mma_run<5>(a.io, k2, 0.0f, false, 12, border_px, s, err);
    }
    if (a.then.on) return TS_OK;  /* only the tensor-core versions write an orientation after */
    *done = 1;
    switch (a.nx) {
    case 3: return sep_warp_of<3>(a, op, border_px, v, s, err);
    case 5: return sep_warp_of<5>(a, op, border_px, v, s, err);
    default: *done = 0; return TS_OK;
    }
}

/* ------------------------------------------------------------- launcher */

static ts_status sep_upload(const tsk_op *op, int slot, cudaStream_t s, ts_err *err)
{
    sep_bank b;
    memset(&b, 0, sizeof b);
    memcpy(b.kx, op->u.sep.kx, sizeof(float) * (size_t)op->u.sep.nx);
    memcpy(b.ky, op->u.sep.ky, sizeof(float) * (size_t)op->u.sep.ny);
    return conv_upload_bank(c_sep_bank, g_sep_bank, b, slot, s, "separable convolution", err);
}

static ts_status sep_check(const tsk_op *op, ts_err *err)
{
    const char *what = "separable convolution";
    const int nx = op->u.sep.nx, ny = op->u.sep.ny;
    if (nx < 1 || ny < 1 || nx > TSK_MAX_SEP_TAPS || ny > TSK_MAX_SEP_TAPS || nx % 2 == 0 || ny % 2 == 0)
        return ts_err_set(err, TS_E_ARG, "%s: %dx%d taps (odd, at most %d)", what, nx, ny, TSK_MAX_SEP_TAPS);
    return TS_OK;
}

/* The orientation's forward map, input (x, y) of a W x H image to output
 * (x', y'): tsk.h's table of output-to-input maps, inverted. */
static sep_then sep_then_of(const tsk_orient &o, int W, int H, int ox0, int oy0)
{
    static const int map[9][6] = {
        /* a   b   e: 0, 1 W-1, 2 H-1 (ec)   c   d   f likewise (fc) */
        { 1, 0, 0, 0, 1, 0 },   { 1, 0, 0, 0, 1, 0 },  { -1, 0, 1, 0, 1, 0 },
        { -1, 0, 1, 0, -1, 2 }, { 1, 0, 0, 0, -1, 2 }, { 0, 1, 0, 1, 0, 0 },
        { 0, -1, 2, 1, 0, 0 },  { 0, -1, 2, -1, 0, 1 }, { 0, 1, 0, -1, 0, 1 },
    };
    const int *m = map[o.code >= 0 && o.code <= 8 ? o.code : 0];
    const int off[3] = { 0, W - 1, H - 1 };
    sep_then t;
    memset(&t, 0, sizeof t);
    t.on = o.code != 0;
    t.a = m[0]; t.b = m[1]; t.e = off[m[2]] - ox0;
    t.c = m[3]; t.d = m[4]; t.f = off[m[5]] - oy0;
    t.matrix = o.matrix ? (matrix_is_plain(o.m) ? SEP_MATRIX_PLAIN : 1) : 0;
    for (int i = 0; i < 12; i++) t.k[i] = o.m[i];
    for (int i = 0; i < 3; i++) t.k[4 * i + 3] = o.m[4 * i + 3] * 255.0f;  /* one rounding, as matrix_coef's */
    return t;
}

static sep_args sep_args_of(const tsk_op *op, const ts_view *src, ts_view *dst, int slot)
{
    sep_args a;
    ts_view mid = *dst;  /* the convolution's output: dst, or what the orientation after it reads */
    tsk_op conv, orient;
    if (tsk_split_then(op, &conv, &orient)) {
        const ts_rect out = { dst->x0, dst->y0, dst->w, dst->h };
        const ts_rect r = tsk_need(&orient, src->full_w, src->full_h, out);
        mid.x0 = r.x0; mid.y0 = r.y0; mid.w = r.w; mid.h = r.h;
        mid.full_w = src->full_w;
        mid.full_h = src->full_h;
    }
    a.io = conv_io_of(src, &mid, (int)op->u.sep.border, op->u.sep.border_value, op->alpha_passthrough);
    a.then = sep_then_of(op->u.sep.then, src->full_w, src->full_h, dst->x0, dst->y0);
    const long long dp = (long long)a.io.dp, sx = 4LL * a.then.a + dp * a.then.c, sy = 4LL * a.then.b + dp * a.then.d;
    a.then.steps = a.then.on && llabs(sx) <= INT_MAX / 16 && llabs(sy) <= INT_MAX / 16;
    a.then.sx = a.then.steps ? (int)sx : 0;
    a.then.sy = a.then.steps ? (int)sy : 0;
    a.then.base = 4LL * a.then.e + dp * a.then.f;
    a.slot = slot;
    a.nx = op->u.sep.nx;
    a.ny = op->u.sep.ny;
    a.cw = op->u.sep.center_w;
    a.kw = op->u.sep.conv_w;
    return a;
}

/* The family for conv_apply (conv_common.cuh). */
struct sep_family {
    typedef sep_args args;
    static constexpr const char *what = "separable convolution";
    static constexpr const conv_version *versions = sep_versions;
    static constexpr int count = (int)(sizeof sep_versions / sizeof sep_versions[0]);
    /* the fastest at 5 and 15 taps and in the fused chain on the H200
     * (docs/PERFORMANCE.md, "Separable convolution"): the tensor cores
     * (v21's 64-row tiles with v23's exact small inputs, v18's output where
     * an orientation is fused after it) wherever they take the op, the
     * lean warp walk where they do not; cases neither takes run v8, then v4 */
    static constexpr int default_version = 23;
    static constexpr const tsk_family *family = &tsk_family_conv_sep;
    static constexpr auto check = sep_check;
    static constexpr auto upload = sep_upload;
    static constexpr auto args_of = sep_args_of;
    template <typename T, bool CONST_TAPS> static constexpr auto naive = sep_two_pass<T, CONST_TAPS>;
    template <typename T, int C, int K, bool FMA, bool FAST>
    static constexpr auto tiled = sep_fused_go<T, C, K, FMA, FAST>;
    static constexpr auto walk = sep_walk_version;
    static constexpr auto warp = sep_warp_version;
};

extern "C" const tsk_family tsk_family_conv_sep = conv_family<sep_family>();

extern "C" int tsk_gpu_sep_fuses(const tsk_op *op, int c, ts_type t)
{
    /* conv_walk's and sep_warp_version's conditions for the default
     * version, on an op that has no orientation after it yet */
    const conv_version &v = sep_versions[sep_family::default_version - 1];
    if (op->kind != TSK_CONV_SEP || t != TS_U8 || c != 4 || op->alpha_passthrough || v.path != CONV_WARP || !v.mma)
        return 0;
    sep_args a;
    memset(&a, 0, sizeof a);
    a.nx = op->u.sep.nx;
    a.ny = op->u.sep.ny;
    a.cw = op->u.sep.center_w;
    a.kw = op->u.sep.conv_w;
    a.io.border = (int)op->u.sep.border;
    a.io.bv = op->u.sep.border_value;
    uint32_t border_px;
    if (!cw_border_px(a.io, &border_px) || a.cw != 0.0f || a.kw != 1.0f || a.nx < v.mma) return 0;
    return sep_mma_takes(a, op) ? 1 : 0;
}
