/* geometry.c - what every kernel op does to sizes and regions: the output
 * size, and the input region an output region needs (tsk.h). The planner
 * walks these backwards from an output tile; the reference and the GPU
 * kernels read nothing outside that region, which the tiled-equals-whole
 * tests prove. When in doubt a region is larger, never smaller. */
#include "kind_parts.h"
#include "orient/ts_orient.h"
#include "ts_pixel.h"

#include <limits.h>
#include <math.h>

/* Output sizes by kind (the kind table, kinds.c, points here). */
void tsk_size_same(const tsk_op *op, int in_w, int in_h, int *out_w, int *out_h)
{
    (void)op;
    *out_w = in_w;
    *out_h = in_h;
}

void tsk_size_orient(const tsk_op *op, int in_w, int in_h, int *out_w, int *out_h)
{
    int swap = ts_orient_swaps(op->u.orient.code);
    *out_w = swap ? in_h : in_w;
    *out_h = swap ? in_w : in_h;
}

/* A separable convolution keeps the size, unless it carries an orientation. */
void tsk_size_sep(const tsk_op *op, int in_w, int in_h, int *out_w, int *out_h)
{
    tsk_op conv, orient;
    if (tsk_split_then(op, &conv, &orient)) tsk_size_orient(&orient, in_w, in_h, out_w, out_h);
    else tsk_size_same(op, in_w, in_h, out_w, out_h);
}

void tsk_size_sample(const tsk_op *op, int in_w, int in_h, int *out_w, int *out_h)
{
    (void)in_w; (void)in_h;
    *out_w = op->u.sample.out_w;
    *out_h = op->u.sample.out_h;
}

void tsk_out_size(const tsk_op *op, int in_w, int in_h, int *out_w, int *out_h)
{
    const tsk_kind_info *k = tsk_kind_info_of(op->kind);
    (k ? k->out_size : tsk_size_same)(op, in_w, in_h, out_w, out_h);
}

/* Pixels lo..hi of one axis (inclusive); empty when lo > hi. */
typedef struct span { long long lo, hi; } span;

static span span_of(long long lo, long long hi)
{
    span s = { lo, hi };
    return s;
}

static span span_whole(int n) { return span_of(0, (long long)n - 1); }

static span span_clip(span s, int n)
{
    return span_of(s.lo < 0 ? 0 : s.lo, s.hi > n - 1 ? (long long)n - 1 : s.hi);
}

static ts_rect rect_of(span x, span y)
{
    ts_rect r = { 0, 0, 0, 0 };
    if (x.lo > x.hi || y.lo > y.hi) return r;  /* nothing needed */
    r.x0 = (int)x.lo;
    r.y0 = (int)y.lo;
    r.w = (int)(x.hi - x.lo + 1);
    r.h = (int)(y.hi - y.lo + 1);
    return r;
}

/* The pixels of 0..n-1 that taps a..b read through border mode: the
 * bounding box of where ts_border_map sends them. Replicate clamps,
 * constant reads only what lies inside; wrap and the reflections take the
 * whole axis once the taps span a full period, and otherwise map tap by
 * tap (fewer than 2n of them). For taps around an output pixel inside the
 * image (convolutions) this is the taps clipped to the image, or the
 * whole axis for wrap once they leave it. */
static span border_span(long long a, long long b, int n, ts_border mode)
{
    long long period, lo = LLONG_MAX, hi = LLONG_MIN;
    if (a > b || n <= 0) return span_of(0, -1);
    if (a >= 0 && b < n) return span_of(a, b);
    if (a < INT_MIN / 2 || b > INT_MAX / 2) return mode == TS_BORDER_CONSTANT ? span_clip(span_of(a, b), n)
                                                                               : span_whole(n);
    switch (mode) {
    case TS_BORDER_REPLICATE:
        return span_of(a < 0 ? 0 : a > n - 1 ? n - 1 : a, b < 0 ? 0 : b > n - 1 ? n - 1 : b);
    case TS_BORDER_CONSTANT:
        return span_clip(span_of(a, b), n);
    case TS_BORDER_WRAP: period = n; break;
    case TS_BORDER_REFLECT: period = 2 * (long long)n; break;
    default: period = n == 1 ? 1 : 2 * (long long)n - 2; break;
    }
    if (b - a + 1 >= period) return span_whole(n);
    for (long long i = a; i <= b; i++) {
        int m = ts_border_map((int)i, n, (int)mode);
        if (m < lo) lo = m;
        if (m > hi) hi = m;
    }
    return span_of(lo, hi);
}

/* ORIENT: the input pixels of the output rect's corners bound the rest. */
ts_rect tsk_need_orient(const tsk_op *op, int in_w, int in_h, ts_rect out)
{
    int ax, ay, bx, by;
    if (!ts_orient_src(op->u.orient.code, out.x0, out.y0, in_w, in_h, &ax, &ay) ||
        !ts_orient_src(op->u.orient.code, out.x0 + out.w - 1, out.y0 + out.h - 1, in_w, in_h, &bx, &by))
        return rect_of(span_clip(span_of(out.x0, out.x0 + (long long)out.w - 1), in_w),
                       span_clip(span_of(out.y0, out.y0 + (long long)out.h - 1), in_h));
    return rect_of(span_clip(span_of(ax < bx ? ax : bx, ax < bx ? bx : ax), in_w),
                   span_clip(span_of(ay < by ? ay : by, ay < by ? by : ay), in_h));
}

/* Convolutions: the output rect grown by the radii, through the border. */
static ts_rect need_conv(int rx, int ry, ts_border border, int in_w, int in_h, ts_rect out)
{
    span x = border_span((long long)out.x0 - rx, (long long)out.x0 + out.w - 1 + rx, in_w, border);
    span y = border_span((long long)out.y0 - ry, (long long)out.y0 + out.h - 1 + ry, in_h, border);
    return rect_of(x, y);
}

/* ------------------------------------------------------------ footprints */

/* Input pixels crossed per output pixel along one input axis: the length
 * of that row of the inverse Jacobian. For a rotation by any angle with a
 * uniform scale s it is 1/s; for an axis-aligned scale the axis's factor. */
static float footprint_of(float a, float b)
{
    double k = hypot((double)a, (double)b);
    if (!(k >= 1.001)) return 1.0f;  /* enlarging, a rotation's rounding, or NaN */
    return k > TSK_MAX_FOOTPRINT ? TSK_MAX_FOOTPRINT : (float)k;
}

void tsk_sample_footprint(const tsk_op *op, float *kx, float *ky)
{
    const float *inv = op->u.sample.inv;
    *kx = footprint_of(inv[0], inv[1]);
    *ky = footprint_of(inv[3], inv[4]);
}

float tsk_sample_radius(tsk_interp interp, float k)
{
    switch (interp) {
    case TSK_NEAREST: return 0.5f;
    case TSK_BILINEAR: return 1.0f;
    case TSK_AREA: return 0.5f * k + 0.5f;
    default: return 2.0f * k;
    }
}

int tsk_sample_taps(tsk_interp interp, float k)
{
    switch (interp) {
    case TSK_NEAREST: return 1;
    case TSK_BILINEAR: return 2;
    case TSK_AREA: return (int)ceilf(2.0f * tsk_sample_radius(interp, k));
    default: return (int)ceilf(4.0f * k);
    }
}

/* SAMPLE, one axis: s = row[0]*(x+0.5) + row[1]*(y+0.5) + row[2] is affine,
 * so over the output rect it is bounded by its values at the four corner
 * pixel centres. Float evaluation errs by a few ulps of the largest term:
 * the margin covers that many times over. Beyond 2^28 (or NaN, or
 * infinity) float coordinates are too coarse to reason about: the whole
 * axis. Then the taps (floor, and floor + 1 for bilinear; for area and
 * bicubic the n taps from floor(p - r) + 1, k being the axis's footprint),
 * one pixel of slack each side, and the border. */
static span need_sample_axis(const float *row, float k, ts_rect out, tsk_interp interp, ts_border border, int n)
{
    double xs[2] = { out.x0 + 0.5, out.x0 + out.w - 0.5 };
    double ys[2] = { out.y0 + 0.5, out.y0 + out.h - 0.5 };
    double lo = INFINITY, hi = -INFINITY, mag, margin;
    long long a, b;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            double s = (double)row[0] * xs[i] + (double)row[1] * ys[j] + (double)row[2];
            if (s < lo) lo = s;
            if (s > hi) hi = s;
        }
    mag = fabs((double)row[0]) * fmax(fabs(xs[0]), fabs(xs[1])) +
          fabs((double)row[1]) * fmax(fabs(ys[0]), fabs(ys[1])) + fabs((double)row[2]);
    if (!(mag < 268435456.0) || !(lo <= hi)) return span_whole(n);
    margin = mag * 1e-6 + 1e-6;
    if (interp == TSK_NEAREST) {
        a = (long long)floor(lo - margin);
        b = (long long)floor(hi + margin);
    } else if (interp == TSK_BILINEAR) {
        a = (long long)floor(lo - margin - 0.5);
        b = (long long)floor(hi + margin - 0.5) + 1;
    } else { /* taps floor(p - r) + 1 .. floor(p - r) + n, p = s - 0.5 */
        double r = tsk_sample_radius(interp, k);
        margin += r * 1e-6;
        a = (long long)floor(lo - margin - 0.5 - r) + 1;
        b = (long long)floor(hi + margin - 0.5 - r) + tsk_sample_taps(interp, k);
    }
    return border_span(a - 1, b + 1, n, border);
}

/* Needs by kind (the kind table, kinds.c, points here); out is not empty
 * and neither is the input. */
ts_rect tsk_need_point(const tsk_op *op, int in_w, int in_h, ts_rect out)
{
    (void)op;
    return rect_of(span_clip(span_of(out.x0, out.x0 + (long long)out.w - 1), in_w),
                   span_clip(span_of(out.y0, out.y0 + (long long)out.h - 1), in_h));
}

ts_rect tsk_need_sep(const tsk_op *op, int in_w, int in_h, ts_rect out)
{
    tsk_op conv, orient;
    if (tsk_split_then(op, &conv, &orient)) {
        /* the orientation's input is the convolution's output: same size */
        out = tsk_need_orient(&orient, in_w, in_h, out);
        if (out.w <= 0 || out.h <= 0) return out;
    }
    return need_conv((op->u.sep.nx - 1) / 2, (op->u.sep.ny - 1) / 2, op->u.sep.border, in_w, in_h, out);
}

ts_rect tsk_need_2d(const tsk_op *op, int in_w, int in_h, ts_rect out)
{
    return need_conv(op->u.conv2d.kw / 2, op->u.conv2d.kh / 2, op->u.conv2d.border, in_w, in_h, out);
}

ts_rect tsk_need_sample(const tsk_op *op, int in_w, int in_h, ts_rect out)
{
    float kx, ky;
    tsk_sample_footprint(op, &kx, &ky);
    return rect_of(need_sample_axis(op->u.sample.inv, kx, out, op->u.sample.interp, op->u.sample.border, in_w),
                   need_sample_axis(op->u.sample.inv + 3, ky, out, op->u.sample.interp, op->u.sample.border,
                                    in_h));
}

ts_rect tsk_need(const tsk_op *op, int in_w, int in_h, ts_rect out)
{
    ts_rect none = { 0, 0, 0, 0 };
    if (out.w <= 0 || out.h <= 0 || in_w <= 0 || in_h <= 0) return none;
    const tsk_kind_info *k = tsk_kind_info_of(op->kind);
    return (k ? k->need : tsk_need_point)(op, in_w, in_h, out);
}
