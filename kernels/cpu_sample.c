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

ts_status tsk_cpu_sample(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err)
{
    ref_reader rd = ref_reader_of(src);
    size_t n = (size_t)dst->w * (size_t)dst->c;
    float *row = malloc(n * sizeof(float));
    if (!row) return ts_err_set(err, TS_E_NOMEM, "sample: no memory for a row of %d pixels", dst->w);
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
