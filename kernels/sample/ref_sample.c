/* ref_sample.c - the reference resampler: every output pixel centre goes
 * through the inverse affine map to a point of the input, which is read
 * nearest or bilinear, or filtered (area, bicubic) over a footprint that
 * widens with the map's shrink; taps outside the image go through the
 * border mode. */
#include "kind_parts.h"
#include "ref_internal.h"

#include <math.h>
#include <stdlib.h>

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

/* ------------------------------------------------------------ filtered */

/* How much of pixel [d - 0.5, d + 0.5) (relative to the sample point)
 * lies inside the output pixel's box [-h, h). */
static float area_weight(float d, float h)
{
    return fmaxf(0.0f, fminf(d + 0.5f, h) - fmaxf(d - 0.5f, -h));
}

/* Catmull-Rom (Keys, a = -0.5) at distance t >= 0 in footprint units. */
static float cubic_weight(float t)
{
    if (t < 1.0f) return (1.5f * t - 2.5f) * t * t + 1.0f;
    if (t < 2.0f) return ((-0.5f * t + 2.5f) * t - 4.0f) * t + 2.0f;
    return 0.0f;
}

void ref_axis_weights(tsk_interp interp, float k, float s, ref_axis_taps *t)
{
    float p = s - 0.5f, r = tsk_sample_radius(interp, k);
    t->n = tsk_sample_taps(interp, k);
    t->i0 = (int)floorf(p - r) + 1;
    t->sum = 0.0f;
    for (int j = 0; j < t->n; j++) {
        float d = (float)(t->i0 + j) - p;
        float w = interp == TSK_AREA ? area_weight(d, 0.5f * k) : cubic_weight(fabsf(d) / k);
        t->w[j] = w;
        t->sum += w;
    }
}

/* Rows first: each row's taps summed with x weights, then the rows with y
 * weights, then one division by the weights' product (tsk.h). */
static void filtered(const tsk_op *op, ref_reader *rd, const ref_axis_taps *tx, const ref_axis_taps *ty, float *out)
{
    ts_border b = op->u.sample.border;
    float bv = op->u.sample.border_value, acc[4] = { 0, 0, 0, 0 }, p[4];
    int c = rd->v->c;
    for (int j = 0; j < ty->n; j++) {
        float row[4] = { 0, 0, 0, 0 };
        for (int i = 0; i < tx->n; i++) {
            ref_read_border(rd, tx->i0 + i, ty->i0 + j, b, bv, p);
            for (int ch = 0; ch < c; ch++) row[ch] += tx->w[i] * p[ch];
        }
        for (int ch = 0; ch < c; ch++) acc[ch] += ty->w[j] * row[ch];
    }
    float norm = tx->sum * ty->sum;
    for (int ch = 0; ch < c; ch++) out[ch] = norm > 0.0f ? acc[ch] / norm : 0.0f;
}

ts_status tsk_ref_sample(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err)
{
    ref_reader rd = ref_reader_of(src);
    tsk_interp interp = op->u.sample.interp;
    float out[4], kx, ky;
    ref_axis_taps *tx = malloc(2 * sizeof *tx), *ty = tx + 1;
    if (!tx) return ts_err_set(err, TS_E_NOMEM, "reference sample: out of memory");
    tsk_sample_footprint(op, &kx, &ky);
    for (int ly = 0; ly < dst->h; ly++)
        for (int lx = 0; lx < dst->w; lx++) {
            float sx, sy;
            sample_point(op->u.sample.inv, dst->x0 + lx, dst->y0 + ly, &sx, &sy);
            if (interp == TSK_NEAREST) {
                nearest(op, &rd, sx, sy, out);
            } else if (interp == TSK_BILINEAR) {
                bilinear(op, &rd, sx, sy, out);
            } else {
                ref_axis_weights(interp, kx, sx, tx);
                ref_axis_weights(interp, ky, sy, ty);
                filtered(op, &rd, tx, ty, out);
            }
            for (int ch = 0; ch < dst->c; ch++) ref_store(dst, lx, ly, ch, out[ch]);
        }
    free(tx);
    return tsk_ref_reader_status(&rd, "sample", err);
}
