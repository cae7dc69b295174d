/* c2d_imma.cuh - 2-D v18-v24: an N x N convolution (N = 3, 5) of RGBA8, LINEAR
 * or ABS, as sums of 8-bit integer matrix products on the tensor cores,
 * straight from the raw tile. Included by conv2d.cu after c2d_mma.cuh.
 *
 * Why: v13 (c2d_mma.cuh) is held by the L1/shared-memory data path, and
 * two thirds of its shared-memory traffic is the ldmatrix reads of its
 * operands: 16 input pixels as halves (64 bytes) for 8 outputs of a row,
 * for each of the N kernel rows (docs/PERFORMANCE.md, "2-D convolution").
 * With bytes as the operands, a k32 step is 8 whole RGBA8 pixels, which is
 * just what 4 outputs of a 5 x 5 row read: the operands come from the raw
 * tile with no conversion, 32 bytes for 4 outputs, and two windows 4
 * pixels apart share their middle chunk, so a warp reads 12 pixels (48
 * bytes) a row for its 8 outputs where v13 reads 128.
 *
 * How.
 * 1. Tiles as v13's (64 x 40 outputs, 48 input rows, raw, cp.async while
 *    the tile before is summed), but the outputs sit two columns left of
 *    v13's: an output's window of 5 starts two pixels left of it, and
 *    ldmatrix rows start on 16 bytes, so warp w's two windows start at
 *    tile columns 8 w and 8 w + 4 (R4 = 4 pixels left of the outputs'
 *    first column) and take the outputs 8 w - 2 .. 8 w + 5. So a row's
 *    8 outputs straddle two 32-byte sectors; v21 on (v22, the default,
 *    too) copy the tile from two pixels left of their outputs instead
 *    (8-byte copies, as the chunks then start 8 bytes past a 16-byte
 *    boundary), and their outputs sit on the image's grid.
 * 2. D (16 slots x 8 image rows) = A (the taps, 16 x 32) B (8 pixels x 4
 *    channels, 8 rows), in int32: slot m is pixel (m & 7) >> 1 of the
 *    window's 4 outputs, channel (m & 1) + 2 (m >> 3). Kernel row j's B
 *    is the window j rows lower (only an address); its A holds tap
 *    i - p - 2 + R at pixel i, output p, the same channel.
 * 3. The taps are not whole numbers: each is q / u, q = hi * 256 + lo
 *    with hi and lo signed bytes and u as large as |sum| < 2^22 allows
 *    (8192 or more where sum |k| <= 2), so every product runs twice (hi,
 *    lo) and the sums are exact integers: hi * 256 + lo = the sum of q
 *    times the bytes. The lo sums start at
 *    0x4B400000 (LINEAR), so one integer multiply-add leaves the float
 *    1.5 * 2^23 + sum, and one fma with .SAT scales it to 0..1 with the
 *    bias, another rounds it as the walks do.
 * 4. A lane ends with channels c and c + 2 (c = its column's parity) of
 *    one pixel of each window, two rows; one shuffle with its neighbour
 *    gives each lane whole pixels: the even one window 0's, the odd one
 *    window 1's, so the warp's stores of a row fill 32 bytes.
 *
 * Numbers: the bytes and the integer sums are exact; the taps' rounding to
 * multiples of 1 / u moves a result by at most 255 * N * N / (2 u) (0.39
 * at 5 x 5 where u = 8192), and the float steps by far less, so a result
 * is within 1 of the reference's. The sums do not depend on the tiling: tiled runs equal
 * untiled ones. */

/* The lo sums' start (LINEAR): the bits of the float 1.5 * 2^23 */
enum { CI_MAGIC = 0x4B400000 };

template <int N>
struct c2d_imma_taps {
    signed char hi[N * N], lo[N * N];
};

/* d = a b + d, and d = a b + (c, c, c, c), on m16n8k32 (signed taps, unsigned bytes) */
static __device__ __forceinline__ void ci_mma(int (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
static __device__ __forceinline__ void ci_mma_c(int (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1, int c)
{
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(c));
}

/* A channel's sums as its rounded byte (the low byte of the result):
 * hi * 256 + lo is the float 1.5 * 2^23 + sum (LINEAR: lo started at
 * CI_MAGIC), or ABS: |sum| made so; scale and offset map it to 0..1. */
template <bool ABS>
static __device__ __forceinline__ uint32_t ci_round(int hi, int lo, float scale, float offset)
{
    const int v = ABS ? abs(hi * 256 + lo) + CI_MAGIC : hi * 256 + lo;
    const float u = __saturatef(fmaf(__int_as_float(v), scale, offset));
    return (uint32_t)__float_as_int(fmaf(u, 255.0f, TS_EXACT_1P5));
}

/* Version V's shape: TH output rows from ROWS input rows (v20, v24: 56
 * from 64); PIPE, the next block's fragments read before this one's
 * rounding (v19..v21); LEFT, the tile's first column left of its first
 * output, and SHIFT, the outputs' place left of the image's grid (v21 on:
 * 2 and 0); BLOCKS, the blocks an SM must hold (v23: 4, so at most 64
 * registers a thread). */
template <int V>
struct ci_tile {
    static constexpr int TH = V == 20 || V == 24 ? 56 : 40, ROWS = TH + 8;
    static constexpr bool PIPE = V >= 19 && V <= 21;
    static constexpr int LEFT = V >= 21 ? 2 : 4, SHIFT = LEFT - 2;
    static constexpr int BLOCKS = V == 23 ? 4 : 3;
};

/* The row block's B fragments: the x4 loads at the lane's offsets. */
template <int LOADS>
static __device__ __forceinline__ void ci_load(uint32_t (&b)[4 * LOADS], const uint32_t *row, const int (&off)[LOADS])
{
#pragma unroll
    for (int i = 0; i < LOADS; i++) {
        uint32_t q[4];
        sm_ldmatrix_x4(q, row + off[i]);
#pragma unroll
        for (int e = 0; e < 4; e++) b[4 * i + e] = q[e];
    }
}

/* V: 18, 19 (the next row block's fragments loaded before this one's
 * rounding and stores), 20 (19 on tiles of 56 rows), 21 (19 with the
 * tile's copy from two pixels left of its outputs, so that the outputs
 * sit on the image's grid: a row's stores fill whole 32-byte sectors),
 * 22 (18 with 21's grid), 23 (22 with four blocks an SM), 24 (22 on
 * tiles of 56 rows: fewer barriers and halo rows an output) */
template <int N, bool ABS, int V>
__global__ void __launch_bounds__(SM_THREADS, ci_tile<V>::BLOCKS)
    c2d_imma(conv_io io, c2d_imma_taps<N> k, uint32_t border_px, float scale, float offset, int vec, int ax0, int ay0,
             int tiles_x, int tiles)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    using T = ci_tile<V>;
    constexpr int R = N / 2, TH = T::TH, ROWS = T::ROWS, LEFT = T::LEFT, SHIFT = T::SHIFT;
    constexpr bool PIPE = T::PIPE;
    /* ldmatrix matrices a row block: three 4-pixel chunks for each kernel row, in x4 loads */
    constexpr int MATS = 3 * N, LOADS = (MATS + 3) / 4;
    using S = sm_shape<R>;
    static_assert(S::R4 == 4 && 8 * (SM_WARPS - 1) + 12 <= S::TWI, "the windows lie in the tile");
    __shared__ __align__(16) uint32_t raw[2][ROWS][S::PITCH];
    __shared__ signed char taps[2][N * N];
    static_assert(ROWS % SM_WARPS == 0 && TH % 8 == 0, "whole row blocks, rows shared by the warps");
    sm_walk w(tiles_x, tiles);
    if (!w.more()) return;

    /* the taps' parts (an unrolled match: a parameter indexed by the
     * thread would be copied to local memory first) */
#pragma unroll
    for (int i = 0; i < N * N; i++)
        if ((int)threadIdx.x == i) {
            taps[0][i] = k.hi[i];
            taps[1][i] = k.lo[i];
        }
    sm_walk_first<R, TH, ROWS, false, LEFT>(io, border_px, vec, ax0, ay0, w, raw[0]);
    __syncthreads();

    const int lane = (int)threadIdx.x & 31, g = lane >> 2, t = lane & 3, warp = (int)threadIdx.x >> 5, odd = g & 1;
    /* kernel row j's A fragments, hi (x = 0) and lo (x = 1): register r is
     * slot g + 8 (r & 1) (output g >> 1, channel odd + 2 (r & 1)) at
     * pixel t + 4 (r >> 1) of the window, its own channel's byte */
    uint32_t a[N][2][4];
#pragma unroll
    for (int j = 0; j < N; j++)
#pragma unroll
        for (int x = 0; x < 2; x++)
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const int tap = t + 4 * (r >> 1) - (g >> 1) - 2 + R;
                const uint32_t v = tap >= 0 && tap < N ? (uint32_t)(unsigned char)taps[x][j * N + tap] : 0u;
                a[j][x][r] = v << (8 * (odd + 2 * (r & 1)));
            }
    /* the lane's row of matrix f = 4 i + (lane >> 3) of load i: kernel row
     * f / 3, chunk f % 3 (the matrices past 3 N repeat the last) */
    int off[LOADS];
#pragma unroll
    for (int i = 0; i < LOADS; i++) {
        const int f = min(4 * i + (lane >> 3), MATS - 1);
        off[i] = (f / 3 + (lane & 7)) * S::PITCH + 8 * warp + 4 * (f % 3);
    }
    /* the neighbours' bytes into whole pixels (step 4): lane's own pixel
     * from its word (keep) and the neighbour's (recv), rows 2t and 2t + 1 */
    const uint32_t sel0 = odd ? 0x1504u : 0x5140u, sel1 = odd ? 0x3726u : 0x7362u;
    const int lo0 = ABS ? 0 : CI_MAGIC;

    sm_walk_tiles<R, TH, ROWS, false, LEFT>(io, border_px, vec, ax0, ay0, w, raw[0], [&](int it, int X0, int Y0) {
        const uint32_t *tile = &raw[it][0][0];
        /* the lane's output column: window odd's pixel g >> 1 */
        const int x = X0 - SHIFT + 8 * warp + 4 * odd + (g >> 1);
        const bool x_in = x >= io.dx0 && x < io.dx0 + io.dw;
        const bool inside = X0 - SHIFT >= io.dx0 && X0 + SM_TW - SHIFT <= io.dx0 + io.dw && Y0 >= io.dy0 &&
                            Y0 + TH <= io.dy0 + io.dh;
        unsigned char *at = io.dst + (ptrdiff_t)(Y0 + 2 * t - io.dy0) * (ptrdiff_t)io.dp + (ptrdiff_t)(x - io.dx0) * 4;
        uint32_t b[4 * LOADS];
        if (PIPE) ci_load<LOADS>(b, tile, off);
#pragma unroll 1
        for (int rb = 0; rb < TH / 8; rb++, at += 8 * (ptrdiff_t)io.dp) {
            if (!PIPE) ci_load<LOADS>(b, tile + 8 * rb * S::PITCH, off);
            /* d[window][hi, lo] */
            int d[2][2][4];
#pragma unroll
            for (int j = 0; j < N; j++)
#pragma unroll
                for (int v = 0; v < 2; v++) {
                    const uint32_t b0 = b[3 * j + v], b1 = b[3 * j + v + 1];
                    if (j == 0) {
                        ci_mma_c(d[v][0], a[0][0], b0, b1, 0);
                        ci_mma_c(d[v][1], a[0][1], b0, b1, lo0);
                    } else {
                        ci_mma(d[v][0], a[j][0], b0, b1);
                        ci_mma(d[v][1], a[j][1], b0, b1);
                    }
                }
            /* v19: the next block's reads in flight while this one rounds */
            if (PIPE && rb + 1 < TH / 8) ci_load<LOADS>(b, tile + 8 * (rb + 1) * S::PITCH, off);
            /* word[v]: window v's channels odd and odd + 2, rows 2t and 2t + 1 */
            uint32_t word[2];
#pragma unroll
            for (int v = 0; v < 2; v++) {
                uint32_t n[4];
#pragma unroll
                for (int e = 0; e < 4; e++) n[e] = ci_round<ABS>(d[v][0][e], d[v][1][e], scale, offset);
                word[v] = __byte_perm(__byte_perm(n[0], n[2], 0x0040u), __byte_perm(n[1], n[3], 0x0040u), 0x5410u);
            }
            const uint32_t keep = odd ? word[1] : word[0];
            const uint32_t recv = __shfl_xor_sync(0xffffffffu, odd ? word[0] : word[1], 4);
            const uint32_t px0 = __byte_perm(keep, recv, sel0), px1 = __byte_perm(keep, recv, sel1);
            if (inside) {
                *(uint32_t *)at = px0;
                *(uint32_t *)(at + io.dp) = px1;
                continue;
            }
            if (!x_in) continue;
            const int y = Y0 + 8 * rb + 2 * t;
            if (y >= io.dy0 && y < io.dy0 + io.dh) *(uint32_t *)at = px0;
            if (y + 1 >= io.dy0 && y + 1 < io.dy0 + io.dh) *(uint32_t *)(at + io.dp) = px1;
        }
    });
#endif
}

/* Version V over io's region, in tiles on the image's grid of 8 columns,
 * their outputs SHIFT columns left of it (v18..v20: two, the windows'
 * 16-byte rows): one more column of tiles where the region's last columns
 * need it. */
template <int N, int V>
static void c2d_imma_launch(const conv_io &io, const c2d_imma_taps<N> &k, uint32_t border_px, float scale,
                            float offset, bool abs_mode, cudaStream_t s)
{
    using T = ci_tile<V>;
    const int ax0 = io.dx0 & ~7, ay0 = io.dy0;
    const int tiles_x = (io.dx0 + io.dw - (ax0 - T::SHIFT) + SM_TW - 1) / SM_TW;
    const int tiles = tiles_x * ((io.dh + T::TH - 1) / T::TH);
    const int vec = (ww_align(io) & 1u) && (io.sx0 & 3) == 0;
    if (abs_mode) {
        constexpr auto K = c2d_imma<N, true, V>;
        K<<<sm_blocks<K>(tiles), SM_THREADS, 0, s>>>(io, k, border_px, scale, offset, vec, ax0, ay0, tiles_x, tiles);
    } else {
        constexpr auto K = c2d_imma<N, false, V>;
        K<<<sm_blocks<K>(tiles), SM_THREADS, 0, s>>>(io, k, border_px, scale, offset, vec, ax0, ay0, tiles_x, tiles);
    }
}

/* Run version v (18..24) of N x N taps k (row by row) over io's region:
 * LINEAR (bias in 0..1 units) or ABS. The caller has checked c2d_mma_run's
 * conditions (sum |k| <= 2, RGBA8, a border the walk takes). */
template <int N>
static ts_status c2d_imma_run(const conv_io &io, const float *taps, float bias, bool abs_mode, int v,
                              uint32_t border_px, cudaStream_t s, ts_err *err)
{
    /* the taps' scale: as large as the sums' bound (255 sum |q| < 2^22)
     * and the parts' range (|q| <= 32000: hi in -125..125) allow */
    double sum = 0.0, most = 0.0;
    for (int i = 0; i < N * N; i++) {
        sum += fabs((double)taps[i]);
        most = fmax(most, fabs((double)taps[i]));
    }
    const double unit = sum > 0.0 ? fmin(32000.0 / most, (4194304.0 / 255.0 - N * N / 2.0 - 1.0) / sum) : 1.0;
    c2d_imma_taps<N> k;
    for (int i = 0; i < N * N; i++) {
        const double q = rint((double)taps[i] * unit);
        const double hi = floor((q + 128.0) / 256.0);
        k.hi[i] = (signed char)hi;
        k.lo[i] = (signed char)(q - 256.0 * hi);
    }
    /* 1.5 * 2^23 + sum to 0..1 units: sum / (unit * 255), plus the bias */
    const float scale = (float)(1.0 / (unit * 255.0));
    const float offset = (float)((abs_mode ? 0.0 : (double)bias) - (double)TS_EXACT_1P5 * (double)scale);
    if (v == 24) c2d_imma_launch<N, 24>(io, k, border_px, scale, offset, abs_mode, s);
    else if (v == 23) c2d_imma_launch<N, 23>(io, k, border_px, scale, offset, abs_mode, s);
    else if (v == 22) c2d_imma_launch<N, 22>(io, k, border_px, scale, offset, abs_mode, s);
    else if (v == 21) c2d_imma_launch<N, 21>(io, k, border_px, scale, offset, abs_mode, s);
    else if (v == 20) c2d_imma_launch<N, 20>(io, k, border_px, scale, offset, abs_mode, s);
    else if (v == 19) c2d_imma_launch<N, 19>(io, k, border_px, scale, offset, abs_mode, s);
    else c2d_imma_launch<N, 18>(io, k, border_px, scale, offset, abs_mode, s);
    return TSK_LAUNCH_CHECK("2-D convolution (integer tensor cores)", err);
}
