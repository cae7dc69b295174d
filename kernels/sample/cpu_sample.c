/* cpu_sample.c - the fast resampler: the reference's maths (tsk.h,
 * ref_sample.c) pixel by pixel, but a tap inside the image is read
 * straight from the source row with the type known outside the loop, and
 * only taps near or past the edges go through the border mode. Each output
 * row is built in float and rounded once. */
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

ts_status tsk_cpu_sample(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err)
{
    ref_reader rd = ref_reader_of(src);
    size_t n = (size_t)dst->w * (size_t)dst->c;
    float *row = malloc(n * sizeof(float));
    if (!row) return ts_err_set(err, TS_E_NOMEM, "sample: no memory for a row of %d pixels", dst->w);
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
