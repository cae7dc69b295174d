/* cpu_orient.c - the fast transpose family: pixels copied as bytes (no
 * float round trip). Codes 1 and 4 copy whole rows; 2 and 3 copy rows
 * reversed; 5..8 (transposes) walk the output in square blocks so that the
 * source rows a block reads stay in cache while it is written. */
#include "cpu_internal.h"

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
 * its column sx, and how far the source moves when x grows by one. */
static const unsigned char *source_of(const tsk_op *op, const ts_view *src, int x, int y, ptrdiff_t *step, int *col)
{
    int sx = 0, sy = 0, code = op->u.orient.code;
    ptrdiff_t ps = (ptrdiff_t)src->c * (ptrdiff_t)src->type, pitch = (ptrdiff_t)src->pitch;
    ref_orient_src(code, x, y, src->full_w, src->full_h, &sx, &sy);
    switch (code) {
    case 1: case 4: *step = ps; break;       /* sx = x */
    case 2: case 3: *step = -ps; break;      /* sx = W-1-x */
    case 5: case 8: *step = pitch; break;    /* sy = x */
    default: *step = -pitch; break;          /* 6, 7: sy = H-1-x */
    }
    *col = sx;
    return cpu_px(src, sx - src->x0, sy - src->y0);
}

/* Output rows y0..y1-1, columns x0..x1-1 (local to dst). */
static void copy_block(const tsk_op *op, const ts_view *src, ts_view *dst, int x0, int x1, int y0, int y1)
{
    size_t ps = (size_t)dst->c * (size_t)dst->type;
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
        if (sx == last && op->u.orient.code < 5) {
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

ts_status tsk_cpu_orient(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err)
{
    int code = op->u.orient.code;
    size_t ps = (size_t)dst->c * (size_t)dst->type;
    if (code == 1 || code == 4) {
        for (int y = 0; y < dst->h; y++) {
            ptrdiff_t step;
            int sx;
            memcpy(cpu_px(dst, 0, y), source_of(op, src, dst->x0, dst->y0 + y, &step, &sx), (size_t)dst->w * ps);
        }
        return TS_OK;
    }
    if (code == 2 || code == 3) {
        copy_block(op, src, dst, 0, dst->w, 0, dst->h);
        return TS_OK;
    }
    /* A block is bw output columns (bw source rows) by bh output rows
     * (bh source columns, about 192 bytes of each source row): long runs
     * of output, and source lines that stay in L1 across the block's rows.
     * For RGB8 on 6000x4000, 256 x 64 measured best of 64..1024 x 32..512,
     * walking down the output (along the source rows) inside a column of
     * blocks. */
    int bw = 256, bh = (int)(192 / ps) > 16 ? (int)(192 / ps) : 16;
    for (int bx = 0; bx < dst->w; bx += bw)
        for (int by = 0; by < dst->h; by += bh)
            copy_block(op, src, dst, bx, bx + bw < dst->w ? bx + bw : dst->w, by, by + bh < dst->h ? by + bh : dst->h);
    return TS_OK;
}
