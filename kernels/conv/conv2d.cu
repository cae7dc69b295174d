/* conv2d.cu - TSK_CONV_2D on the GPU: 2-D convolution up to 15x15 (conv,
 * emboss, sobel). tsk.h gives the maths; ref_conv.c is the oracle:
 *
 *   s = sum_{j,i} k[j*kw + i] * p(x + i - kw/2, y + j - kh/2)   (j outer)
 *   LINEAR: bias*max + s    ABS: |s|    MAG: sqrt(s*s + s2*s2), s2 with k2
 *
 * Versions, as in llm.c's dev/cuda (tsk_launch.version picks one):
 *   v1  one thread per channel value, every tap read from global memory
 *       through the border mode, taps in global memory.
 *   v2  v1 with the taps in a __constant__ bank.
 *   v3  a block loads its input tile and halo into padded shared memory
 *       once; one output pixel per thread at a time.
 *   v4  v3 with K pixels of a row per thread (each value loaded from shared
 *       memory feeds K outputs from registers), results staged in shared
 *       memory and written by consecutive threads (coalesced), one vector
 *       load or store per pixel, integer conversions without the conversion
 *       unit, fused multiply-add (see conv_common.cuh: +-1 on integers).
 *   v5  v4 with the reference's separate multiply and add: bit-exact.
 *   v6  v4 with 2K pixels per thread (fewer shared-memory loads per output,
 *       more registers).
 *   v7  column walk (conv_common.cuh): a block walks down a strip 256
 *       pixels wide and 128 rows tall; each input row is loaded once,
 *       converted once into channel planes in shared memory; a thread
 *       reads one channel of 4 + 2 R4 columns of the row with 16-byte
 *       loads and adds each kernel row j into the running sum of output
 *       row r - j, the N running sums per pixel staying in registers; fma,
 *       +-1 on integers. Only RGBA8, LINEAR and ABS, N x N for N = 3, 5,
 *       7, no alpha pass-through, a constant border value a whole number
 *       in 0..255; everything else runs v4.
 *   v8  warp walk (conv_common.cuh): v7's sums in v7's order, each warp
 *       on its own strip 120 pixels wide with no shared memory and no
 *       barrier; a lane keeps 4 whole pixels (16 channel values) and
 *       their N running output sums in registers, the horizontal halo
 *       comes from its neighbours by shuffles; 16-byte loads and stores.
 *       The ops v7 takes with N = 3 or 5; N = 7 runs v7.
 *   v9  v8 with 2 pixels a lane (8-byte loads and stores, strips 60 wide):
 *       half the ring's registers, so more warps an SM to hide latency,
 *       for twice the shuffles per pixel. The same sums: v8's bytes.
 *   v10 v9, lean (conv_common.cuh, ww_walk): inside the image the row
 *       addresses are stepped by the pitch. v9's bytes.
 *   v11 v10 in a grid of one wave, each strip as tall as that makes it.
 *       v9's bytes.
 *   v12 tensor cores (c2d_mma.cuh): each kernel row's taps as a banded
 *       matrix times 8 input pixels x 2 channels of 8 rows, summed over the
 *       rows in float; taps rounded to half. LINEAR and ABS, N x N for N =
 *       3, 5, taps whose absolute sum is at most 2; else v11.
 *   v13 v12 with each tile converted once into half2 planes (v12 converts
 *       every input row again for each kernel row that reads it), and the
 *       pixels of a tile wholly inside the region stored from one address
 *       a lane, unchecked (c2d_mma.cuh). v12's bytes. What it does not
 *       take runs v10 (v12: v11).
 *   v14 v13 with two accumulators a channel pair (even and odd kernel
 *       rows), added at the end: two chains of dependent matrix products
 *       of half the length. Within 1 of the reference, not v12's bytes;
 *       no faster than v13 (docs/PERFORMANCE.md), so not the default.
 *   v15 v13 on m16n8k8 products (5x5; 3x3 runs v13's kernel): the planes
 *       written two pixels to the left so that a warp's 12 input pixels
 *       are three k8 steps, where v13's two k16 steps take 16, a quarter
 *       of them against zero taps (c2d_mma.cuh). Within 1 of the
 *       reference, not v12's bytes; slower than v13 (its extra products
 *       cost more issue slots than the tensor work saves:
 *       docs/PERFORMANCE.md), so not the default.
 *   v16 v13 on tiles of 32 output rows, four blocks an SM where v13 fits
 *       three. v12's bytes; slower than v13 (docs/PERFORMANCE.md).
 *   v17 v13 with the planes holding byte * 2^-24 (separable v23's exact
 *       small inputs): the accumulators start at zero and the bias joins
 *       at the rounding, and the tile's conversion takes a mask and a
 *       permute a word (c2d_mma.cuh). Within 1 of the reference, not
 *       v12's bytes; fewer instructions and no faster than v13
 *       (docs/PERFORMANCE.md), so not the default.
 *   v18 8-bit integer tensor cores (c2d_imma.cuh): the bytes of the raw
 *       tile are the operands (no conversion), 8 whole pixels a k32 step
 *       for 4 outputs, the taps as two signed bytes each (hi * 256 + lo,
 *       in units as fine as the sums' range allows), exact integer sums.
 *       A third of v13's shared-memory reads, but its outputs sit two
 *       columns off the image's grid, so a row's stores straddle two
 *       sectors; slower than v13 (docs/PERFORMANCE.md). Within 1 of the
 *       reference, as are v19..v24.
 *   v19 v18 with the next row block's fragments read before this one's
 *       rounding: the registers it keeps live spill; slower than v18.
 *   v20 v19 on tiles of 56 rows; slower than v19.
 *   v21 v19 with the tile copied from two pixels left of its outputs
 *       (8-byte copies), so the outputs sit on the grid and a warp's row
 *       of stores fills one sector: v13's time, with v19's spills.
 *   v22 v18 with v21's grid: no spills and whole sectors. The default
 *       (docs/PERFORMANCE.md). What it does not take runs v10.
 *   v23 v22 with four blocks an SM (64 registers a thread) for the
 *       latency v18 shows: its fragments spill, slower than v22.
 *   v24 v22 on tiles of 56 rows: 8 halo rows and a barrier for 56
 *       output rows, not for 40. A little faster than v22
 *       (docs/PERFORMANCE.md); not the default until the whole GPU suite
 *       has passed with it as the default.
 * v1, v2, v3 and v5 are bit-identical to tsk_ref_apply.
 *
 * v3..v6 fall back to v2 when their tile does not fit in shared memory,
 * and v4..v6 to v3 when a view is not aligned to its pixel size.
 *
 * Why the versions are what they are, with the cost model, the
 * predictions and the measured times of each: docs/PERFORMANCE.md ("2-D
 * convolution"). */
#include "conv_common.cuh"

struct c2d_bank {
    float k[TSK_MAX_2D * TSK_MAX_2D];
    float k2[TSK_MAX_2D * TSK_MAX_2D];
};

__constant__ c2d_bank c_c2d_bank[TSK_SLOTS];
__device__ c2d_bank g_c2d_bank[TSK_SLOTS];  /* v1: the same taps in global memory */

struct c2d_args {
    conv_io io;
    int slot;
    int kw, kh;
    int mode;    /* tsk_conv_mode */
    float bias;
};

/* The versions, row v - 1 for version v (conv_version in conv_common.cuh):
 * name, how it runs, fused multiply-add, fast loads and stores, outputs per
 * thread in units of K, tile rows. */
static constexpr conv_version c2d_versions[] = {
    { "v1 naive global, taps in global memory", CONV_NAIVE_GLOBAL, false, false, 0, 0, 0, false, false, 0, 0 },
    { "v2 naive global, taps in constant memory", CONV_NAIVE_CONST, false, false, 0, 0, 0, false, false, 0, 0 },
    { "v3 padded smem tile, 1 px/thread", CONV_TILED, false, false, 0, 32, 0, false, false, 0, 0 },
    { "v4 smem tile, K px/thread in registers, staged coalesced stores, fma", CONV_TILED, true, true, 1, 32, 0, false, false, 0, 0 },
    { "v5 v4 with exact mul+add (bit-exact)", CONV_TILED, false, true, 1, 32, 0, false, false, 0, 0 },
    { "v6 v4 with 2K px/thread", CONV_TILED, true, true, 2, 32, 0, false, false, 0, 0 },
    { "v7 column walk, rows in registers, fma (RGBA8 NxN lin/abs, else v4)", CONV_WALK, true, true, 0, 0, 0, false, false, 0, 0 },
    { "v8 warp walk, no smem/barriers, fma (RGBA8 NxN lin/abs N<=5, else v7)", CONV_WARP, true, true, 0, 0, 4, false, false, 0, 0 },
    { "v9 v8 with 2 px/lane: half the ring, more warps (else v7)", CONV_WARP, true, true, 0, 0, 2, false, false, 0, 0 },
    { "v10 v9 with row addresses stepped inside the image (else v7)", CONV_WARP, true, true, 0, 0, 2, true, false, 0, 0 },
    { "v11 v10 in one wave of tall strips (else v7)", CONV_WARP, true, true, 0, 0, 2, true, true, 0, 0 },
    { "v12 tensor cores, half taps, float sums (RGBA8 NxN lin/abs N<=5, sum|k|<=2, else v11)", CONV_WARP, true, true, 0, 0, 2, true, true, 3, 3 },
    { "v13 v12 with the tile converted once into half2 planes, lean output (else v10)", CONV_WARP, true, true, 0, 0, 2, true, false, 3, 3, false, false, 0, false, 13 },
    { "v14 v13 with two accumulator chains a channel pair (else v10)", CONV_WARP, true, true, 0, 0, 2, true, false, 3, 3, false, false, 0, false, 14 },
    { "v15 v13 on k8 products from planes shifted to the 12 pixels 5x5 reads (3x3: v13; else v10)", CONV_WARP, true, true, 0, 0, 2, true, false, 3, 3, false, false, 0, false, 15 },
    { "v16 v13 on tiles of 32 rows, four blocks an SM (else v10)", CONV_WARP, true, true, 0, 0, 2, true, false, 3, 3, false, false, 0, false, 16 },
    { "v17 v13 with exact small inputs, no offset (else v10)", CONV_WARP, true, true, 0, 0, 2, true, false, 3, 3, false, false, 0, false, 17 },
    { "v18 8-bit integer tensor cores from the raw tile, taps in two byte parts (else v10)", CONV_WARP, true, true, 0, 0, 2, true, false, 3, 3, false, false, 0, false, 18 },
    { "v19 v18 with the next row block's reads before the rounding (else v10)", CONV_WARP, true, true, 0, 0, 2, true, false, 3, 3, false, false, 0, false, 19 },
    { "v20 v19 on tiles of 56 rows (else v10)", CONV_WARP, true, true, 0, 0, 2, true, false, 3, 3, false, false, 0, false, 20 },
    { "v21 v19 with its outputs on the image's grid (8-byte tile copies) (else v10)", CONV_WARP, true, true, 0, 0, 2, true, false, 3, 3, false, false, 0, false, 21 },
    { "v22 v18 with its outputs on the image's grid (8-byte tile copies) (else v10)", CONV_WARP, true, true, 0, 0, 2, true, false, 3, 3, false, false, 0, false, 22 },
    { "v23 v22 with four blocks an SM (else v10)", CONV_WARP, true, true, 0, 0, 2, true, false, 3, 3, false, false, 0, false, 23 },
    { "v24 v22 on tiles of 56 rows (else v10)", CONV_WARP, true, true, 0, 0, 2, true, false, 3, 3, false, false, 0, false, 24 },
};

/* The mode applied to the sums of one channel; biasmax = bias * max. */
template <bool FMA>
static __device__ __forceinline__ float c2d_finish(int mode, float s, float s2, float biasmax)
{
    switch (mode) {
    case TSK_CONV_LINEAR: return __fadd_rn(biasmax, s);
    case TSK_CONV_ABS: return fabsf(s);
    default: return sqrtf(FMA ? fmaf(s, s, __fmul_rn(s2, s2)) : __fadd_rn(__fmul_rn(s, s), __fmul_rn(s2, s2)));
    }
}

/* --------------------------------------------------------- v1, v2: naive */

template <typename T, bool CONST_TAPS>
__global__ void c2d_naive(c2d_args a)
{
    const conv_io &io = a.io;
    const int ew = io.dw * io.c, rx = a.kw / 2, ry = a.kh / 2;
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= ew) return;
    const int x = io.dx0 + e / io.c, ch = e % io.c;
    const bool mag = a.mode == TSK_CONV_MAG;
    const float *k = CONST_TAPS ? c_c2d_bank[a.slot].k : g_c2d_bank[a.slot].k;
    const float *k2 = CONST_TAPS ? c_c2d_bank[a.slot].k2 : g_c2d_bank[a.slot].k2;
    const float biasmax = __fmul_rn(a.bias, tsk_px<T>::maxv());
    for (int y = blockIdx.y; y < io.dh; y += gridDim.y) {
        const int gy = io.dy0 + y;
        float s = 0.0f, s2 = 0.0f;
        for (int j = 0; j < a.kh; j++)
            for (int i = 0; i < a.kw; i++) {
                const float p = conv_read<T>(io, x + i - rx, gy + j - ry, ch);
                s = conv_mac<false>(k[j * a.kw + i], p, s);
                if (mag) s2 = conv_mac<false>(k2[j * a.kw + i], p, s2);
            }
        float o = c2d_finish<false>(a.mode, s, s2, biasmax);
        if (io.alpha && ch == io.c - 1) o = conv_read<T>(io, x, gy, ch);
        T *row = (T *)(io.dst + (size_t)y * io.dp);
        row[e] = tsk_px<T>::store(o);
    }
}

template <typename T, bool CONST_TAPS>
static ts_status c2d_naive_go(const c2d_args &a, cudaStream_t s, ts_err *err)
{
    const int ew = a.io.dw * a.io.c, h = a.io.dh;
    c2d_naive<T, CONST_TAPS><<<dim3((ew + 255) / 256, h < 65535 ? h : 65535), 256, 0, s>>>(a);
    return TSK_LAUNCH_CHECK("2-D convolution", err);
}

/* -------------------------------------------------------- v3..v5: tiles
 * K == 1 (v3): one output per thread, threads on consecutive columns,
 * results straight to global memory. K > 1: K consecutive outputs of a row
 * per thread, threads on consecutive rows (conflict-free by S's padding);
 * the rounded results go to the staging tile O, which consecutive threads
 * then copy out pixel by pixel (coalesced). */
template <typename T, int C, int K, bool FMA, bool FAST, bool MAG>
__global__ void __launch_bounds__(CONV_THREADS) c2d_tiled(c2d_args a, conv_tile g)
{
    extern __shared__ float4 conv_smem[];
    float *S = (float *)conv_smem;
    unsigned char *O = (unsigned char *)conv_smem + g.off_o;
    const conv_io &io = a.io;
    const int rx = a.kw / 2, ry = a.kh / 2;
    const int ox0 = io.dx0 + (int)blockIdx.x * g.tw, oy0 = io.dy0 + (int)blockIdx.y * g.th;
    const int vw = min(g.tw, io.dx0 + io.dw - ox0), vh = min(g.th, io.dy0 + io.dh - oy0);

    conv_load_tile<T, C, FAST>(io, S, g, ox0 - rx, oy0 - ry, vw + 2 * rx, vh + 2 * ry);
    __syncthreads();

    const float *k = c_c2d_bank[a.slot].k, *k2 = c_c2d_bank[a.slot].k2;
    const float biasmax = __fmul_rn(a.bias, tsk_px<T>::maxv());
    const int mode = MAG ? (int)TSK_CONV_MAG : a.mode;
    if constexpr (K == 1) {
        for (int t = threadIdx.x; t < g.tw * g.th; t += blockDim.x) {
            const int oy = t >> g.tw_log2, ox = t & (g.tw - 1);
            if (ox >= vw || oy >= vh) continue;
            vecf<C> s[1], s2[1];
            s[0] = s2[0] = vfill<C>(0.0f);
            for (int j = 0; j < a.kh; j++)
                conv_run<C, 1, FMA, MAG>(S + (oy + j) * g.pitch_s + ox * C, C, a.kw, k + j * a.kw, k2 + j * a.kw,
                                         s, s2);
            vecf<C> o;
#pragma unroll
            for (int ch = 0; ch < C; ch++) o.v[ch] = c2d_finish<FMA>(mode, s[0].v[ch], s2[0].v[ch], biasmax);
            if (io.alpha) o.v[C - 1] = S[(oy + ry) * g.pitch_s + (ox + rx) * C + C - 1];
            conv_stg<T, C, FAST>(io.dst + (size_t)(oy0 + oy - io.dy0) * io.dp, ox0 + ox - io.dx0, o);
        }
    } else {
        for (int t = threadIdx.x; t < g.th * (g.tw / K); t += blockDim.x) {
            const int r = t & (g.th - 1), q = t >> g.th_log2;
            if (r >= vh || q * K >= vw) continue;
            vecf<C> s[K], s2[K];
#pragma unroll
            for (int i = 0; i < K; i++) s[i] = s2[i] = vfill<C>(0.0f);
            for (int j = 0; j < a.kh; j++)
                conv_run<C, K, FMA, MAG>(S + (r + j) * g.pitch_s + q * K * C, C, a.kw, k + j * a.kw,
                                         k2 + j * a.kw, s, s2);
#pragma unroll
            for (int i = 0; i < K; i++) {
                vecf<C> o;
#pragma unroll
                for (int ch = 0; ch < C; ch++) o.v[ch] = c2d_finish<FMA>(mode, s[i].v[ch], s2[i].v[ch], biasmax);
                if (io.alpha) o.v[C - 1] = S[(r + ry) * g.pitch_s + (q * K + i + rx) * C + C - 1];
                conv_stg<T, C, FAST>(O + r * g.pitch_o, q * K + i, o);
            }
        }
        __syncthreads();
        constexpr int PS = (int)sizeof(T) * C;
        for (int t = threadIdx.x; t < g.tw * g.th; t += blockDim.x) {
            const int oy = t >> g.tw_log2, ox = t & (g.tw - 1);
            if (ox >= vw || oy >= vh) continue;
            conv_copy_px<T, C>(io.dst + (size_t)(oy0 + oy - io.dy0) * io.dp + (size_t)(ox0 + ox - io.dx0) * PS,
                               O + oy * g.pitch_o + ox * PS);
        }
    }
}

/* Staging rows of O: bytes with (bytes / 4) = u (mod 32), u the banks of
 * one pixel's access (1 for up to 4 bytes, 2 for 8, 4 for 16): threads on
 * consecutive rows then write distinct banks. */
static int c2d_pitch_o(int tw, int ps)
{
    const int u = ps >= 16 ? 4 : ps >= 8 ? 2 : 1;
    const int words = (tw * ps + 3) / 4;
    return 4 * (words + (((u - words) % 32) + 32) % 32);
}

/* Tile of tw x th outputs (th halved until it fits); 0 when none fits. */
static int c2d_tile(conv_tile *g, int c, int ps, int k, int tw, int th, int rx, int ry, size_t limit)
{
    for (; th >= 8; th /= 2) {
        conv_tile_shape(g, c, tw, th, rx, ry);
        g->off_o = 16 * (int)((sizeof(float) * (size_t)g->ih * (size_t)g->pitch_s + 15) / 16);
        g->pitch_o = k > 1 ? c2d_pitch_o(tw, ps) : 0;
        g->smem = (size_t)g->off_o + (size_t)g->pitch_o * (size_t)th;
        if (g->smem <= limit) return 1;
    }
    (void)k;
    return 0;
}

template <typename T, int C, int K, bool FMA, bool FAST>
static ts_status c2d_tiled_go(const c2d_args &a, int th, cudaStream_t s, ts_err *err)
{
    conv_tile g;
    const int tw = K == 1 ? 32 : K <= 8 ? 64 : 8 * K;
    if (!c2d_tile(&g, C, (int)sizeof(T) * C, K, tw, th, a.kw / 2, a.kh / 2, conv_smem_limit()))
        return c2d_naive_go<T, true>(a, s, err);
    auto kernel = a.mode == TSK_CONV_MAG ? c2d_tiled<T, C, K, FMA, FAST, true> : c2d_tiled<T, C, K, FMA, FAST, false>;
    return conv_launch_tiled(kernel, a, g, s, "2-D convolution", err);
}

/* ------------------------------------------------ v7: column walk, RGBA8
 * conv_common.cuh's column walk. Output row o gathers its sum in slot
 * o mod N of a ring of N accumulators per pixel, in registers: input row
 * r adds its kernel row j into the slot of output r - j, for j = 0 .. N-1
 * (row j = 0 starts the slot), taps i in order within a row: each output
 * gets the reference's order (j outer, i inner). After row r, the slot of
 * output r - (N - 1) is complete. Taps and bias pre-scaled by 1/255 (the
 * bias stays bias: bias * 255 / 255). LINEAR and ABS modes, no alpha
 * pass-through, kw = kh = N. */
template <int N>
struct c2d_walk_taps {
    float k[N * N];
    float bias;
};

template <int N, int D, bool ABS>
__global__ void __launch_bounds__(CW_THREADS, N <= 5 ? 4 : 2) c2d_walk(conv_io io, c2d_walk_taps<N> k, uint32_t border_px)
{
    constexpr int R = N / 2, R4 = cw_r4(R);
    const int t = threadIdx.x;
    const int ox0 = io.dx0 + (int)blockIdx.x * CW_THREADS, oy0 = io.dy0 + (int)blockIdx.y * CW_ROWS;
    const int vw = min(CW_THREADS, io.dx0 + io.dw - ox0), vh = min(CW_ROWS, io.dy0 + io.dh - oy0);
    uint32_t sel[4];
    cw_transpose_sel(t & 3, sel);
    float acc[N][4];
    cw_walk<N, D, R, R>(io, border_px, ox0, oy0, vw, vh + 2 * R, [&](int s, int r, const float(&v)[4 * (1 + R4 / 2)]) {
#pragma unroll
        for (int j = 0; j < N; j++) {
            const int slot = (s - j + N) % N;
#pragma unroll
            for (int p = 0; p < 4; p++) {
                float a = j == 0 ? 0.0f : acc[slot][p];
#pragma unroll
                for (int i = 0; i < N; i++) a = fmaf(k.k[j * N + i], v[p + i + R4 - R], a);
                acc[slot][p] = a;
            }
        }
        if (r >= N - 1) {
            const int slot = (s + 1) % N;
            float y[4];
#pragma unroll
            for (int p = 0; p < 4; p++)
                y[p] = ABS ? __saturatef(fabsf(acc[slot][p])) : __saturatef(__fadd_rn(k.bias, acc[slot][p]));
            cw_store(io, oy0 + r - (N - 1), ox0, t, vw, y, sel);
        }
    });
}

template <int N, int D>
static ts_status c2d_walk_go(const c2d_args &a, const tsk_op *op, uint32_t border_px, cudaStream_t s, ts_err *err)
{
    c2d_walk_taps<N> k;
    for (int i = 0; i < N * N; i++) k.k[i] = op->u.conv2d.k[i] / 255.0f;
    k.bias = a.bias;
    if (a.mode == TSK_CONV_ABS)
        c2d_walk<N, D, true><<<cw_grid(a.io), CW_THREADS, 0, s>>>(a.io, k, border_px);
    else
        c2d_walk<N, D, false><<<cw_grid(a.io), CW_THREADS, 0, s>>>(a.io, k, border_px);
    return TSK_LAUNCH_CHECK("2-D convolution (column walk)", err);
}

/* v7 for the RGBA8 views conv_walk lets through, when it takes the op
 * (LINEAR or ABS, N x N for N = 3, 5, 7): *done = 1 and the status;
 * otherwise *done stays 0 and the caller runs v4. */
static ts_status c2d_walk_version(const c2d_args &a, const tsk_op *op, uint32_t border_px, cudaStream_t s, int *done,
                                  ts_err *err)
{
    if (a.mode == TSK_CONV_MAG || a.kw != a.kh)
        return TS_OK;
    *done = 1;
    switch (a.kw) {
    case 3: return c2d_walk_go<3, 3>(a, op, border_px, s, err);
    case 5: return c2d_walk_go<5, 5>(a, op, border_px, s, err);
    case 7: return c2d_walk_go<7, 7>(a, op, border_px, s, err);
    default: *done = 0; return TS_OK;
    }
}

/* -------------------------------------------- v8, v9: warp walk, RGBA8
 * conv_common.cuh's warp walk, P pixels a lane (v8 4, v9 2), with v7's
 * ring of output accumulators: input row r adds its kernel row j into the
 * slot of output r - j (taps i in order within a row: the reference's
 * order), for the lane's P pixels x 4 channels. LINEAR and ABS, no alpha
 * pass-through, kw = kh = N <= 5 (the ring is 4 P N registers). v9's ring
 * is half v8's, so it asks for 6 blocks an SM. */
template <int N, int D, bool ABS, int P, bool LEAN>
__global__ void __launch_bounds__(WW_THREADS, P == 2 ? 6 : N <= 3 ? 4 : 3)
    c2d_warp(conv_io io, c2d_walk_taps<N> k, uint32_t border_px, unsigned align, int strip_rows)
{
    constexpr int R = N / 2;
    const ww_strip t = ww_strip_of<P>(io, strip_rows);
    if (t.vw <= 0) return;  /* the whole warp */
    float acc[N][P][4];
    ww_walk<N, D, R, P, LEAN>(io, border_px, align, t.x0, t.y0, t.vw, t.vh + 2 * R,
                              [&](int s, int r, const float(&win)[P + 2 * R][4], unsigned char *out) {
#pragma unroll
        for (int j = 0; j < N; j++) {
            const int slot = (s - j + N) % N;
#pragma unroll
            for (int p = 0; p < P; p++)
#pragma unroll
                for (int c = 0; c < 4; c++) {
                    float a = j == 0 ? 0.0f : acc[slot][p][c];
#pragma unroll
                    for (int i = 0; i < N; i++) a = fmaf(k.k[j * N + i], win[p + i][c], a);
                    acc[slot][p][c] = a;
                }
        }
        if (r >= N - 1) {
            const int slot = (s + 1) % N;
            float y[P][4];
#pragma unroll
            for (int p = 0; p < P; p++)
#pragma unroll
                for (int c = 0; c < 4; c++)
                    y[p][c] = ABS ? __saturatef(fabsf(acc[slot][p][c])) : __saturatef(__fadd_rn(k.bias, acc[slot][p][c]));
            ww_store<P>(io, out, t.x0, t.vw, align, y);
        }
    });
}

template <int N, int D, bool ABS, int P, bool LEAN>
static void c2d_warp_launch(const c2d_args &a, const c2d_walk_taps<N> &k, uint32_t border_px, bool wave, cudaStream_t s)
{
    const int rows = wave ? ww_wave_rows<P>(a.io, ww_blocks_per_sm<c2d_warp<N, D, ABS, P, LEAN>>()) : WW_ROWS;
    c2d_warp<N, D, ABS, P, LEAN><<<ww_grid<P>(a.io, rows), WW_THREADS, 0, s>>>(a.io, k, border_px, ww_align(a.io), rows);
}

template <int N, int D, int P, bool LEAN>
static ts_status c2d_warp_go(const c2d_args &a, const tsk_op *op, uint32_t border_px, bool wave, cudaStream_t s,
                             ts_err *err)
{
    c2d_walk_taps<N> k;
    for (int i = 0; i < N * N; i++) k.k[i] = op->u.conv2d.k[i] / 255.0f;
    k.bias = a.bias;
    if (a.mode == TSK_CONV_ABS)
        c2d_warp_launch<N, D, true, P, LEAN>(a, k, border_px, wave, s);
    else
        c2d_warp_launch<N, D, false, P, LEAN>(a, k, border_px, wave, s);
    return TSK_LAUNCH_CHECK("2-D convolution (warp walk)", err);
}

/* The warp walk of N x N taps as version v's row says: v8 (4 pixels a
 * lane), v9 (2), v10 (2, lean) or v11 (2, lean, one wave). */
template <int N>
static ts_status c2d_warp_of(const c2d_args &a, const tsk_op *op, uint32_t border_px, const conv_version &v,
                             cudaStream_t s, ts_err *err)
{
    if (v.lane_px == 4) return c2d_warp_go<N, N, 4, false>(a, op, border_px, v.wave, s, err);
    return v.lean ? c2d_warp_go<N, N, 2, true>(a, op, border_px, v.wave, s, err)
                  : c2d_warp_go<N, N, 2, false>(a, op, border_px, v.wave, s, err);
}

#include "c2d_mma.cuh"
#include "c2d_imma.cuh"

/* Whether v12 takes the op (conv_walk has let through RGBA8 without alpha
 * pass-through): LINEAR or ABS, N x N for N = 3 or 5, taps whose absolute
 * sum is at most 2 (c2d_mma.cuh's bound), on a device with the tensor
 * instructions. */
static bool c2d_mma_takes(const c2d_args &a, const tsk_op *op)
{
    if (a.mode == TSK_CONV_MAG || a.kw != a.kh || (a.kw != 3 && a.kw != 5)) return false;
    double sum = 0;
    for (int i = 0; i < a.kw * a.kh; i++) sum += fabs((double)op->u.conv2d.k[i]);
    return sum <= 2.0 && sm_device_ok();
}

/* v8..v12 for the RGBA8 views conv_walk lets through, when it takes
 * the op (LINEAR or ABS, N x N for N = 3, 5): *done = 1 and the status;
 * otherwise *done stays 0 and the caller tries v7. */
static ts_status c2d_warp_version(const c2d_args &a, const tsk_op *op, uint32_t border_px, const conv_version &v,
                                  cudaStream_t s, int *done, ts_err *err)
{
    if (v.mma && a.kw >= v.mma && c2d_mma_takes(a, op)) {
        *done = 1;
        const bool abs_mode = a.mode == TSK_CONV_ABS;
        const int kernel = v.c2d ? v.c2d : 12;
        if (kernel >= 18) {
            if (a.kw == 3) return c2d_imma_run<3>(a.io, op->u.conv2d.k, a.bias, abs_mode, kernel, border_px, s, err);
            return c2d_imma_run<5>(a.io, op->u.conv2d.k, a.bias, abs_mode, kernel, border_px, s, err);
        }
        if (a.kw == 3) return c2d_mma_run<3>(a.io, op->u.conv2d.k, a.bias, abs_mode, kernel, border_px, s, err);
        return c2d_mma_run<5>(a.io, op->u.conv2d.k, a.bias, abs_mode, kernel, border_px, s, err);
    }
    if (a.mode == TSK_CONV_MAG || a.kw != a.kh)
        return TS_OK;
    *done = 1;
    switch (a.kw) {
    case 3: return c2d_warp_of<3>(a, op, border_px, v, s, err);
    case 5: return c2d_warp_of<5>(a, op, border_px, v, s, err);
    default: *done = 0; return TS_OK;
    }
}

/* ------------------------------------------------------------- launcher */

static ts_status c2d_upload(const tsk_op *op, int slot, cudaStream_t s, ts_err *err)
{
    const size_t n = (size_t)op->u.conv2d.kw * (size_t)op->u.conv2d.kh;
    c2d_bank b;
    memset(&b, 0, sizeof b);
    memcpy(b.k, op->u.conv2d.k, sizeof(float) * n);
    if (op->u.conv2d.mode == TSK_CONV_MAG) memcpy(b.k2, op->u.conv2d.k2, sizeof(float) * n);
    return conv_upload_bank(c_c2d_bank, g_c2d_bank, b, slot, s, "2-D convolution", err);
}

static ts_status c2d_check(const tsk_op *op, ts_err *err)
{
    const char *what = "2-D convolution";
    const int kw = op->u.conv2d.kw, kh = op->u.conv2d.kh;
    if (kw < 1 || kh < 1 || kw > TSK_MAX_2D || kh > TSK_MAX_2D || kw % 2 == 0 || kh % 2 == 0)
        return ts_err_set(err, TS_E_ARG, "%s: %dx%d kernel (odd, at most %d)", what, kw, kh, TSK_MAX_2D);
    if ((int)op->u.conv2d.mode < TSK_CONV_LINEAR || (int)op->u.conv2d.mode > TSK_CONV_MAG)
        return ts_err_set(err, TS_E_ARG, "%s: mode %d", what, (int)op->u.conv2d.mode);
    return TS_OK;
}

static c2d_args c2d_args_of(const tsk_op *op, const ts_view *src, ts_view *dst, int slot)
{
    c2d_args a;
    a.io = conv_io_of(src, dst, (int)op->u.conv2d.border, op->u.conv2d.border_value, op->alpha_passthrough);
    a.slot = slot;
    a.kw = op->u.conv2d.kw;
    a.kh = op->u.conv2d.kh;
    a.mode = (int)op->u.conv2d.mode;
    a.bias = op->u.conv2d.bias;
    return a;
}

/* The family for conv_apply (conv_common.cuh). */
struct c2d_family {
    typedef c2d_args args;
    static constexpr const char *what = "2-D convolution";
    static constexpr const conv_version *versions = c2d_versions;
    static constexpr int count = (int)(sizeof c2d_versions / sizeof c2d_versions[0]);
    /* the 8-bit integer tensor-core products (v22's kernel) where they
     * take the op: the fastest at 5x5 of the versions the whole GPU suite
     * has passed with as the default (docs/PERFORMANCE.md, "2-D
     * convolution"; 3x3 has not been timed against the walks); other
     * cases run v10, then v7, then v4 */
    static constexpr int default_version = 22;
    static constexpr const tsk_family *family = &tsk_family_conv2d;
    static constexpr auto check = c2d_check;
    static constexpr auto upload = c2d_upload;
    static constexpr auto args_of = c2d_args_of;
    template <typename T, bool CONST_TAPS> static constexpr auto naive = c2d_naive_go<T, CONST_TAPS>;
    template <typename T, int C, int K, bool FMA, bool FAST>
    static constexpr auto tiled = c2d_tiled_go<T, C, K, FMA, FAST>;
    static constexpr auto walk = c2d_walk_version;
    static constexpr auto warp = c2d_warp_version;
};

extern "C" const tsk_family tsk_family_conv2d = conv_family<c2d_family>();
