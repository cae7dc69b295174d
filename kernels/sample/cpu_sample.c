/* cpu_sample.c - the fast resampler: the reference's maths (tsk.h,
 * ref_sample.c) pixel by pixel, but a tap inside the image is read
 * straight from the source row with the type known outside the loop, and
 * only taps near or past the edges go through the border mode (area and
 * bicubic: every tap's source column and row found once). Each output row
 * is built in float and rounded once. */
#include "cpu_internal.h"

#include <math.h>
#include <stdlib.h>

/* The source pixel (x, y), image coordinates inside the image, channel ch. */
#define TAP(T, x, y, ch) \
    ((float)((const T *)(const void *)(s->data + (size_t)((y) - s->y0) * s->pitch))[(size_t)((x) - s->x0) * c + (ch)])

/* One output row: out[lx*c + ch] for output pixels (gx0 + lx, gy). */
#define SAMPLE_ROW(NAME, T)                                                                                 \
    static void NAME(const tsk_op *op, ref_reader *rd, int gx0, int gy, int w, float *out)                 \
    {                                                                                                        \
        const ts_view *s = rd->v;                                                                            \
        const float *inv = op->u.sample.inv;                                                                 \
        int c = s->c, W = s->full_w, H = s->full_h, bilinear = op->u.sample.interp == TSK_BILINEAR;          \
        ts_border b = op->u.sample.border;                                                                   \
        float bv = op->u.sample.border_value, cy = (float)gy + 0.5f;                                         \
        for (int lx = 0; lx < w; lx++) {                                                                     \
            float cx = (float)(gx0 + lx) + 0.5f, *o = out + (size_t)lx * c;                                  \
            float sx = ts_coord_clamp(inv[0] * cx + inv[1] * cy + inv[2]);                                   \
            float sy = ts_coord_clamp(inv[3] * cx + inv[4] * cy + inv[5]);                                   \
            if (!bilinear) {                                                                                 \
                int x = (int)floorf(sx), y = (int)floorf(sy);                                                \
                if (x >= 0 && x < W && y >= 0 && y < H)                                                      \
                    for (int ch = 0; ch < c; ch++) o[ch] = TAP(T, x, y, ch);                                 \
                else                                                                                         \
                    ref_read_border(rd, x, y, b, bv, o);                                                     \
                continue;                                                                                    \
            }                                                                                                \
            float px = sx - 0.5f, py = sy - 0.5f;                                                            \
            float fx0 = floorf(px), fy0 = floorf(py);                                                        \
            float fx = px - fx0, fy = py - fy0;                                                              \
            int x0 = (int)fx0, y0 = (int)fy0;                                                                \
            float w00 = (1.0f - fx) * (1.0f - fy), w10 = fx * (1.0f - fy);                                   \
            float w01 = (1.0f - fx) * fy, w11 = fx * fy;                                                     \
            if (x0 >= 0 && x0 + 1 < W && y0 >= 0 && y0 + 1 < H) {                                           \
                for (int ch = 0; ch < c; ch++)                                                               \
                    o[ch] = w00 * TAP(T, x0, y0, ch) + w10 * TAP(T, x0 + 1, y0, ch) +                        \
                            w01 * TAP(T, x0, y0 + 1, ch) + w11 * TAP(T, x0 + 1, y0 + 1, ch);                 \
            } else {                                                                                         \
                float p00[4], p10[4], p01[4], p11[4];                                                        \
                ref_read_border(rd, x0, y0, b, bv, p00);                                                     \
                ref_read_border(rd, x0 + 1, y0, b, bv, p10);                                                 \
                ref_read_border(rd, x0, y0 + 1, b, bv, p01);                                                 \
                ref_read_border(rd, x0 + 1, y0 + 1, b, bv, p11);                                             \
                for (int ch = 0; ch < c; ch++)                                                               \
                    o[ch] = w00 * p00[ch] + w10 * p10[ch] + w01 * p01[ch] + w11 * p11[ch];                   \
            }                                                                                                \
        }                                                                                                    \
    }

SAMPLE_ROW(sample_row_u8, uint8_t)
SAMPLE_ROW(sample_row_u16, uint16_t)
SAMPLE_ROW(sample_row_f32, float)

/* ------------------------------------------------- axis-aligned maps
 * Without rotation or shear (inv[1] and inv[3] zeros), sx depends on x
 * alone and sy on y alone: inv[1]*cy is a zero of inv[1]'s sign for every
 * row (cy >= 0.5), so sx computed once per column with the reference's
 * expression is the value every row would compute; the same for sy. */

typedef struct axis_pos {
    int i;       /* nearest: floor(s); bilinear: floor(s - 0.5) */
    float f, g;  /* bilinear: the fraction and 1 - fraction */
} axis_pos;

static axis_pos axis_at(float s, int bilinear)
{
    axis_pos a;
    if (!bilinear) {
        a.i = (int)floorf(s);
        a.f = a.g = 0.0f;
        return a;
    }
    float p = s - 0.5f, p0 = floorf(p);
    a.i = (int)p0;
    a.f = p - p0;
    a.g = 1.0f - a.f;
    return a;
}

static int axis_aligned(const tsk_op *op)
{
    return op->u.sample.inv[1] == 0.0f && op->u.sample.inv[3] == 0.0f;
}

/* What this file knows: nearest and bilinear on any map, area and bicubic
 * on axis-aligned ones (the rest runs the reference). */
int tsk_cpu_sample_has_fast(const tsk_op *op)
{
    return op->u.sample.interp == TSK_NEAREST || op->u.sample.interp == TSK_BILINEAR || axis_aligned(op);
}

/* Row gy of an axis-aligned map: xs[lx] for the columns, y for the row. */
#define SCALED_ROW(NAME, T)                                                                                 \
    static void NAME(const tsk_op *op, ref_reader *rd, const axis_pos *xs, axis_pos y, int w, float *out)  \
    {                                                                                                        \
        const ts_view *s = rd->v;                                                                            \
        int c = s->c, W = s->full_w, H = s->full_h, bilinear = op->u.sample.interp == TSK_BILINEAR;          \
        ts_border b = op->u.sample.border;                                                                   \
        float bv = op->u.sample.border_value;                                                                \
        int rows_in = bilinear ? y.i >= 0 && y.i + 1 < H : y.i >= 0 && y.i < H;                              \
        for (int lx = 0; lx < w; lx++) {                                                                     \
            const axis_pos *x = &xs[lx];                                                                     \
            float *o = out + (size_t)lx * c;                                                                 \
            if (!bilinear) {                                                                                 \
                if (rows_in && x->i >= 0 && x->i < W)                                                        \
                    for (int ch = 0; ch < c; ch++) o[ch] = TAP(T, x->i, y.i, ch);                            \
                else                                                                                         \
                    ref_read_border(rd, x->i, y.i, b, bv, o);                                                \
                continue;                                                                                    \
            }                                                                                                \
            float w00 = x->g * y.g, w10 = x->f * y.g, w01 = x->g * y.f, w11 = x->f * y.f;                    \
            if (rows_in && x->i >= 0 && x->i + 1 < W) {                                                      \
                for (int ch = 0; ch < c; ch++)                                                               \
                    o[ch] = w00 * TAP(T, x->i, y.i, ch) + w10 * TAP(T, x->i + 1, y.i, ch) +                  \
                            w01 * TAP(T, x->i, y.i + 1, ch) + w11 * TAP(T, x->i + 1, y.i + 1, ch);           \
            } else {                                                                                         \
                float p00[4], p10[4], p01[4], p11[4];                                                        \
                ref_read_border(rd, x->i, y.i, b, bv, p00);                                                  \
                ref_read_border(rd, x->i + 1, y.i, b, bv, p10);                                              \
                ref_read_border(rd, x->i, y.i + 1, b, bv, p01);                                              \
                ref_read_border(rd, x->i + 1, y.i + 1, b, bv, p11);                                          \
                for (int ch = 0; ch < c; ch++)                                                               \
                    o[ch] = w00 * p00[ch] + w10 * p10[ch] + w01 * p01[ch] + w11 * p11[ch];                   \
            }                                                                                                \
        }                                                                                                    \
    }

SCALED_ROW(scaled_row_u8, uint8_t)
SCALED_ROW(scaled_row_u16, uint16_t)
SCALED_ROW(scaled_row_f32, float)

static ts_status sample_scaled(const tsk_op *op, ref_reader *rd, ts_view *dst, float *row, ts_err *err)
{
    const float *inv = op->u.sample.inv;
    int bilinear = op->u.sample.interp == TSK_BILINEAR;
    axis_pos *xs = malloc(sizeof *xs * (size_t)dst->w);
    if (!xs) return ts_err_set(err, TS_E_NOMEM, "sample: no memory for %d column positions", dst->w);
    float cy0 = (float)dst->y0 + 0.5f, cx0 = (float)dst->x0 + 0.5f;
    for (int lx = 0; lx < dst->w; lx++) {
        float cx = (float)(dst->x0 + lx) + 0.5f;
        xs[lx] = axis_at(ts_coord_clamp(inv[0] * cx + inv[1] * cy0 + inv[2]), bilinear);
    }
    for (int ly = 0; ly < dst->h; ly++) {
        float cy = (float)(dst->y0 + ly) + 0.5f;
        axis_pos y = axis_at(ts_coord_clamp(inv[3] * cx0 + inv[4] * cy + inv[5]), bilinear);
        if (dst->type == TS_U8) scaled_row_u8(op, rd, xs, y, dst->w, row);
        else if (dst->type == TS_U16) scaled_row_u16(op, rd, xs, y, dst->w, row);
        else scaled_row_f32(op, rd, xs, y, dst->w, row);
        cpu_store_row(cpu_px(dst, 0, ly), dst->type, row, (size_t)dst->w * dst->c);
    }
    free(xs);
    return TS_OK;
}

/* ------------------------------------------- filtered, axis-aligned
 * AREA and BICUBIC on an axis-aligned map (resize and scale: the
 * thumbnail job). Each column's taps (ref_axis_weights, tsk.h's rule) are
 * found once and their source columns mapped through the border mode
 * once; each row's likewise; then every output pixel sums as the
 * reference's `filtered` does, in its order (a tap row across, the rows
 * down, one division by the weights' sums), so the bytes are the
 * reference's. A column's taps: idx (the source column, -1 for the
 * constant border) and w, n of them from column * n. */
typedef struct filter_cols { int n; int *idx; float *w, *sum; } filter_cols;

/* Output pixel lx of a filtered row with c channels: the constant c of
 * the callers below lets the compiler unroll the channel loops. */
#define FILTERED_PIXEL(T)                                                                                    \
    static inline __attribute__((always_inline)) void filtered_pixel_##T(                                   \
        const ts_view *s, const filter_cols *fc, const T *const *rows, const ref_axis_taps *ty, float bv,  \
        int lx, int c, float *o)                                                                             \
    {                                                                                                        \
        int n = fc->n;                                                                                       \
        const int *idx = fc->idx + (size_t)lx * n;                                                           \
        const float *wx = fc->w + (size_t)lx * n;                                                            \
        float acc[4] = { 0, 0, 0, 0 };                                                                       \
        for (int j = 0; j < ty->n; j++) {                                                                    \
            float row[4] = { 0, 0, 0, 0 };                                                                   \
            const T *src = rows[j];                                                                          \
            for (int i = 0; i < n; i++) {                                                                    \
                if (!src || idx[i] < 0) {                                                                    \
                    for (int ch = 0; ch < c; ch++) row[ch] += wx[i] * bv;                                    \
                } else {                                                                                     \
                    const T *p = src + (size_t)(idx[i] - s->x0) * c;                                         \
                    for (int ch = 0; ch < c; ch++) row[ch] += wx[i] * (float)p[ch];                          \
                }                                                                                            \
            }                                                                                                \
            for (int ch = 0; ch < c; ch++) acc[ch] += ty->w[j] * row[ch];                                    \
        }                                                                                                    \
        float norm = fc->sum[lx] * ty->sum;                                                                  \
        for (int ch = 0; ch < c; ch++) o[ch] = norm > 0.0f ? acc[ch] / norm : 0.0f;                          \
    }                                                                                                        \
    static void filtered_row_##T(const ts_view *s, const filter_cols *fc, const int *ys,                    \
                                 const ref_axis_taps *ty, float bv, int w, float *out)                      \
    {                                                                                                        \
        const T *rows[REF_AXIS_TAPS_MAX];                                                                    \
        for (int j = 0; j < ty->n; j++)                                                                      \
            rows[j] = ys[j] < 0 ? NULL : (const T *)(const void *)(s->data + (size_t)(ys[j] - s->y0) * s->pitch); \
        int c = s->c;                                                                                        \
        for (int lx = 0; lx < w; lx++) {                                                                     \
            float *o = out + (size_t)lx * c;                                                                 \
            if (c == 3) filtered_pixel_##T(s, fc, rows, ty, bv, lx, 3, o);                                   \
            else if (c == 4) filtered_pixel_##T(s, fc, rows, ty, bv, lx, 4, o);                              \
            else filtered_pixel_##T(s, fc, rows, ty, bv, lx, c, o);                                          \
        }                                                                                                    \
    }

typedef uint8_t u8;
typedef uint16_t u16;
typedef float f32;
FILTERED_PIXEL(u8)
FILTERED_PIXEL(u16)
FILTERED_PIXEL(f32)

static ts_status sample_filtered(const tsk_op *op, const ts_view *src, ts_view *dst, float *row, ts_err *err)
{
    const float *inv = op->u.sample.inv;
    tsk_interp interp = op->u.sample.interp;
    ts_border b = op->u.sample.border;
    float kx, ky;
    tsk_sample_footprint(op, &kx, &ky);
    filter_cols fc = { tsk_sample_taps(interp, kx), NULL, NULL, NULL };
    size_t taps = (size_t)dst->w * (size_t)fc.n;
    fc.idx = malloc(taps * sizeof *fc.idx);
    fc.w = malloc(taps * sizeof *fc.w);
    fc.sum = malloc((size_t)dst->w * sizeof *fc.sum);
    ref_axis_taps *t = malloc(sizeof *t);
    int *ys = malloc(REF_AXIS_TAPS_MAX * sizeof *ys);
    ts_status st = TS_OK;
    if (!fc.idx || !fc.w || !fc.sum || !t || !ys) {
        st = ts_err_set(err, TS_E_NOMEM, "sample: no memory for the taps of %d columns", dst->w);
        goto done;
    }
    /* the reference's sample point (ref_sample.c), per column and per row:
     * inv[1] and inv[3] are zeros, so a column's sx is the same on every row */
    float cy0 = (float)dst->y0 + 0.5f, cx0 = (float)dst->x0 + 0.5f, bv = op->u.sample.border_value;
    for (int lx = 0; lx < dst->w; lx++) {
        float cx = (float)(dst->x0 + lx) + 0.5f;
        ref_axis_weights(interp, kx, ts_coord_clamp(inv[0] * cx + inv[1] * cy0 + inv[2]), t);
        for (int i = 0; i < fc.n; i++) {
            fc.idx[(size_t)lx * fc.n + i] = ts_border_map(t->i0 + i, src->full_w, (int)b);
            fc.w[(size_t)lx * fc.n + i] = t->w[i];
        }
        fc.sum[lx] = t->sum;
    }
    for (int ly = 0; ly < dst->h; ly++) {
        float cy = (float)(dst->y0 + ly) + 0.5f;
        ref_axis_weights(interp, ky, ts_coord_clamp(inv[3] * cx0 + inv[4] * cy + inv[5]), t);
        for (int j = 0; j < t->n; j++) ys[j] = ts_border_map(t->i0 + j, src->full_h, (int)b);
        if (dst->type == TS_U8) filtered_row_u8(src, &fc, ys, t, bv, dst->w, row);
        else if (dst->type == TS_U16) filtered_row_u16(src, &fc, ys, t, bv, dst->w, row);
        else filtered_row_f32(src, &fc, ys, t, bv, dst->w, row);
        cpu_store_row(cpu_px(dst, 0, ly), dst->type, row, (size_t)dst->w * dst->c);
    }
done:
    free(fc.idx);
    free(fc.w);
    free(fc.sum);
    free(t);
    free(ys);
    return st;
}

ts_status tsk_cpu_sample(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err)
{
    ref_reader rd = ref_reader_of(src);
    size_t n = (size_t)dst->w * (size_t)dst->c;
    float *row = malloc(n * sizeof(float));
    if (!row) return ts_err_set(err, TS_E_NOMEM, "sample: no memory for a row of %d pixels", dst->w);
    if (op->u.sample.interp == TSK_AREA || op->u.sample.interp == TSK_BICUBIC) {
        /* tsk_cpu_sample_has_fast: axis-aligned; src holds what dst needs (cpu.c) */
        ts_status st = sample_filtered(op, src, dst, row, err);
        free(row);
        return st;
    }
    if (axis_aligned(op)) {
        ts_status st = sample_scaled(op, &rd, dst, row, err);
        free(row);
        return st == TS_OK ? tsk_ref_reader_status(&rd, "sample", err) : st;
    }
    for (int ly = 0; ly < dst->h; ly++) {
        int gy = dst->y0 + ly;
        if (dst->type == TS_U8) sample_row_u8(op, &rd, dst->x0, gy, dst->w, row);
        else if (dst->type == TS_U16) sample_row_u16(op, &rd, dst->x0, gy, dst->w, row);
        else sample_row_f32(op, &rd, dst->x0, gy, dst->w, row);
        cpu_store_row(cpu_px(dst, 0, ly), dst->type, row, n);
    }
    free(row);
    /* src holds tsk_need(dst) (checked), so every read was inside it */
    return tsk_ref_reader_status(&rd, "sample", err);
}
