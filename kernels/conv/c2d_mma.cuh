/* c2d_mma.cuh - 2-D v12: an N x N convolution (N = 3, 5) of RGBA8, LINEAR
 * or ABS, as sums of matrix products on the tensor cores. Included by
 * conv2d.cu after its argument types.
 *
 * Why: the walks issue one fma per tap per channel value, N * N of them a
 * value, and at 5 x 5 those and what feeds them fill the SMs' issue slots
 * (docs/PERFORMANCE.md, "2-D convolution").
 *
 * How. Separable v15's row sums (sep_mma.cuh) are one kernel row of a 2-D
 * convolution: D (16 output slots x 8 image rows) = A (the row's taps as a
 * banded 16 x 16 matrix) B (one k16 step: 8 input pixels x 2 channels, 8
 * image rows). Kernel row j reads the input j rows lower, and B's rows come
 * from ldmatrix, whose lanes each give one row's address: moving the rows is
 * only an address. So D is the sum over j and the k16 steps of A_j B_j, in
 * float on the tensor cores, then rounded as the walks round.
 * 1. Tiles of 64 x 40 output pixels on the image's grid of 8 columns, from
 *    48 input rows (40 + N - 1 used), copied raw into shared memory by
 *    cp.async while the tile before is summed (v15's sr_fill).
 * 2. Warp w takes columns 8 w .. 8 w + 7, one block of 8 output rows at a
 *    time: N x KH products per channel pair, the taps as A fragments held
 *    in registers for the whole launch.
 * 3. Output slot m is column m & 7, channel m >> 3 of the pair (channels 0
 *    and 2, or 1 and 3), so a lane ends with all four channels of column g
 *    in rows 2t and 2t + 1: one 4-byte store each, and the warp's stores
 *    fill whole 32-byte sectors.
 *
 * Numbers: inputs are exact (1024 + byte as halves), the taps are rounded to
 * half (each by at most 2^-11 of itself), products are exact and sums float.
 * The taps' rounding moves a result by at most 255 * 2^-11 * sum |k|, and the
 * float sums by far less: with sum |k| <= 2 (the launcher's condition) under
 * 0.3, so a result is within 1 of the reference's, as the fma versions are.
 * Which taps share a k16 step depends only on a column's place among its 8,
 * on the image's grid, so tiled runs equal untiled ones.
 *
 * v13 (PLANES): v12 converts every input row once for each of the N kernel
 * rows that read it (four byte permutes a k16 step and row: a quarter of
 * its instructions at 5 x 5, docs/PERFORMANCE.md). v13 converts the tile
 * once, after its raw copy lands, into the two half2 planes of separable
 * v13 (sm_convert, dynamic shared memory), and each kernel row's fragments
 * come from one ldmatrix a step. A tile wholly inside the region stores its
 * pixels from one address a lane, unchecked. The same products in the same
 * order: v12's bytes.
 *
 * v14: v13 with two accumulators a channel pair, one for the even kernel
 * rows and one for the odd, added at the end. v13's products run as one
 * chain of N * KH dependent matrix instructions a pair (ten at 5 x 5), and
 * the profile shows warps waiting on the one before (docs/PERFORMANCE.md);
 * two chains of half the length a pair let a warp issue twice as many at a
 * time. Other float roundings than v12's: within 1 of the reference.
 *
 * v15 (5x5): v13 on m16n8k8 products. Eight outputs of a 5x5 read 12 input
 * pixels of a row, and v13 reads 16 (two k16 steps from the 4-pixel
 * boundary below the halo's first pixel), so a quarter of its tensor work
 * multiplies zero taps. v15 writes the planes two pixels to the left
 * (plane column c holds tile column c + 2), so the 12 pixels start on a
 * 16-byte ldmatrix row, and sums them in three k8 steps: 6 products of
 * half the work a kernel row and pair where v13 has 4 of the whole, 30 A
 * registers where v13 holds 40, and 6 ldmatrix matrices where v13 reads 8.
 * Other float roundings than v12's: within 1 of the reference. 3x3 runs
 * v13's kernel. Slower than v13: its extra instructions cost more than the
 * ldmatrix bytes it saves (docs/PERFORMANCE.md).
 *
 * v16: v13 on tiles of 32 output rows from 40 input rows. v13's profile
 * shows one eligible warp a scheduler, its warps waiting on the products'
 * latency, with three blocks an SM (24 warps): its 58 KB of shared memory
 * a block leave no room for a fourth. v16's tile takes 49 KB and its
 * registers fit 64 a thread, so an SM holds four blocks (32 warps), for
 * 8 input rows read per 32 outputs where v13 reads 8 per 40. The same
 * products in the same order: v13's bytes. Slower than v13: the warps it
 * adds do not pay for the smaller tile (docs/PERFORMANCE.md).
 *
 * v17: v13 with separable v23's exact small inputs, for fewer
 * instructions a pixel. v13 copies the offset (-1024 times the taps' sum)
 * into the accumulators before each block of 8 rows, and its tile
 * conversion rebuilds the byte permutes' selectors in registers (a
 * permute's one constant slot holds the 0x64 fill). v17's planes hold
 * byte * 2^-24 (0x00XX: subnormal halves, exact; a mask and a permute with
 * zero, constants in the instructions), so the products are the taps times
 * the bytes at 2^-24, the accumulators start at zero (the zero register)
 * and the bias joins at the rounding: one fma with .SAT, c * (2^24 / 255)
 * + bias, where v13 has a multiply with .SAT. Other float roundings than
 * v13's: within 1 of the reference. No faster than v13: the instructions
 * are not what holds it (docs/PERFORMANCE.md). */

#include "mma_tile.cuh"

/* Version V's tile: TH output rows from ROWS input rows, and the blocks an
 * SM holds (the launch bound). v16's smaller tile leaves room for four. */
template <int V>
struct c2m_tile {
    static constexpr int TH = V == 16 ? 32 : 40, ROWS = V == 16 ? 40 : SM_ROWS_IN, BLOCKS = V == 16 ? 4 : 3;
    static_assert(TH + 8 <= ROWS, "a tile's input rows hold its output rows and up to 8 more");
};

/* d = a b + d, and d = a b + (c, c, c, c), on m16n8k8 (v15) */
static __device__ __forceinline__ void c2m_mma8(float (&d)[4], const uint32_t (&a)[2], uint32_t b)
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(b));
}
static __device__ __forceinline__ void c2m_mma8_c(float (&d)[4], const uint32_t (&a)[2], uint32_t b, float c)
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%7,%7,%7};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(b), "f"(c));
}

/* v15's products of one kernel row: row4 and row2 are the lane's ldmatrix
 * addresses in the planes (x4: matrix q is plane q & 1, k8 step q >> 1; x2:
 * plane q & 1, step 2), a the row's A fragments. */
template <bool FIRST>
static __device__ __forceinline__ void c2m_k8_products(const uint32_t *row4, const uint32_t *row2,
                                                       const uint32_t (&a)[3][2], float (&d)[2][4], float offset)
{
    uint32_t b[4], c[2];
    sm_ldmatrix_x4(b, row4);
    sr_ldmatrix_x2(c, row2);
    if (FIRST) {
        c2m_mma8_c(d[0], a[0], b[0], offset);
        c2m_mma8_c(d[1], a[0], b[1], offset);
    } else {
        c2m_mma8(d[0], a[0], b[0]);
        c2m_mma8(d[1], a[0], b[1]);
    }
    c2m_mma8(d[0], a[1], b[2]);
    c2m_mma8(d[1], a[1], b[3]);
    c2m_mma8(d[0], a[2], c[0]);
    c2m_mma8(d[1], a[2], c[1]);
}

template <int N>
struct c2d_mma_taps {
    float k[N * N];
};

/* V: the version whose kernel it is, 12 to 17 (15: 5x5 only) */
template <int N, bool ABS, int V>
__global__ void __launch_bounds__(SM_THREADS, c2m_tile<V>::BLOCKS)
    c2d_mma(conv_io io, c2d_mma_taps<N> k, uint32_t border_px, float offset, int vec, int ax0, int ay0, int tiles_x,
            int tiles)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    constexpr int R = N / 2;
    constexpr bool PLANES = V >= 13, SPLIT = V == 14, K8 = V == 15, TINY = V == 17;
    constexpr int TH = c2m_tile<V>::TH, ROWS = c2m_tile<V>::ROWS;
    using S = sm_shape<R>;
    static_assert(!K8 || N == 5, "v15's shift of two pixels is 5x5's");
    static_assert(N - 1 <= ROWS - TH, "the kernel's rows fit the tile's input");
    __shared__ __align__(16) uint32_t raw[2][ROWS][S::PITCH];
    __shared__ __half taps[N * N];
    sm_walk w(tiles_x, tiles);
    if (!w.more()) return;

    /* the taps as halves (an unrolled match: a parameter indexed by the
     * thread would be copied to local memory first) */
#pragma unroll
    for (int i = 0; i < N * N; i++)
        if ((int)threadIdx.x == i) taps[i] = __float2half_rn(k.k[i]);
    sm_walk_first<R, TH, ROWS, false>(io, border_px, vec, ax0, ay0, w, raw[0]);
    __syncthreads();

    const int lane = (int)threadIdx.x & 31, g = lane >> 2, t = lane & 3, warp = (int)threadIdx.x >> 5;
    /* element (m, kk) of kernel row j's step s: output column m & 7 takes
     * input pixel kk / 2 with tap kk / 2 - (m & 7) + R - R4, for its own
     * channel m >> 3 of the pair (kk is even: its element 1 is channel 1) */
    uint32_t a[N][S::KH][4];
    if constexpr (!K8) {
#pragma unroll
        for (int j = 0; j < N; j++)
#pragma unroll
            for (int s = 0; s < S::KH; s++)
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    const int m = g + 8 * (i & 1), kk = 16 * s + 2 * t + 8 * (i >> 1);
                    const int tap = kk / 2 - (m & 7) + R - S::R4;
                    const uint32_t h = tap >= 0 && tap < N ? (uint32_t)__half_as_ushort(taps[j * N + tap]) : 0u;
                    a[j][s][i] = (m >> 3) ? h << 16 : h;
                }
    }
    /* v15: element (m, kk) of kernel row j's k8 step s takes input pixel
     * 4 s + kk / 2 from the warp's first plane column (image column
     * 8 w - R), tap 4 s + kk / 2 - (m & 7) */
    uint32_t a8[N][3][2];
    if constexpr (K8) {
#pragma unroll
        for (int j = 0; j < N; j++)
#pragma unroll
            for (int s = 0; s < 3; s++)
#pragma unroll
                for (int i = 0; i < 2; i++) {
                    const int m = g + 8 * i, tap = 4 * s + t - (m & 7);
                    const uint32_t h = tap >= 0 && tap < N ? (uint32_t)__half_as_ushort(taps[j * N + tap]) : 0u;
                    a8[j][s][i] = (m >> 3) ? h << 16 : h;
                }
    }
    /* ldmatrix x4: matrix q is rows lane & 7, pixels 4 (q & 1) .. of k16
     * step q >> 1 of the pair; from the planes (v13): plane q >> 1 */
    const int lq = lane >> 3;
    const uint32_t *lp = &raw[0][lane & 7][8 * warp + 4 * (lq & 1) + 8 * (lq >> 1)];
    uint32_t (*const planes)[ROWS][S::PITCH] = reinterpret_cast<uint32_t (*)[ROWS][S::PITCH]>(sm_dynamic);
    const uint32_t *pp = &planes[lq >> 1][lane & 7][8 * warp + 4 * (lq & 1)];
    const uint32_t *pp4 = &planes[lq & 1][lane & 7][8 * warp + 4 * (lq >> 1)];
    const uint32_t *pp2 = &planes[lq & 1][lane & 7][8 * warp + 8];

    sm_walk_tiles<R, TH, ROWS, false>(io, border_px, vec, ax0, ay0, w, raw[0], [&](int it, int X0, int Y0) {
        const uint32_t *lb = lp + it * (ROWS * S::PITCH);
        if constexpr (PLANES) {
            /* the planes are free: every warp has passed the walk's barrier after the last tile */
            sm_convert<R, K8 ? 2 : 0, ROWS, TINY>(planes, raw[it]);
            __syncthreads();
        }
        const int x = X0 + 8 * warp + g;
        const bool x_in = x >= io.dx0 && x < io.dx0 + io.dw;
        /* v13: the whole tile in the region, so one address a lane and no checks */
        const bool inside = PLANES && X0 >= io.dx0 && X0 + SM_TW <= io.dx0 + io.dw && Y0 >= io.dy0 &&
                            Y0 + TH <= io.dy0 + io.dh;
        unsigned char *at = io.dst + (ptrdiff_t)(Y0 + 2 * t - io.dy0) * (ptrdiff_t)io.dp + (ptrdiff_t)(x - io.dx0) * 4;
#pragma unroll 1
        for (int rb = 0; rb < TH / 8; rb++, at += 8 * (ptrdiff_t)io.dp) {
            float d[2][4], e[2][4];
#pragma unroll
            for (int j = 0; j < N; j++) {
                if constexpr (K8) {
                    const int off = (8 * rb + j) * S::PITCH;
                    if (j == 0) c2m_k8_products<true>(pp4 + off, pp2 + off, a8[0], d, offset);
                    else c2m_k8_products<false>(pp4 + off, pp2 + off, a8[j], d, offset);
                } else if constexpr (SPLIT) {
                    /* even kernel rows into d (from the offset), odd ones into e (from zero) */
                    const uint32_t *row = pp + (8 * rb + j) * S::PITCH;
                    if (j == 0) sm_plane_products<S::KH, true>(row, a[0], d, offset);
                    else if (j == 1) sm_plane_products<S::KH, true>(row, a[1], e, 0.0f);
                    else if (j & 1) sm_plane_products<S::KH, false>(row, a[j], e, 0.0f);
                    else sm_plane_products<S::KH, false>(row, a[j], d, 0.0f);
                } else if constexpr (PLANES) {
                    /* v17: from the zero register (a constant zero) */
                    if (j == 0) sm_plane_products<S::KH, true>(pp + 8 * rb * S::PITCH, a[0], d, TINY ? 0.0f : offset);
                    else sm_plane_products<S::KH, false>(pp + (8 * rb + j) * S::PITCH, a[j], d, offset);
                } else {
                    if (j == 0) sm_row_products<S::KH, true>(lb + 8 * rb * S::PITCH, a[0], d, offset);
                    else sm_row_products<S::KH, false>(lb + (8 * rb + j) * S::PITCH, a[j], d, offset);
                }
            }
            if constexpr (SPLIT)
#pragma unroll
                for (int i = 0; i < 8; i++) d[i >> 2][i & 3] += e[i >> 2][i & 3];
            if (!inside && !x_in) continue;
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int y = Y0 + 8 * rb + 2 * t + h;
                if (!inside && (y < io.dy0 || y >= io.dy0 + io.dh)) continue;
                /* d[pair][h]: channel 0 or 1 of the column; d[pair][2 + h]: channel 2 or 3 */
                const float c[4] = { d[0][h], d[1][h], d[0][2 + h], d[1][2 + h] };
                uint32_t n[4];
#pragma unroll
                for (int ch = 0; ch < 4; ch++) {
                    if constexpr (TINY) {
                        /* the sum at 2^24 and in 0..1 units, plus the bias (offset: 0 for ABS) */
                        const float u = ABS ? fabsf(c[ch]) * (16777216.0f / 255.0f)
                                            : fmaf(c[ch], 16777216.0f / 255.0f, offset);
                        n[ch] = (uint32_t)__float_as_int(fmaf(__saturatef(u), 255.0f, TS_EXACT_1P5));
                    } else {
                        n[ch] = sm_round_bits(ABS ? fabsf(c[ch]) : c[ch]);
                    }
                }
                if (inside) *(uint32_t *)(at + (h ? io.dp : 0)) = sm_pack(n);
                else *(uint32_t *)(io.dst + (size_t)(y - io.dy0) * io.dp + (size_t)(x - io.dx0) * 4) = sm_pack(n);
            }
        }
    });
#endif
}

/* c2d_mma<N, ABS, V> over io's region in version V's tiles (v13 on: the
 * planes in dynamic shared memory). */
template <int N, bool ABS, int V>
static void c2d_mma_launch(const conv_io &io, const c2d_mma_taps<N> &k, uint32_t border_px, float offset, int vec,
                           int ax0, int ay0, int tiles_x, cudaStream_t s)
{
    using T = c2m_tile<V>;
    constexpr auto K = c2d_mma<N, ABS, V>;
    const int tiles = tiles_x * ((io.dh + T::TH - 1) / T::TH);
    const size_t smem = V >= 13 ? (size_t)2 * T::ROWS * sm_shape<N / 2>::PITCH * sizeof(uint32_t) : 0;
    sm_allow_smem<K>(smem);
    K<<<sm_blocks<K>(tiles, smem), SM_THREADS, smem, s>>>(io, k, border_px, offset, vec, ax0, ay0, tiles_x, tiles);
}

/* Version v's kernel (12 to 17; v15 is 5x5's, 3x3 runs v13's). */
template <int N, bool ABS>
static void c2d_mma_version(int v, const conv_io &io, const c2d_mma_taps<N> &k, uint32_t border_px, float offset,
                            int vec, int ax0, int ay0, int tiles_x, cudaStream_t s)
{
    switch (v) {
    case 17: return c2d_mma_launch<N, ABS, 17>(io, k, border_px, offset, vec, ax0, ay0, tiles_x, s);
    case 16: return c2d_mma_launch<N, ABS, 16>(io, k, border_px, offset, vec, ax0, ay0, tiles_x, s);
    case 15:
        if constexpr (N == 5) return c2d_mma_launch<N, ABS, 15>(io, k, border_px, offset, vec, ax0, ay0, tiles_x, s);
        else return c2d_mma_launch<N, ABS, 13>(io, k, border_px, offset, vec, ax0, ay0, tiles_x, s);
    case 14: return c2d_mma_launch<N, ABS, 14>(io, k, border_px, offset, vec, ax0, ay0, tiles_x, s);
    case 13: return c2d_mma_launch<N, ABS, 13>(io, k, border_px, offset, vec, ax0, ay0, tiles_x, s);
    default: return c2d_mma_launch<N, ABS, 12>(io, k, border_px, offset, vec, ax0, ay0, tiles_x, s);
    }
}

/* Run the kernel of N x N taps k (row by row) over io's region: LINEAR
 * (bias in 0..1 units) or ABS; v: the version whose kernel (12 to 17).
 * The caller has checked the conditions above (sum |k| <= 2, RGBA8, a
 * border conv_walk takes). */
template <int N>
static ts_status c2d_mma_run(const conv_io &io, const float *taps, float bias, bool abs_mode, int v,
                             uint32_t border_px, cudaStream_t s, ts_err *err)
{
    c2d_mma_taps<N> k;
    float sum = 0.0f;
    for (int i = 0; i < N * N; i++) {
        k.k[i] = taps[i];
        sum += __half2float(__float2half_rn(k.k[i]));
    }
    /* the accumulator's start: the 1024 of every input taken out, and the
     * bias (LINEAR) in byte units; v17: the bias in 0..1 units, added at
     * the rounding */
    const float offset = v == 17 ? (abs_mode ? 0.0f : bias) : (abs_mode ? 0.0f : bias * 255.0f) - 1024.0f * sum;
    /* tiles on the image's grid of 8 columns (which taps share a k16 step);
     * rows do not matter */
    const int ax0 = io.dx0 & ~7, ay0 = io.dy0;
    const int tiles_x = (io.dx0 + io.dw - ax0 + SM_TW - 1) / SM_TW;
    /* 16-byte copies: the tiles' columns start at multiples of 4 */
    const int vec = (ww_align(io) & 1u) && (io.sx0 & 3) == 0;
    if (abs_mode) c2d_mma_version<N, true>(v, io, k, border_px, offset, vec, ax0, ay0, tiles_x, s);
    else c2d_mma_version<N, false>(v, io, k, border_px, offset, vec, ax0, ay0, tiles_x, s);
    return TSK_LAUNCH_CHECK("2-D convolution (tensor cores)", err);
}
