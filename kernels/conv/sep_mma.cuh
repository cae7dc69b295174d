/* sep_mma.cuh - separable v13 and v15 (v16..v19): the row sums and the
 * column sums as matrix products on the tensor cores (RGBA8 gauss and box,
 * N x N taps, N <= 15). Included by conv_sep.cu, whose sep_warp_version
 * launches them. This comment describes v13; v15's changes to it are
 * described where its kernel begins.
 *
 * Why: the walks issue one fma per tap per channel value in the
 * reference's order, and at 5 to 15 taps those fma and what feeds them
 * fill the SMs' issue slots (docs/PERFORMANCE.md, "Separable convolution").
 * A tensor core instruction makes 2048 multiply-adds; here each makes the
 * sums of one channel pair over a 16 x 8 block, so the SM issues a few
 * instructions per pixel besides the loads and stores.
 *
 * The shape. Output tiles SM_TW = 64 pixels wide and SM_TH = 32 rows
 * tall lie on the image's grid (so tiled runs equal untiled ones); a block
 * of SM_WARPS warps walks several, warp w taking columns 8 w .. 8 w + 7.
 * 1. The block loads a tile's input (the tile, R rows above and below, R4
 *    columns left and what the last warp's window needs right; border
 *    mapped as everywhere; issued while the tile before is summed) into
 *    shared memory as two planes of
 *    half2: plane 0 holds channels 0 and 2 of each pixel, plane 1 channels 1
 *    and 3, each value as the half 1024 + byte (one byte permute per plane
 *    and pixel, no conversion: 0x64XX is 1024 + XX as a half).
 * 2. Row sums, per row block of 8 input rows: D = A_h B, with B (16 x 8)
 *    the rows' k16 chunk of 8 pixels x 2 channels, read by ldmatrix
 *    (image rows as B's columns), and A_h (16 x 16) the taps as a banded
 *    matrix: output slot m = (column m / 2, channel m % 2) takes input k =
 *    (pixel k / 2, channel k % 2) with tap k / 2 - m / 2 + R - R4 where the
 *    channels agree. The accumulator starts at -1024 * (sum of the taps) to
 *    take out the 1024 of every input. KH k16 steps cover the window.
 * 3. The fragment a row sum leaves in a lane (slot g, rows 2t and 2t + 1;
 *    slot g + 8, the same rows) is, packed into half2, exactly the B
 *    fragment of the column sums (rows 2t, 2t + 1 as k, slot g as n): the
 *    column sums D = A_v H take the row sums from registers, with A_v (16 x
 *    16) the vertical taps banded the same way, two k16 steps for 16
 *    output rows (R <= 8), two m-blocks for the tile's 32 rows.
 * 4. A lane then holds channels 0..3 of pixels (row g and g + 8, columns t
 *    and t + 4) of each m-block: rounded as the walks do (.SAT, one fma
 *    with 1.5 * 2^23), packed, stored where the region has them.
 *
 * Numbers: inputs are exact (whole numbers in 0..255 as halves), taps and
 * row sums are rounded to half, products are exact and sums float (the
 * tensor cores' accumulation). With sum |k| <= 1 each way, the taps' rounding
 * moves a result by at most 255 * 2^-12 each way and the row sums' by
 * 2^-4: under 0.2 in all, so a result is within 1 of the reference's, as
 * the fma versions are (docs/NUMERICS.md). The launcher takes only taps
 * whose absolute sums are at most 1 (gauss and box). */

#include "mma_tile.cuh"

/* Tap i of taps (N of them) as a half's bits, 0 outside 0..N-1. */
static __device__ __forceinline__ uint32_t sm_tap(const __half *taps, int i, int n)
{
    return i >= 0 && i < n ? (uint32_t)__half_as_ushort(taps[i]) : 0u;
}

/* Taps 0..N-1 of each direction into shared memory as halves, zero up to
 * 16, times sx (the rows') and sy (the columns'): powers of 2. */
template <int N>
static __device__ __forceinline__ void sm_put_taps(__half (*taps)[16], const sep_walk_taps<N> &k, float sx = 1.0f,
                                                   float sy = 1.0f)
{
    if (threadIdx.x < 16) {
        __half x = __float2half_rn(0.0f), y = x;
#pragma unroll
        for (int i = 0; i < N; i++)
            if ((int)threadIdx.x == i) {
                x = __float2half_rn(k.kx[i] * sx);
                y = __float2half_rn(k.ky[i] * sy);
            }
        taps[0][threadIdx.x] = x;
        taps[1][threadIdx.x] = y;
    }
}

/* Row-sum slot m as a column of the warp's 8: v13 takes m / 2; v15 pairs
 * slots so that the column sums leave a lane columns 2t and 2t + 1. */
static __host__ __device__ constexpr int sm_col(int m, bool paired) { return paired ? ((m >> 1) & 3) * 2 + (m >> 3) : m / 2; }

/* The banded tap matrices as the lane's A fragments: element (m, kk) of
 * ah[s] (row sums) or av[s] (column sums) at m = g + 8 (i & 1), kk = 16 s
 * + 2 t + 8 (i >> 1) + e. */
template <int N, bool PAIRED>
static __device__ __forceinline__ void sm_tap_fragments(const __half (*taps)[16], int g, int t,
                                                        uint32_t (&ah)[sm_shape<(N - 1) / 2>::KH][4],
                                                        uint32_t (&av)[2][4])
{
    constexpr int R = (N - 1) / 2;
    using S = sm_shape<R>;
#pragma unroll
    for (int s = 0; s < S::KH; s++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int m = g + 8 * (i & 1), kk = 16 * s + 2 * t + 8 * (i >> 1);
            /* kk is even: its element e is channel e of pixel kk / 2, which
             * output slot m takes only for its own channel m & 1 */
            const int tap = kk / 2 - sm_col(m, PAIRED) + R - S::R4;
            ah[s][i] = (m & 1) ? sm_tap(taps[0], tap, N) << 16 : sm_tap(taps[0], tap, N);
        }
#pragma unroll
    for (int s = 0; s < 2; s++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int m = g + 8 * (i & 1), kr = 16 * s + 2 * t + 8 * (i >> 1);
            av[s][i] = sm_tap(taps[1], kr - m, N) | sm_tap(taps[1], kr + 1 - m, N) << 16;
        }
}

/* A lane's part of a tile's input: its 4-pixel chunk (lane < CHUNKS) of
 * rows warp, warp + SM_WARPS, ... as loaded, before conversion. */
struct sm_rows {
    uint32_t w[SM_ROWS_PER_WARP][4];
};


/* Load the lane's chunks of the tile whose first column and row are tx0,
 * ty0 (the prefetch of a tile ahead). */
template <int R>
static __device__ __forceinline__ void sm_load(const conv_io &io, uint32_t border_px, int vec, int tx0, int ty0,
                                               sm_rows &pf)
{
    using S = sm_shape<R>;
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    /* the columns and rows some output of the region reads: the source
     * view holds these and no others */
    const int nx0 = io.dx0 - R, nx1 = io.dx0 + io.dw + R, ny0 = io.dy0 - R, ny1 = io.dy0 + io.dh + R;
    const int gx = tx0 + 4 * lane;
    const bool mine = lane < S::CHUNKS;
    /* most tiles: every row and column needed and inside the image, so
     * rows are a pitch apart and no pixel goes through the border */
    if (vec && tx0 >= max(0, nx0) && tx0 + S::TWI <= min(io.fw, nx1) && ty0 >= max(0, ny0) &&
        ty0 + SM_ROWS_IN <= min(io.fh, ny1)) {
        if (!mine) return;
        const unsigned char *p = io.src + (ptrdiff_t)(ty0 + warp - io.sy0) * (ptrdiff_t)io.sp + (ptrdiff_t)(gx - io.sx0) * 4;
#pragma unroll
        for (int i = 0; i < SM_ROWS_PER_WARP; i++) {
            const uint4 v = __ldg((const uint4 *)(p + (ptrdiff_t)(SM_WARPS * i) * (ptrdiff_t)io.sp));
            pf.w[i][0] = v.x; pf.w[i][1] = v.y; pf.w[i][2] = v.z; pf.w[i][3] = v.w;
        }
        return;
    }
    const bool whole = vec && gx >= 0 && gx >= nx0 && gx + 4 <= io.fw && gx + 4 <= nx1;
    int cols[4];
#pragma unroll
    for (int p = 0; p < 4; p++) cols[p] = gx + p >= nx0 && gx + p < nx1 ? cw_col(io, gx + p, true) : -2;
#pragma unroll
    for (int i = 0; i < SM_ROWS_PER_WARP; i++) {
        const uint4 v = sm_chunk<R>(io, border_px, ty0 + warp + SM_WARPS * i, gx, !mine, whole, cols);
        pf.w[i][0] = v.x; pf.w[i][1] = v.y; pf.w[i][2] = v.z; pf.w[i][3] = v.w;
    }
}

/* The loaded chunks into the two half2 planes: channels 0 and 2 of a pixel
 * as (1024 + byte) halves in plane 0, channels 1 and 3 in plane 1. */
template <int R>
static __device__ __forceinline__ void sm_put(uint32_t (*planes)[SM_ROWS_IN][sm_shape<R>::PITCH], const sm_rows &pf)
{
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    if (lane >= sm_shape<R>::CHUNKS) return;
#pragma unroll
    for (int i = 0; i < SM_ROWS_PER_WARP; i++) {
        uint4 lo, hi;
        sm_halves(pf.w[i], lo, hi);
        const int r = warp + SM_WARPS * i;
        *(uint4 *)&planes[0][r][4 * lane] = lo;
        *(uint4 *)&planes[1][r][4 * lane] = hi;
    }
}

/* v13's and v15's output with an orientation after: the pixel's place in
 * the oriented image (the map th), and the matrix it carries, by the
 * matrix kernel's rule on the rounded bytes. */
static __device__ __forceinline__ void sm_then_store(const conv_io &io, const sep_then &th, uint32_t px, int gx, int gy)
{
    if (th.matrix) {
        union { uint32_t w; uint8_t e[4]; } q = { px };
        matrix_pixel<uint8_t, 4, true>(q.e, th.k);
        px = q.w;
    }
    const int x = th.a * gx + th.b * gy + th.e, y = th.c * gx + th.d * gy + th.f;
    *(uint32_t *)(io.dst + (size_t)y * io.dp + (size_t)x * 4) = px;
}

/* Each block walks tiles blockIdx.x, + gridDim.x, ... (row by row of
 * tiles_x): the tap matrices are built once per block, and each tile's
 * loads are issued while the tile before is summed. */
template <int N, bool THEN>
__global__ void __launch_bounds__(SM_THREADS, 2)
    sep_mma(conv_io io, sep_walk_taps<N> k, uint32_t border_px, float h_offset, int vec, int ax0, int ay0, int tiles_x,
            int tiles, sep_then th)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    constexpr int R = (N - 1) / 2;
    using S = sm_shape<R>;
    __shared__ __align__(16) uint32_t planes[2][SM_ROWS_IN][S::PITCH];
    __shared__ __half taps[2][16];
    int tile = (int)blockIdx.x;
    if (tile >= tiles) return;

    sm_put_taps<N>(taps, k);
    sm_rows pf;
    {
        const int X0 = ax0 + (tile % tiles_x) * SM_TW, Y0 = ay0 + (tile / tiles_x) * SM_TH;
        sm_load<R>(io, border_px, vec, X0 - S::R4, Y0 - R, pf);
    }
    __syncthreads();

    const int lane = (int)threadIdx.x & 31, g = lane >> 2, t = lane & 3, warp = (int)threadIdx.x >> 5;
    uint32_t ah[S::KH][4], av[2][4];
    sm_tap_fragments<N, false>(taps, g, t, ah, av);
    const int lq = lane >> 3, lr = lane & 7;
    const uint32_t *lp = &planes[lq >> 1][lr][8 * warp + 4 * (lq & 1)];
    const int x_end = io.dx0 + io.dw, y_end = io.dy0 + io.dh;
    const float zero = 0.0f;

    for (; tile < tiles; tile += (int)gridDim.x) {
        const int X0 = ax0 + (tile % tiles_x) * SM_TW, Y0 = ay0 + (tile / tiles_x) * SM_TH;
        /* 1. this tile's input into the planes (after every warp has read
         * the last tile's), then the next tile's loads in flight */
        __syncthreads();
        sm_put<R>(planes, pf);
        __syncthreads();
        const int next = tile + (int)gridDim.x;
        if (next < tiles)
            sm_load<R>(io, border_px, vec, ax0 + (next % tiles_x) * SM_TW - S::R4, ay0 + (next / tiles_x) * SM_TH - R, pf);

        /* 2. row sums of the 6 row blocks, both channel pairs, as half2 B
         * fragments: hb[j][pair][slot half] */
        uint32_t hb[SM_BLOCKS][2][2];
#pragma unroll
        for (int j = 0; j < SM_BLOCKS; j++) {
            float d[2][4];
            sm_plane_products<S::KH, true>(lp + 8 * j * S::PITCH, ah, d, h_offset);
#pragma unroll
            for (int p = 0; p < 2; p++) {
                hb[j][p][0] = sm_half2(d[p][0], d[p][1]);
                hb[j][p][1] = sm_half2(d[p][2], d[p][3]);
            }
        }

        /* 3. column sums and 4. the output, per m-block of 16 rows and half
         * of the 8 columns */
        const int ox = X0 + 8 * warp + t;
#pragma unroll
        for (int mb = 0; mb < 2; mb++)
#pragma unroll
            for (int nb = 0; nb < 2; nb++) {
                float v[2][4];
#pragma unroll
                for (int p = 0; p < 2; p++) {
                    sm_mma_c(v[p], av[0], hb[2 * mb][p][nb], hb[2 * mb + 1][p][nb], zero);
                    sm_mma(v[p], av[1], hb[2 * mb + 2][p][nb], hb[2 * mb + 3][p][nb]);
                }
                const int gx = ox + 4 * nb;
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int gy = Y0 + 16 * mb + g + 8 * h;
                    const float c[4] = { v[0][2 * h], v[1][2 * h], v[0][2 * h + 1], v[1][2 * h + 1] };
                    uint32_t n[4];
                    sm_round4(n, c);
                    uint32_t px = sm_pack(n);
                    if (gx >= io.dx0 && gx < x_end && gy >= io.dy0 && gy < y_end) {
                        if constexpr (THEN) sm_then_store(io, th, px, gx, gy);
                        else *(uint32_t *)(io.dst + (size_t)(gy - io.dy0) * io.dp + (size_t)(gx - io.dx0) * 4) = px;
                    }
                }
            }
    }
#endif
}

/* ------------------------------------------------------------------ v15
 * v13 with three changes, each aimed at what the profile of v13 showed
 * (docs/PERFORMANCE.md, "Separable convolution"): 128 registers a thread
 * held it to 16 warps an SM with one eligible warp per scheduler, and its
 * 4-byte stores filled half of each 32-byte sector.
 * 1. The next tile's input goes into shared memory raw, by cp.async: no
 *    registers hold it while this tile is summed and no pass converts it.
 *    The B fragments are made from the raw pixels as they are needed: one
 *    ldmatrix gives a lane pixel t and t + 4 of its row for two k16 steps,
 *    and four byte permutes a step make the (1024 + byte) halves of both
 *    channel pairs. Tiles that touch the border or the region's edge are
 *    stored pixel by pixel through the border mode, as v13 loads them
 *    (v21 copies those by cp.async too: sr_fill).
 * 2. Three or four blocks an SM (at most 80 or 64 registers; four spill
 *    a few bytes), the row blocks summed as the column sums need them
 *    (four held at a time, not six).
 * 3. The row sums' output slots are ordered so that column sums leave a
 *    lane pixels 2t and 2t + 1 of its rows, not t and t + 4: one 8-byte
 *    store a row, whole sectors. Slot m is column sm_col(m, true), channel m & 1.
 * Each output column takes the same taps in the same k16 steps as in v13,
 * so the sums and the bytes are v13's. */


/* Row sums of row block j (8 input rows) of the raw tile at lb (this
 * lane's ldmatrix address), both channel pairs, as half2 B fragments of
 * the column sums: h[pair][slot half]. TINY: as sm_row_products. */
template <int R, bool TINY>
static __device__ __forceinline__ void sr_rows(const uint32_t *lb, int j, const uint32_t (&ah)[sm_shape<R>::KH][4],
                                               float h_offset, uint32_t (&h)[2][2])
{
    using S = sm_shape<R>;
    float d[2][4];
    sm_row_products<S::KH, true, TINY>(lb + 8 * j * S::PITCH, ah, d, h_offset);
#pragma unroll
    for (int p = 0; p < 2; p++) {
        h[p][0] = sm_half2(d[p][0], d[p][1]);
        h[p][1] = sm_half2(d[p][2], d[p][3]);
    }
}

/* v18's output with an orientation after (and a matrix): the pixels of
 * sr_out, rounded as there, the matrix applied to the rounded values
 * without packing them into bytes and out again (the value k of a rounded
 * channel is its bits less 1.5 * 2^23), and stored at byte base + x sx +
 * y sy of the destination: one address a lane, three offsets, no map per
 * pixel. INSIDE: the whole tile is in the region, so no pixel is checked.
 * The matrix's rule is matrix_pixel's, so the bytes are v15's. */
template <bool INSIDE>
static __device__ __forceinline__ void sr_then_steps(const conv_io &io, const sep_then &th, const float (&v)[2][2][4],
                                                     int gx, int gy0)
{
    const int lane = (int)threadIdx.x & 31, g = lane >> 2;
    const int x_end = io.dx0 + io.dw, y_end = io.dy0 + io.dh;
    unsigned char *const at = io.dst + th.base + (long long)gx * th.sx + (long long)(gy0 + g) * th.sy;
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int nb = 0; nb < 2; nb++) {
            const int gy = gy0 + g + 8 * h, x0 = gx + nb;
            if (!INSIDE && (x0 < io.dx0 || x0 >= x_end || gy < io.dy0 || gy >= y_end)) continue;
            const float c[4] = { v[nb][0][2 * h], v[nb][1][2 * h], v[nb][0][2 * h + 1], v[nb][1][2 * h + 1] };
            uint32_t n[4];
            sm_round4(n, c);
            if (th.matrix) {
                const float r = sm_round_value(n[0]), gr = sm_round_value(n[1]), b = sm_round_value(n[2]);
                if (th.matrix == SEP_MATRIX_PLAIN)
#pragma unroll
                    for (int i = 0; i < 3; i++) n[i] = matrix_row_plain_bits(th.k, i, r, gr, b);
                else
#pragma unroll
                    for (int i = 0; i < 3; i++) n[i] = ts_exact_round_sat_bits(matrix_row(th.k, i, r, gr, b), 255.0f);
            }
            *(uint32_t *)(at + (nb ? th.sx : 0) + (h ? 8 * th.sy : 0)) = sm_pack(n);
        }
}

/* The column sums v[nb][pair] of sr_out as lane (g, t)'s pixels 2t and
 * 2t + 1 of row g (h = 0) or g + 8 (h = 1), rounded and packed. */
static __device__ __forceinline__ void sr_pair(const float (&v)[2][2][4], int h, uint32_t (&px)[2])
{
#pragma unroll
    for (int nb = 0; nb < 2; nb++) {
        const float c[4] = { v[nb][0][2 * h], v[nb][1][2 * h], v[nb][0][2 * h + 1], v[nb][1][2 * h + 1] };
        uint32_t n[4];
        sm_round4(n, c);
        px[nb] = sm_pack(n);
    }
}

/* Output rows Y0 + 16 mb .. + 15 of the warp's 8 columns from the row
 * sums of row blocks 2 mb .. 2 mb + 3 (a0..a3): column sums, rounding as
 * v13, then lane (g, t) stores pixels 2t and 2t + 1 of rows g and g + 8.
 * STEPS: an orientation after is stored by sr_then_steps (v18). INSIDE:
 * the whole tile is in the region (and, without an orientation, st8). */
template <bool THEN, bool STEPS, bool INSIDE>
static __device__ __forceinline__ void sr_out(const conv_io &io, const sep_then &th, const uint32_t (&av)[2][4],
                                              const uint32_t (&a0)[2][2], const uint32_t (&a1)[2][2],
                                              const uint32_t (&a2)[2][2], const uint32_t (&a3)[2][2], int gx, int gy0,
                                              int st8)
{
    const int lane = (int)threadIdx.x & 31, g = lane >> 2;
    float v[2][2][4];
#pragma unroll
    for (int nb = 0; nb < 2; nb++)
#pragma unroll
        for (int p = 0; p < 2; p++) {
            sm_mma_c(v[nb][p], av[0], a0[p][nb], a1[p][nb], 0.0f);
            sm_mma(v[nb][p], av[1], a2[p][nb], a3[p][nb]);
        }
    if constexpr (THEN && STEPS) {
        sr_then_steps<INSIDE>(io, th, v, gx, gy0);
        return;
    }
    if constexpr (!THEN && INSIDE) {
        /* the whole tile in the region, 8-byte stores allowed: one address,
         * no checks */
        unsigned char *at = io.dst + (size_t)(gy0 + g - io.dy0) * io.dp + (size_t)(gx - io.dx0) * 4;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            uint32_t px[2];
            sr_pair(v, h, px);
            *(uint2 *)(at + (h ? 8 * io.dp : 0)) = make_uint2(px[0], px[1]);
        }
        return;
    }
    const int x_end = io.dx0 + io.dw, y_end = io.dy0 + io.dh;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int gy = gy0 + g + 8 * h;
        uint32_t px[2];
        sr_pair(v, h, px);
        if (gy < io.dy0 || gy >= y_end) continue;
        if constexpr (THEN) {
#pragma unroll
            for (int nb = 0; nb < 2; nb++) {
                const int x0 = gx + nb;
                if (x0 < io.dx0 || x0 >= x_end) continue;
                sm_then_store(io, th, px[nb], x0, gy);
            }
        } else {
            unsigned char *row = io.dst + (size_t)(gy - io.dy0) * io.dp;
            if (st8 && gx >= io.dx0 && gx + 2 <= x_end) {
                *(uint2 *)(row + (size_t)(gx - io.dx0) * 4) = make_uint2(px[0], px[1]);
            } else {
#pragma unroll
                for (int nb = 0; nb < 2; nb++)
                    if (gx + nb >= io.dx0 && gx + nb < x_end) *(uint32_t *)(row + (size_t)(gx + nb - io.dx0) * 4) = px[nb];
            }
        }
    }
}

/* Blocks walk tiles as sm_walk_tiles does: buffer it & 1 holds this
 * tile's input while the next one's lands in the other. A tile is MB
 * m-blocks of 16 output rows, summed from 2 MB + 2 row blocks of 8 input
 * rows, four held at a time: v15's 2 in static shared memory, or v21's 4
 * (sep_mma_tile), whose tiles also fill their edges by cp.async and, where
 * wholly inside the region, store their pixels with one address a lane and
 * no checks. TINY (v23): the inputs are the exact halves byte * 2^-24
 * (sm_row_products), the row taps are scaled by 2^15 and the column taps
 * by 2^9. The row sums then come out at 2^-9 of their value (under 0.5,
 * normal halves from 2^-5 of a level on, as exact relative to their value
 * as v15's), the column taps take the scale out again, and no accumulator
 * starts at an offset: no register moves to put it there, and sums of
 * exact products with no 1024s to cancel. The bytes are not v15's (other
 * float roundings), and within 1 of the reference's as every tensor
 * version's. */
template <int R, int MB>
struct sep_mma_tile {
    static constexpr int TH = 16 * MB;                /* output rows */
    static constexpr int ROWS = 8 * (2 * MB + 2);     /* input rows: TH + 2 R <= TH + 16 */
    static constexpr bool V21 = MB == 4;
    /* dynamic shared memory: v21's two buffers (past the 48 KB of static memory) */
    static constexpr size_t SMEM = V21 ? (size_t)2 * ROWS * sm_shape<R>::PITCH * sizeof(uint32_t) : 0;
};

template <int N, bool THEN, int BLOCKS_PER_SM, bool STEPS, int MB, bool TINY>
__global__ void __launch_bounds__(SM_THREADS, BLOCKS_PER_SM)
    sep_mma_raw(conv_io io, sep_walk_taps<N> k, uint32_t border_px, float h_offset, int vec, int st8, int ax0, int ay0,
                int tiles_x, int tiles, sep_then th)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    constexpr int R = (N - 1) / 2;
    using S = sm_shape<R>;
    using T = sep_mma_tile<R, MB>;
    static_assert(MB == 2 || MB == 4, "v15's tiles or v21's");
    __shared__ __align__(16) uint32_t fixed[T::V21 ? 1 : 2 * T::ROWS][S::PITCH];
    uint32_t (*const raw)[S::PITCH] = T::V21 ? reinterpret_cast<uint32_t (*)[S::PITCH]>(sm_dynamic) : fixed;
    __shared__ __half taps[2][16];
    sm_walk w(tiles_x, tiles);
    if (!w.more()) return;

    sm_put_taps<N>(taps, k, TINY ? 32768.0f : 1.0f, TINY ? 512.0f : 1.0f);
    sm_walk_first<R, T::TH, T::ROWS, T::V21>(io, border_px, vec, ax0, ay0, w, raw);
    __syncthreads();

    const int lane = (int)threadIdx.x & 31, g = lane >> 2, t = lane & 3, warp = (int)threadIdx.x >> 5;
    /* output slot m of the row sums is column sm_col(m, true) */
    uint32_t ah[S::KH][4], av[2][4];
    sm_tap_fragments<N, true>(taps, g, t, ah, av);
    /* ldmatrix x4: matrix q of row block j is rows lane & 7, pixels
     * 4 (q & 1) .. of k16 step q >> 1 */
    const int lq = lane >> 3;
    const uint32_t *lp = &raw[lane & 7][8 * warp + 4 * (lq & 1) + 8 * (lq >> 1)];

    sm_walk_tiles<R, T::TH, T::ROWS, T::V21>(io, border_px, vec, ax0, ay0, w, raw, [&](int it, int X0, int Y0) {
        const uint32_t *lb = lp + it * (T::ROWS * S::PITCH);
        const int gx = X0 + 8 * warp + 2 * t;
        /* the whole tile in the region: v18's fused output unchecked, and
         * v21's plain one too where its 8-byte stores are allowed */
        const bool inside = (THEN ? STEPS : T::V21 && st8 != 0) && X0 >= io.dx0 && X0 + SM_TW <= io.dx0 + io.dw &&
                            Y0 >= io.dy0 && Y0 + T::TH <= io.dy0 + io.dh;
        /* row block j's sums in h[j & 3]; m-block mb takes blocks 2 mb .. 2 mb + 3 */
        uint32_t h[4][2][2];
        sr_rows<R, TINY>(lb, 0, ah, h_offset, h[0]);
        sr_rows<R, TINY>(lb, 1, ah, h_offset, h[1]);
#pragma unroll
        for (int mb = 0; mb < MB; mb++) {
            sr_rows<R, TINY>(lb, 2 * mb + 2, ah, h_offset, h[(2 * mb + 2) & 3]);
            sr_rows<R, TINY>(lb, 2 * mb + 3, ah, h_offset, h[(2 * mb + 3) & 3]);
            const uint32_t(&a0)[2][2] = h[(2 * mb) & 3], (&a1)[2][2] = h[(2 * mb + 1) & 3];
            const uint32_t(&a2)[2][2] = h[(2 * mb + 2) & 3], (&a3)[2][2] = h[(2 * mb + 3) & 3];
            if (inside) sr_out<THEN, STEPS, true>(io, th, av, a0, a1, a2, a3, gx, Y0 + 16 * mb, st8);
            else sr_out<THEN, STEPS, false>(io, th, av, a0, a1, a2, a3, gx, Y0 + 16 * mb, st8);
        }
    });
#endif
}

/* Whether v13 and v15 take the op: the walks' cases (gauss and box, N x N) with N
 * <= 15, taps whose absolute sums are at most 1 (the bound above), and a
 * device with the tensor instructions used (compute capability 8.0 on). */
static bool sep_mma_takes(const sep_args &a, const tsk_op *op)
{
    if (a.nx < 3 || a.nx > 15 || a.ny != a.nx) return false;
    double sx = 0, sy = 0;
    for (int i = 0; i < a.nx; i++) {
        sx += fabs((double)op->u.sep.kx[i]);
        sy += fabs((double)op->u.sep.ky[i]);
    }
    return sx <= 1.0 + 1e-6 && sy <= 1.0 + 1e-6 && sm_device_ok();
}


/* One of two instances of a kernel, Then where the op carries an
 * orientation after it, in sm_blocks' blocks with smem bytes of dynamic
 * shared memory. */
template <auto Plain, auto Then, typename... Args>
static void sm_launch(bool then, int tiles, size_t smem, cudaStream_t s, Args... args)
{
    if (then) {
        sm_allow_smem<Then>(smem);
        Then<<<sm_blocks<Then>(tiles, smem), SM_THREADS, smem, s>>>(args...);
    } else {
        sm_allow_smem<Plain>(smem);
        Plain<<<sm_blocks<Plain>(tiles, smem), SM_THREADS, smem, s>>>(args...);
    }
}

/* v15's kernel (sep_mma_raw) at B blocks an SM and MB m-blocks a tile,
 * STEPS and TINY as sep_mma_go says. */
template <int N, int B, bool STEPS, int MB, bool TINY = false, typename... Args>
static void sep_mma_raw_launch(bool then, int tiles, cudaStream_t s, Args... args)
{
    sm_launch<sep_mma_raw<N, false, B, false, MB, TINY>, sep_mma_raw<N, true, B, STEPS, MB, TINY>>(
        then, tiles, sep_mma_tile<(N - 1) / 2, MB>::SMEM, s, args...);
}

/* Version v's tensor-core kernel: raw 0 for v13's, else v15's at that
 * many blocks an SM (3 or 4); steps: v18's output with an orientation
 * after (3 blocks an SM); mb: m-blocks of 16 output rows a tile of v15's
 * kernel (2, or 4 for v21); tiny: v23's inputs (with mb 4). */
template <int N>
static ts_status sep_mma_go(const sep_args &a, const tsk_op *op, uint32_t border_px, const conv_version &v,
                            cudaStream_t s, ts_err *err)
{
    const int raw = v.raw, mb = v.mb;
    const bool tiny = v.tiny && raw == 3 && mb == 4;
    sep_walk_taps<N> k;
    float sum = 0.0f;  /* the taps as halves sum exactly in float */
    for (int i = 0; i < N; i++) {
        k.kx[i] = op->u.sep.kx[i];
        k.ky[i] = op->u.sep.ky[i];
        sum += __half2float(__float2half_rn(k.kx[i]));
    }
    /* tiles on the image's grid of 8 columns and 16 rows, not the
     * region's: which taps share a k16 step and a float sum then depends on
     * a pixel's place in the image alone, so that tiled runs equal untiled
     * ones bit for bit */
    const int ax0 = a.io.dx0 & ~7, ay0 = a.io.dy0 & ~15;
    const int th = raw && mb == 4 ? 64 : SM_TH;
    const int tiles_x = (a.io.dx0 + a.io.dw - ax0 + SM_TW - 1) / SM_TW;
    const int tiles = tiles_x * ((a.io.dy0 + a.io.dh - ay0 + th - 1) / th);
    /* 16-byte loads: the tiles' columns start at multiples of 4 */
    const int vec = (ww_align(a.io) & 1u) && (a.io.sx0 & 3) == 0;
    const float off = tiny ? 0.0f : -1024.0f * sum;
    const bool then = a.then.on;
    if (!raw) {
        sm_launch<sep_mma<N, false>, sep_mma<N, true>>(then, tiles, 0, s, a.io, k, border_px, off, vec, ax0, ay0,
                                                        tiles_x, tiles, a.then);
        return TSK_LAUNCH_CHECK("separable convolution (tensor cores)", err);
    }
    /* v15's 8-byte stores: a lane's pixel pair starts at an even image
     * column, so at an even column of an 8-byte aligned destination */
    const int st8 = (a.io.dx0 & 1) == 0 && a.io.dp % 8 == 0 && ((uintptr_t)a.io.dst & 7u) == 0;
    const bool by_steps = v.steps && a.then.steps;
    if (tiny && by_steps)
        sep_mma_raw_launch<N, 3, true, 4, true>(then, tiles, s, a.io, k, border_px, off, vec, st8, ax0, ay0, tiles_x,
                                                tiles, a.then);
    else if (tiny)
        sep_mma_raw_launch<N, 3, false, 4, true>(then, tiles, s, a.io, k, border_px, off, vec, st8, ax0, ay0, tiles_x,
                                                 tiles, a.then);
    else if (raw == 4)
        sep_mma_raw_launch<N, 4, false, 2>(then, tiles, s, a.io, k, border_px, off, vec, st8, ax0, ay0, tiles_x,
                                           tiles, a.then);
    else if (mb == 4 && by_steps)
        sep_mma_raw_launch<N, 3, true, 4>(then, tiles, s, a.io, k, border_px, off, vec, st8, ax0, ay0, tiles_x, tiles,
                                          a.then);
    else if (mb == 4)
        sep_mma_raw_launch<N, 3, false, 4>(then, tiles, s, a.io, k, border_px, off, vec, st8, ax0, ay0, tiles_x,
                                           tiles, a.then);
    else if (by_steps)
        sep_mma_raw_launch<N, 3, true, 2>(then, tiles, s, a.io, k, border_px, off, vec, st8, ax0, ay0, tiles_x, tiles,
                                          a.then);
    else
        sep_mma_raw_launch<N, 3, false, 2>(then, tiles, s, a.io, k, border_px, off, vec, st8, ax0, ay0, tiles_x,
                                           tiles, a.then);
    return TSK_LAUNCH_CHECK("separable convolution (tensor cores, raw tiles)", err);
}

/* v13 (raw: v15, v16; steps: v18; mb 4: v21; tiny: v23) for N x N taps:
 * *done = 1 and the status when it takes the op. */
static ts_status sep_mma_version(const sep_args &a, const tsk_op *op, uint32_t border_px, const conv_version &v,
                                 cudaStream_t s, int *done, ts_err *err)
{
    if (!sep_mma_takes(a, op)) return TS_OK;
    *done = 1;
    switch (a.nx) {
    case 3: return sep_mma_go<3>(a, op, border_px, v, s, err);
    case 5: return sep_mma_go<5>(a, op, border_px, v, s, err);
    case 7: return sep_mma_go<7>(a, op, border_px, v, s, err);
    case 9: return sep_mma_go<9>(a, op, border_px, v, s, err);
    case 11: return sep_mma_go<11>(a, op, border_px, v, s, err);
    case 13: return sep_mma_go<13>(a, op, border_px, v, s, err);
    case 15: return sep_mma_go<15>(a, op, border_px, v, s, err);
    default: *done = 0; return TS_OK;
    }
}
