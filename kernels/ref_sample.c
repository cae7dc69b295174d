/* ref_sample.c - the reference resampler: every output pixel centre goes
 * through the inverse affine map to a point of the input, which is read
 * nearest or bilinear; taps outside the image go through the border mode. */
#include "ref_internal.h"

#include <math.h>

/* The input point output pixel (x, y) samples, each coordinate clamped by
 * ts_coord_clamp (tsk.h). */
static void sample_point(const float *inv, int x, int y, float *sx, float *sy)
{
    float cx = (float)x + 0.5f, cy = (float)y + 0.5f;
    *sx = ts_coord_clamp(inv[0] * cx + inv[1] * cy + inv[2]);
    *sy = ts_coord_clamp(inv[3] * cx + inv[4] * cy + inv[5]);
}

static void nearest(const tsk_op *op, ref_reader *rd, float sx, float sy, float *out)
{
    ref_read_border(rd, (int)floorf(sx), (int)floorf(sy), op->u.sample.border, op->u.sample.border_value, out);
}

/* The four taps around (sx - 0.5, sy - 0.5), weighted as tsk.h writes it. */
static void bilinear(const tsk_op *op, ref_reader *rd, float sx, float sy, float *out)
{
    ts_border b = op->u.sample.border;
    float bv = op->u.sample.border_value;
    float px = sx - 0.5f, py = sy - 0.5f;
    float fx0 = floorf(px), fy0 = floorf(py);
    float fx = px - fx0, fy = py - fy0;
    int x0 = (int)fx0, y0 = (int)fy0;
    float p00[4], p10[4], p01[4], p11[4];
    float w00 = (1.0f - fx) * (1.0f - fy), w10 = fx * (1.0f - fy);
    float w01 = (1.0f - fx) * fy, w11 = fx * fy;
    ref_read_border(rd, x0, y0, b, bv, p00);
    ref_read_border(rd, x0 + 1, y0, b, bv, p10);
    ref_read_border(rd, x0, y0 + 1, b, bv, p01);
    ref_read_border(rd, x0 + 1, y0 + 1, b, bv, p11);
    for (int ch = 0; ch < rd->v->c; ch++)
        out[ch] = w00 * p00[ch] + w10 * p10[ch] + w01 * p01[ch] + w11 * p11[ch];
}

ts_status tsk_ref_sample(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err)
{
    ref_reader rd = ref_reader_of(src);
    float out[4];
    for (int ly = 0; ly < dst->h; ly++)
        for (int lx = 0; lx < dst->w; lx++) {
            float sx, sy;
            sample_point(op->u.sample.inv, dst->x0 + lx, dst->y0 + ly, &sx, &sy);
            if (op->u.sample.interp == TSK_NEAREST) nearest(op, &rd, sx, sy, out);
            else bilinear(op, &rd, sx, sy, out);
            for (int ch = 0; ch < dst->c; ch++) ref_store(dst, lx, ly, ch, out[ch]);
        }
    return tsk_ref_reader_status(&rd, "sample", err);
}
