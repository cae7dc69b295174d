/* cpu_orient.c - the fast transpose family: pixels copied as bytes (no
 * float round trip). Codes 1 and 4 copy whole rows; 2 and 3 copy rows
 * reversed; 5..8 (transposes) move square blocks of pixels through
 * registers, in tiles whose source rows stay in cache while they are read.
 *
 * Transpose blocks (x86-64): 16x16 one-byte and 8x8 two-byte pixels with
 * SSE2, which every x86-64 CPU has; with AVX2, 8x8 of 3- and 4-byte pixels
 * and 4x4 of 6- and 8-byte ones, 3- and 6-byte pixels widened to 4 and 8
 * bytes by a byte shuffle on the way in and narrowed on the way out
 * (without AVX2, SSE2 blocks of 4x4 4-byte and 2x2 8-byte pixels). Row
 * reversals have AVX2 versions for 1, 2, 3, 4, 6 and 8 bytes. Other pixel
 * sizes (12 and 16 bytes), the pixels outside whole blocks and other CPUs
 * take the pixel-by-pixel copy. */
#include "cpu_internal.h"
#include "ts_orient.h"

/* Copy n pixels of ps bytes from s, stepping sstep bytes, to d (packed).
 * A constant ps in each case lets the compiler turn the copy into one
 * load and one store. */
#define COPY_PIXELS(ps) \
    for (int i = 0; i < n; i++) memcpy(d + (size_t)i * (ps), s + (ptrdiff_t)i * sstep, (ps))

/* 3-byte pixels moved as 4-byte words (one load, one store instead of
 * two of each): each word's extra byte lands where the next pixel is then
 * written, and the last pixel moves 3 bytes, so nothing outside the n
 * pixels is written. Each word also reads the byte after its source
 * pixel: the caller makes sure that is the next pixel of the same source
 * row. */
static void copy_rgb_words(unsigned char *d, const unsigned char *s, ptrdiff_t sstep, int n)
{
    int i = 0;
    for (; i + 1 < n; i++) {
        uint32_t v;
        memcpy(&v, s + (ptrdiff_t)i * sstep, 4);
        memcpy(d + (size_t)i * 3, &v, 4);
    }
    if (i < n) memcpy(d + (size_t)i * 3, s + (ptrdiff_t)i * sstep, 3);
}

static void copy_strided(unsigned char *d, const unsigned char *s, ptrdiff_t sstep, int n, size_t ps)
{
    switch (ps) {
    case 1: COPY_PIXELS(1); break;
    case 2: COPY_PIXELS(2); break;
    case 3: COPY_PIXELS(3); break;
    case 4: COPY_PIXELS(4); break;
    case 6: COPY_PIXELS(6); break;
    case 8: COPY_PIXELS(8); break;
    case 12: COPY_PIXELS(12); break;
    case 16: COPY_PIXELS(16); break;
    default:
        for (int i = 0; i < n; i++) memcpy(d + (size_t)i * ps, s + (ptrdiff_t)i * sstep, ps);
        break;
    }
}

/* The source pixel of output pixel (x, y) (global), as a pointer into src,
 * its column sx, and how far the source moves when x grows by one: the
 * map's x coefficients, one pixel (sx = x or W-1-x) or one row (sy = x or
 * H-1-x) either way. */
static const unsigned char *source_of(const tsk_op *op, const ts_view *src, int x, int y, ptrdiff_t *step, int *col)
{
    int sx = 0, sy = 0, m[6], code = op->u.orient.code;
    ptrdiff_t ps = (ptrdiff_t)src->c * (ptrdiff_t)src->type, pitch = (ptrdiff_t)src->pitch;
    ts_orient_src(code, x, y, src->full_w, src->full_h, &sx, &sy);
    ts_orient_affine(code, src->full_w, src->full_h, m);
    *step = (ptrdiff_t)m[0] * ps + (ptrdiff_t)m[3] * pitch;
    *col = sx;
    return cpu_px(src, sx - src->x0, sy - src->y0);
}

/* Output rows y0..y1-1, columns x0..x1-1 (local to dst), pixel by pixel. */
static void copy_block(const tsk_op *op, const ts_view *src, ts_view *dst, int x0, int x1, int y0, int y1)
{
    size_t ps = (size_t)dst->c * (size_t)dst->type;
    if (x0 >= x1) return;
    for (int y = y0; y < y1; y++) {
        ptrdiff_t step;
        int sx, n = x1 - x0, last = src->x0 + src->w - 1;
        const unsigned char *s = source_of(op, src, dst->x0 + x0, dst->y0 + y, &step, &sx);
        unsigned char *d = cpu_px(dst, x0, y);
        if (ps != 3) {
            copy_strided(d, s, step, n, ps);
            continue;
        }
        /* words need the byte after each source pixel: a transpose reads
         * one column (sx) per output row, a flip reads sx, sx-1, ... */
        if (sx == last && !ts_orient_swaps(op->u.orient.code)) {
            memcpy(d, s, 3);
            d += 3;
            s += step;
            n--;
            sx--;
        }
        if (sx < last) copy_rgb_words(d, s, step, n);
        else copy_strided(d, s, step, n, ps);
    }
}

/* ------------------------------------------------------ transpose blocks */

/* The block movers, blockN_ISA(s, ss, d, ds, room) for N-byte pixels,
 * move one block of B x B pixels: source row k (k < B) starts at
 * s + k * ss and holds B pixels in ascending order; output row j starts at
 * d + j * ds and receives pixel j of every source row, in the order of k.
 * room: the 8 bytes after each output row's B pixels may be overwritten
 * (the caller writes them again later), so 3- and 6-byte rows are stored
 * as one 32-byte store instead of two. */

#if CPU_X86
/* One round of the perfect shuffle on n rows of 16 bytes: row i and row
 * i + n/2 interleaved in elements of the unpack's size. Element (r, c) of
 * an n x n matrix, its index the bits of r then those of c, moves to the
 * index rotated left by one bit, so log2(n) rounds transpose it. */
#define SHUFFLE_ROUND(v, t, n, lo, hi)                                \
    do {                                                              \
        for (int i_ = 0; i_ < (n) / 2; i_++) {                        \
            (t)[2 * i_] = lo((v)[i_], (v)[i_ + (n) / 2]);             \
            (t)[2 * i_ + 1] = hi((v)[i_], (v)[i_ + (n) / 2]);         \
        }                                                             \
    } while (0)

static void block1_sse2(const unsigned char *s, ptrdiff_t ss, unsigned char *d, ptrdiff_t ds, int room)
{
    __m128i a[16], b[16];
    (void)room;
    for (int k = 0; k < 16; k++) a[k] = _mm_loadu_si128((const __m128i *)(const void *)(s + k * ss));
    SHUFFLE_ROUND(a, b, 16, _mm_unpacklo_epi8, _mm_unpackhi_epi8);
    SHUFFLE_ROUND(b, a, 16, _mm_unpacklo_epi8, _mm_unpackhi_epi8);
    SHUFFLE_ROUND(a, b, 16, _mm_unpacklo_epi8, _mm_unpackhi_epi8);
    SHUFFLE_ROUND(b, a, 16, _mm_unpacklo_epi8, _mm_unpackhi_epi8);
    for (int j = 0; j < 16; j++) _mm_storeu_si128((__m128i *)(void *)(d + j * ds), a[j]);
}

static void block2_sse2(const unsigned char *s, ptrdiff_t ss, unsigned char *d, ptrdiff_t ds, int room)
{
    __m128i a[8], b[8];
    (void)room;
    for (int k = 0; k < 8; k++) a[k] = _mm_loadu_si128((const __m128i *)(const void *)(s + k * ss));
    SHUFFLE_ROUND(a, b, 8, _mm_unpacklo_epi16, _mm_unpackhi_epi16);
    SHUFFLE_ROUND(b, a, 8, _mm_unpacklo_epi16, _mm_unpackhi_epi16);
    SHUFFLE_ROUND(a, b, 8, _mm_unpacklo_epi16, _mm_unpackhi_epi16);
    for (int j = 0; j < 8; j++) _mm_storeu_si128((__m128i *)(void *)(d + j * ds), b[j]);
}

static void block4_sse2(const unsigned char *s, ptrdiff_t ss, unsigned char *d, ptrdiff_t ds, int room)
{
    __m128i a[4], b[4];
    (void)room;
    for (int k = 0; k < 4; k++) a[k] = _mm_loadu_si128((const __m128i *)(const void *)(s + k * ss));
    SHUFFLE_ROUND(a, b, 4, _mm_unpacklo_epi32, _mm_unpackhi_epi32);
    SHUFFLE_ROUND(b, a, 4, _mm_unpacklo_epi32, _mm_unpackhi_epi32);
    for (int j = 0; j < 4; j++) _mm_storeu_si128((__m128i *)(void *)(d + j * ds), a[j]);
}

static void block8_sse2(const unsigned char *s, ptrdiff_t ss, unsigned char *d, ptrdiff_t ds, int room)
{
    __m128i a[2], b[2];
    (void)room;
    for (int k = 0; k < 2; k++) a[k] = _mm_loadu_si128((const __m128i *)(const void *)(s + k * ss));
    SHUFFLE_ROUND(a, b, 2, _mm_unpacklo_epi64, _mm_unpackhi_epi64);
    for (int j = 0; j < 2; j++) _mm_storeu_si128((__m128i *)(void *)(d + j * ds), b[j]);
}

/* AVX2 blocks hold two source rows per register: the low 128 bits row k,
 * the high ones row k + B/2, loaded at the same column. The rounds of the
 * shuffle then run inside each 128-bit half, and each result is a whole
 * output row: its low half from rows 0..B/2-1, its high half from the
 * rest. */
static CPU_AVX2 inline __m256i load_pair(const unsigned char *lo, const unsigned char *hi)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)lo)),
                                   _mm_loadu_si128((const __m128i *)(const void *)hi), 1);
}

/* 24 bytes at the bottom of w stored at d: one 32-byte store when the 8
 * bytes after them may be overwritten, else 16 + 8. */
static CPU_AVX2 inline void store24(unsigned char *d, __m256i w, int room)
{
    if (room) {
        _mm256_storeu_si256((__m256i *)(void *)d, w);
    } else {
        _mm_storeu_si128((__m128i *)(void *)d, _mm256_castsi256_si128(w));
        _mm_storel_epi64((__m128i *)(void *)(d + 16), _mm256_extracti128_si256(w, 1));
    }
}

static CPU_AVX2 void block4_avx2(const unsigned char *s, ptrdiff_t ss, unsigned char *d, ptrdiff_t ds, int room)
{
    __m256i a[4], b[4], c[4], e[4];
    (void)room;
    for (int k = 0; k < 4; k++) {
        const unsigned char *r = s + k * ss, *r4 = s + (k + 4) * ss;
        a[k] = load_pair(r, r4);           /* pixels 0-3 */
        c[k] = load_pair(r + 16, r4 + 16); /* pixels 4-7 */
    }
    SHUFFLE_ROUND(a, b, 4, _mm256_unpacklo_epi32, _mm256_unpackhi_epi32);
    SHUFFLE_ROUND(b, a, 4, _mm256_unpacklo_epi32, _mm256_unpackhi_epi32);
    SHUFFLE_ROUND(c, e, 4, _mm256_unpacklo_epi32, _mm256_unpackhi_epi32);
    SHUFFLE_ROUND(e, c, 4, _mm256_unpacklo_epi32, _mm256_unpackhi_epi32);
    for (int j = 0; j < 4; j++) {
        _mm256_storeu_si256((__m256i *)(void *)(d + j * ds), a[j]);
        _mm256_storeu_si256((__m256i *)(void *)(d + (j + 4) * ds), c[j]);
    }
}

/* 3-byte pixels as 4-byte lanes: pixels 0-3 of a row from its first 16
 * bytes, pixels 4-7 from the 16 at byte 8 (offset 4 there), so the 24
 * bytes of the block's row are read and nothing else. */
static CPU_AVX2 void block3_avx2(const unsigned char *s, ptrdiff_t ss, unsigned char *d, ptrdiff_t ds, int room)
{
    const __m256i wide0 = _mm256_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1,
                                           0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1);
    const __m256i wide4 = _mm256_setr_epi8(4, 5, 6, -1, 7, 8, 9, -1, 10, 11, 12, -1, 13, 14, 15, -1,
                                           4, 5, 6, -1, 7, 8, 9, -1, 10, 11, 12, -1, 13, 14, 15, -1);
    const __m256i narrow = _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1,
                                            0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7);
    __m256i a[4], b[4], c[4], e[4];
    for (int k = 0; k < 4; k++) {
        const unsigned char *r = s + k * ss, *r4 = s + (k + 4) * ss;
        a[k] = _mm256_shuffle_epi8(load_pair(r, r4), wide0);
        c[k] = _mm256_shuffle_epi8(load_pair(r + 8, r4 + 8), wide4);
    }
    SHUFFLE_ROUND(a, b, 4, _mm256_unpacklo_epi32, _mm256_unpackhi_epi32);
    SHUFFLE_ROUND(b, a, 4, _mm256_unpacklo_epi32, _mm256_unpackhi_epi32);
    SHUFFLE_ROUND(c, e, 4, _mm256_unpacklo_epi32, _mm256_unpackhi_epi32);
    SHUFFLE_ROUND(e, c, 4, _mm256_unpacklo_epi32, _mm256_unpackhi_epi32);
    for (int j = 0; j < 4; j++) {
        store24(d + j * ds, _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(a[j], narrow), join), room);
        store24(d + (j + 4) * ds, _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(c[j], narrow), join), room);
    }
}

static CPU_AVX2 void block8_avx2(const unsigned char *s, ptrdiff_t ss, unsigned char *d, ptrdiff_t ds, int room)
{
    __m256i a[2], b[2], c[2], e[2];
    (void)room;
    for (int k = 0; k < 2; k++) {
        const unsigned char *r = s + k * ss, *r2 = s + (k + 2) * ss;
        a[k] = load_pair(r, r2);           /* pixels 0-1 */
        c[k] = load_pair(r + 16, r2 + 16); /* pixels 2-3 */
    }
    SHUFFLE_ROUND(a, b, 2, _mm256_unpacklo_epi64, _mm256_unpackhi_epi64);
    SHUFFLE_ROUND(c, e, 2, _mm256_unpacklo_epi64, _mm256_unpackhi_epi64);
    for (int j = 0; j < 2; j++) {
        _mm256_storeu_si256((__m256i *)(void *)(d + j * ds), b[j]);
        _mm256_storeu_si256((__m256i *)(void *)(d + (j + 2) * ds), e[j]);
    }
}

/* 6-byte pixels as 8-byte lanes, loaded as block3_avx2 loads. */
static CPU_AVX2 void block6_avx2(const unsigned char *s, ptrdiff_t ss, unsigned char *d, ptrdiff_t ds, int room)
{
    const __m256i wide0 = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, -1, -1, 6, 7, 8, 9, 10, 11, -1, -1,
                                           0, 1, 2, 3, 4, 5, -1, -1, 6, 7, 8, 9, 10, 11, -1, -1);
    const __m256i wide4 = _mm256_setr_epi8(4, 5, 6, 7, 8, 9, -1, -1, 10, 11, 12, 13, 14, 15, -1, -1,
                                           4, 5, 6, 7, 8, 9, -1, -1, 10, 11, 12, 13, 14, 15, -1, -1);
    const __m256i narrow = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, -1, -1, -1, -1,
                                            0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7);
    __m256i a[2], b[2], c[2], e[2];
    for (int k = 0; k < 2; k++) {
        const unsigned char *r = s + k * ss, *r2 = s + (k + 2) * ss;
        a[k] = _mm256_shuffle_epi8(load_pair(r, r2), wide0);
        c[k] = _mm256_shuffle_epi8(load_pair(r + 8, r2 + 8), wide4);
    }
    SHUFFLE_ROUND(a, b, 2, _mm256_unpacklo_epi64, _mm256_unpackhi_epi64);
    SHUFFLE_ROUND(c, e, 2, _mm256_unpacklo_epi64, _mm256_unpackhi_epi64);
    for (int j = 0; j < 2; j++) {
        store24(d + j * ds, _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(b[j], narrow), join), room);
        store24(d + (j + 2) * ds, _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(e[j], narrow), join), room);
    }
}
#endif

/* Where the whole blocks of a transpose are. Output block (bx, by) (its
 * top-left pixel, local) reads source rows from s0 + bx * ss on, at the
 * column of s0 + by * col, and writes its rows from d0 + by * pitch +
 * bx * ps on, ds apart. */
typedef struct tiles {
    const unsigned char *s0;
    unsigned char *d0;
    ptrdiff_t ss, col, ds, pitch;
    int wf, hf;     /* the whole blocks: wf x hf pixels */
    int room_to;    /* blocks with bx below this have room (8 bytes written again later) */
} tiles;

/* The source lines 64 bytes on in each row of a block, and the output
 * lines 64 bytes on in each of its rows, are asked for ahead: a group of
 * rows is read 16 to 32 bytes a row at a time, too many streams at once
 * for the hardware's prefetcher. */
enum { TILE_ROWS = 128, PREFETCH_AHEAD = 64 };

/* For each group of TILE_ROWS source rows (output columns), the rows of
 * blocks down the output, each left to right: the group's source rows are
 * read along, a line at a time, while they stay in cache. */
#define TILES_FN(name, attr, move, bs, ps)                                                        \
    static attr void name(const tiles *t)                                                         \
    {                                                                                             \
        for (int tx = 0; tx < t->wf; tx += TILE_ROWS) {                                           \
            int tx1 = tx + TILE_ROWS < t->wf ? tx + TILE_ROWS : t->wf;                            \
            for (int by = 0; by < t->hf; by += (bs)) {                                            \
                const unsigned char *srow = t->s0 + by * t->col;                                  \
                unsigned char *drow = t->d0 + by * t->pitch;                                      \
                for (int bx = tx; bx < tx1; bx += (bs)) {                                         \
                    const unsigned char *s = srow + bx * t->ss;                                   \
                    unsigned char *d = drow + bx * (ps);                                          \
                    for (int k = 0; k < (bs); k++) { /* addresses that may lie past the image */  \
                        __builtin_prefetch((const void *)((uintptr_t)s + (uintptr_t)(k * t->ss) +   \
                                                          PREFETCH_AHEAD), 0, 3);                 \
                        __builtin_prefetch((const void *)((uintptr_t)d + (uintptr_t)(k * t->ds) +   \
                                                          PREFETCH_AHEAD), 1, 3);                 \
                    }                                                                             \
                    move(s, t->ss, d, t->ds, bx < t->room_to);                                    \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }

typedef void tiles_fn(const tiles *t);

#if CPU_X86
#define CPU_AVX2_PF __attribute__((target("avx2,prfchw")))
TILES_FN(tiles1_sse2, , block1_sse2, 16, 1)
TILES_FN(tiles2_sse2, , block2_sse2, 8, 2)
TILES_FN(tiles4_sse2, , block4_sse2, 4, 4)
TILES_FN(tiles8_sse2, , block8_sse2, 2, 8)
TILES_FN(tiles3_avx2, CPU_AVX2_PF, block3_avx2, 8, 3)
TILES_FN(tiles4_avx2, CPU_AVX2_PF, block4_avx2, 8, 4)
TILES_FN(tiles6_avx2, CPU_AVX2_PF, block6_avx2, 4, 6)
TILES_FN(tiles8_avx2, CPU_AVX2_PF, block8_avx2, 4, 8)
#endif

/* The tiled transpose for ps-byte pixels on this CPU and its block size,
 * or NULL. */
static tiles_fn *tiles_for(size_t ps, int *size)
{
#if CPU_X86
    int avx2 = cpu_has_avx2();
    switch (ps) {
    case 1: *size = 16; return tiles1_sse2;
    case 2: *size = 8; return tiles2_sse2;
    case 3: *size = 8; return avx2 ? tiles3_avx2 : NULL;
    case 4: *size = avx2 ? 8 : 4; return avx2 ? tiles4_avx2 : tiles4_sse2;
    case 6: *size = 4; return avx2 ? tiles6_avx2 : NULL;
    case 8: *size = avx2 ? 4 : 2; return avx2 ? tiles8_avx2 : tiles8_sse2;
    default: break;
    }
#else
    (void)ps;
#endif
    *size = 0;
    return NULL;
}

/* Codes 5..8: the whole blocks in tiles, then the pixels right of and
 * below them one by one. Output pixel (x, y) reads source column sx(y) of
 * row sy(x), so a block's source rows are B consecutive rows (upwards for
 * codes 6 and 7, where sy = H-1-x) read at B consecutive columns, and its
 * output rows run down the output when sx grows with y (5, 6) and up when
 * it shrinks (7, 8). Within a row of blocks the blocks go left to right,
 * and the pixels right of the whole blocks come last, so a block's 8
 * bytes of room are always written again afterwards. */
static int transpose_blocks(const tsk_op *op, const ts_view *src, ts_view *dst)
{
    size_t ps = (size_t)dst->c * (size_t)dst->type;
    int bs = 0, code = op->u.orient.code, sx;
    tiles_fn *run = tiles_for(ps, &bs);
    if (!run || dst->w < bs || dst->h < bs) return 0;
    int up = code == 7 || code == 8; /* sx = W-1-y */
    ptrdiff_t step;
    tiles t;
    t.wf = dst->w - dst->w % bs;
    t.hf = dst->h - dst->h % bs;
    t.s0 = source_of(op, src, dst->x0, dst->y0 + (up ? bs - 1 : 0), &step, &sx);
    t.ss = step; /* sy = x: the next row; sy = H-1-x: the one above */
    t.col = up ? -(ptrdiff_t)ps : (ptrdiff_t)ps;
    t.pitch = (ptrdiff_t)dst->pitch;
    t.ds = up ? -t.pitch : t.pitch;
    t.d0 = cpu_px(dst, 0, up ? bs - 1 : 0);
    /* room: (w - bx - bs) * ps >= 8 */
    t.room_to = dst->w - bs - (int)((8 + ps - 1) / ps) + 1;
    run(&t);
    copy_block(op, src, dst, t.wf, dst->w, 0, dst->h);
    copy_block(op, src, dst, 0, t.wf, t.hf, dst->h);
    return 1;
}

/* ------------------------------------------------------- row reversals */

/* n pixels in reverse: output pixel i is source pixel n-1-i of the run
 * starting at s (its lowest address). Whole groups of g pixels reversed
 * in registers, the rest one by one. */
typedef void group_fn(const unsigned char *s, unsigned char *d, int room);

#if CPU_X86
static CPU_AVX2 void flip1_avx2(const unsigned char *s, unsigned char *d, int room)
{
    const __m256i rev = _mm256_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0,
                                         15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    (void)room;
    __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)s);
    _mm256_storeu_si256((__m256i *)(void *)d, _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, rev), 0x4E));
}

static CPU_AVX2 void flip2_avx2(const unsigned char *s, unsigned char *d, int room)
{
    const __m256i rev = _mm256_setr_epi8(14, 15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1,
                                         14, 15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1);
    (void)room;
    __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)s);
    _mm256_storeu_si256((__m256i *)(void *)d, _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, rev), 0x4E));
}

static CPU_AVX2 void flip4_avx2(const unsigned char *s, unsigned char *d, int room)
{
    (void)room;
    __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)s);
    _mm256_storeu_si256((__m256i *)(void *)d, _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0)));
}

static CPU_AVX2 void flip8_avx2(const unsigned char *s, unsigned char *d, int room)
{
    (void)room;
    __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)s);
    _mm256_storeu_si256((__m256i *)(void *)d, _mm256_permute4x64_epi64(v, 0x1B));
}

/* 8 pixels of 3 bytes: the low half gets pixels 4-7 (from byte 8, at
 * offset 4) and the high half pixels 0-3, each reversed into its low 12
 * bytes, then the halves joined. */
static CPU_AVX2 void flip3_avx2(const unsigned char *s, unsigned char *d, int room)
{
    const __m256i rev = _mm256_setr_epi8(13, 14, 15, 10, 11, 12, 7, 8, 9, 4, 5, 6, -1, -1, -1, -1,
                                         9, 10, 11, 6, 7, 8, 3, 4, 5, 0, 1, 2, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7);
    __m256i v = _mm256_shuffle_epi8(load_pair(s + 8, s), rev);
    store24(d, _mm256_permutevar8x32_epi32(v, join), room);
}

/* 4 pixels of 6 bytes, as flip3_avx2. */
static CPU_AVX2 void flip6_avx2(const unsigned char *s, unsigned char *d, int room)
{
    const __m256i rev = _mm256_setr_epi8(10, 11, 12, 13, 14, 15, 4, 5, 6, 7, 8, 9, -1, -1, -1, -1,
                                         6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7);
    __m256i v = _mm256_shuffle_epi8(load_pair(s + 8, s), rev);
    store24(d, _mm256_permutevar8x32_epi32(v, join), room);
}
#endif

/* The group reverser for ps-byte pixels on this CPU and its group size in
 * pixels, or NULL. */
static group_fn *flip_for(size_t ps, int *size)
{
#if CPU_X86
    if (cpu_has_avx2()) {
        switch (ps) {
        case 1: *size = 32; return flip1_avx2;
        case 2: *size = 16; return flip2_avx2;
        case 3: *size = 8; return flip3_avx2;
        case 4: *size = 8; return flip4_avx2;
        case 6: *size = 4; return flip6_avx2;
        case 8: *size = 4; return flip8_avx2;
        default: break;
        }
    }
#else
    (void)ps;
#endif
    *size = 0;
    return NULL;
}

/* Codes 2 and 3: every output row is a source row reversed. */
static void flip_rows(const tsk_op *op, const ts_view *src, ts_view *dst)
{
    size_t ps = (size_t)dst->c * (size_t)dst->type;
    int g = 0;
    group_fn *flip = flip_for(ps, &g);
    if (!flip || dst->w < g) {
        copy_block(op, src, dst, 0, dst->w, 0, dst->h);
        return;
    }
    int n = dst->w - dst->w % g;
    for (int y = 0; y < dst->h; y++) {
        ptrdiff_t step;
        int sx;
        /* the source pixel of the row's last output pixel: the lowest address */
        const unsigned char *lo = source_of(op, src, dst->x0 + dst->w - 1, dst->y0 + y, &step, &sx);
        unsigned char *d = cpu_px(dst, 0, y);
        for (int x = 0; x < n; x += g)
            flip(lo + (size_t)(dst->w - x - g) * ps, d + (size_t)x * ps, (size_t)(dst->w - x - g) * ps >= 8);
    }
    copy_block(op, src, dst, n, dst->w, 0, dst->h);
}

/* The permutation alone. */
static void orient_pixels(const tsk_op *op, const ts_view *src, ts_view *dst)
{
    int code = op->u.orient.code;
    size_t ps = (size_t)dst->c * (size_t)dst->type;
    if (code == 1 || code == 4) {
        for (int y = 0; y < dst->h; y++) {
            ptrdiff_t step;
            int sx;
            memcpy(cpu_px(dst, 0, y), source_of(op, src, dst->x0, dst->y0 + y, &step, &sx), (size_t)dst->w * ps);
        }
        return;
    }
    if (code == 2 || code == 3) {
        flip_rows(op, src, dst);
        return;
    }
    if (transpose_blocks(op, src, dst)) return;
    /* Pixel by pixel: a block is bw output columns (bw source rows) by bh
     * output rows (bh source columns, about 192 bytes of each source row):
     * long runs of output, and source lines that stay in L1 across the
     * block's rows. */
    int bw = 256, bh = (int)(192 / ps) > 16 ? (int)(192 / ps) : 16;
    for (int bx = 0; bx < dst->w; bx += bw)
        for (int by = 0; by < dst->h; by += bh)
            copy_block(op, src, dst, bx, bx + bw < dst->w ? bx + bw : dst->w, by, by + bh < dst->h ? by + bh : dst->h);
}

/* A carried matrix runs on the oriented rows, each copied aside first (the
 * matrix's row functions take distinct input and output), while the row
 * is still in cache. */
ts_status tsk_cpu_orient(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err)
{
    orient_pixels(op, src, dst);
    if (!op->u.orient.matrix || dst->w <= 0 || dst->h <= 0) return TS_OK;
    const tsk_op mat = tsk_orient_matrix_op(op);
    size_t row_bytes = (size_t)dst->w * (size_t)dst->c * (size_t)dst->type;
    unsigned char *row = malloc(row_bytes);
    if (!row) return ts_err_set(err, TS_E_NOMEM, "orient: no memory for a row");
    ts_status st = TS_OK;
    for (int y = 0; y < dst->h && st == TS_OK; y++) {
        ts_view in = *dst, out = *dst;
        out.data = dst->data + (size_t)y * dst->pitch;
        memcpy(row, out.data, row_bytes);
        in.data = row;
        in.pitch = out.pitch = row_bytes;
        in.y0 = out.y0 = dst->y0 + y;
        in.h = out.h = 1;
        st = tsk_cpu_point(&mat, &in, &out, err);
    }
    free(row);
    return st;
}
