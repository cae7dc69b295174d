/* ops_lower.c - what each user op means: the checks that need several of
 * its parameters at once, and its lowering to kernel ops (tsk.h). The
 * registry (ops.c) points here; the planner (plan.c) calls lower with the
 * image as it enters the op. */
#include "ops.h"

#include <math.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

const float ts_luma[3] = { 0.299f, 0.587f, 0.114f };

/* ------------------------------------------------------------ validation */

ts_status ts_validate_matrix(const ts_user_op *op, const char *text, ts_err *err)
{
    const ts_param_value *m = &op->v[P_MATRIX_M];
    if (m->given && m->n != 12)
        return ts_err_set(err, TS_E_ARG, "bad op chain: matrix m= needs 12 numbers, got %d\n  %s", m->n, text);
    return TS_OK;
}

ts_status ts_validate_conv(const ts_user_op *op, const char *text, ts_err *err)
{
    int n = op->v[P_CONV_K].n, kw = (int)ts_op_num(op, P_CONV_W), kh = (int)ts_op_num(op, P_CONV_H);
    if (n == 0) return ts_err_set(err, TS_E_ARG, "bad op chain: conv needs taps, e.g. conv=k=0 -1 0 -1 5 -1 0 -1 0\n  %s", text);
    if (kw == 0 && kh == 0) {
        int side = (int)lround(sqrt((double)n));
        if (side * side != n)
            return ts_err_set(err, TS_E_ARG, "bad op chain: conv has %d taps, not a square; give w= and h=\n  %s", n, text);
        kw = kh = side;
    } else if (kw == 0) kw = n / (kh ? kh : 1);
    else if (kh == 0) kh = n / kw;
    if (kw * kh != n || kw % 2 == 0 || kh % 2 == 0 || kw > 15 || kh > 15)
        return ts_err_set(err, TS_E_ARG, "bad op chain: conv taps must form an odd w x h up to 15x15 (got %d taps for %dx%d)\n  %s", n, kw, kh, text);
    return TS_OK;
}

ts_status ts_validate_resize(const ts_user_op *op, const char *text, ts_err *err)
{
    if (ts_op_num(op, P_RESIZE_W) <= 0 && ts_op_num(op, P_RESIZE_H) <= 0)
        return ts_err_set(err, TS_E_ARG, "bad op chain: resize needs w= or h=\n  %s", text);
    return TS_OK;
}

/* ------------------------------------------------------------ matrices */

static void mat_identity(float m[12])
{
    memset(m, 0, sizeof(float) * 12);
    m[0] = m[5] = m[10] = 1;
}

/* a = b * a (apply a first, then b); both 3x4 with the offset column. */
void ts_matrix_then(float a[12], const float b[12])
{
    float r[12];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            r[4 * i + j] = b[4 * i] * a[j] + b[4 * i + 1] * a[4 + j] + b[4 * i + 2] * a[8 + j];
        r[4 * i + 3] = b[4 * i] * a[3] + b[4 * i + 1] * a[7] + b[4 * i + 2] * a[11] + b[4 * i + 3];
    }
    memcpy(a, r, sizeof r);
}

static void matrix_of(const ts_user_op *op, float m[12])
{
    const ts_param_value *given = &op->v[P_MATRIX_M];
    int preset = ts_op_choice(op, P_MATRIX_PRESET);
    mat_identity(m);
    if (given->given) {
        for (int i = 0; i < 12; i++) m[i] = (float)given->list[i];
    } else if (preset == MATRIX_GREY) {
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) m[4 * i + j] = ts_luma[j];
    } else if (preset == MATRIX_SEPIA) {
        static const float sepia[12] = { 0.393f, 0.769f, 0.189f, 0, 0.349f, 0.686f, 0.168f, 0,
                                         0.272f, 0.534f, 0.131f, 0 };
        memcpy(m, sepia, sizeof sepia);
    } else if (preset == MATRIX_INVERT) {
        m[0] = m[5] = m[10] = -1;
        m[3] = m[7] = m[11] = 1;
    }
    float s = (float)ts_op_num(op, P_MATRIX_SATURATION), c = (float)ts_op_num(op, P_MATRIX_CONTRAST),
          b = (float)ts_op_num(op, P_MATRIX_BRIGHTNESS);
    if (s != 1) { /* s * I + (1 - s) * grey */
        float sat[12];
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) sat[4 * i + j] = (1 - s) * ts_luma[j] + (i == j ? s : 0);
            sat[4 * i + 3] = 0;
        }
        ts_matrix_then(m, sat);
    }
    if (c != 1 || b != 0) { /* (x - 0.5) * c + 0.5 + b, in full-scale units */
        float cb[12];
        mat_identity(cb);
        cb[0] = cb[5] = cb[10] = c;
        cb[3] = cb[7] = cb[11] = 0.5f * (1 - c) + b;
        ts_matrix_then(m, cb);
    }
}

ts_status ts_lower_matrix(const ts_user_op *op, ts_lowering *lw, ts_err *err)
{
    tsk_op k;
    memset(&k, 0, sizeof k);
    k.kind = TSK_MATRIX;
    matrix_of(op, k.u.matrix.m);
    return ts_lower_emit(lw, &k, err);
}

/* ------------------------------------------------------------ orientations */

static ts_status emit_orient(ts_lowering *lw, int code, ts_err *err)
{
    tsk_op k;
    memset(&k, 0, sizeof k);
    k.kind = TSK_ORIENT;
    k.u.orient.code = code;
    return ts_lower_emit(lw, &k, err);
}

ts_status ts_lower_transpose(const ts_user_op *op, ts_lowering *lw, ts_err *err) { (void)op; return emit_orient(lw, 5, err); }
ts_status ts_lower_rot90(const ts_user_op *op, ts_lowering *lw, ts_err *err) { (void)op; return emit_orient(lw, 6, err); }
ts_status ts_lower_rot180(const ts_user_op *op, ts_lowering *lw, ts_err *err) { (void)op; return emit_orient(lw, 3, err); }
ts_status ts_lower_rot270(const ts_user_op *op, ts_lowering *lw, ts_err *err) { (void)op; return emit_orient(lw, 8, err); }

ts_status ts_lower_flip(const ts_user_op *op, ts_lowering *lw, ts_err *err)
{
    return emit_orient(lw, ts_op_choice(op, P_FLIP_DIR) == FLIP_H ? 2 : 4, err);
}

ts_status ts_lower_orient(const ts_user_op *op, ts_lowering *lw, ts_err *err)
{
    return emit_orient(lw, (int)ts_op_num(op, P_ORIENT_CODE), err);
}

/* ------------------------------------------------------------ convolutions */

static ts_border border_at(const ts_user_op *op, int param) { return (ts_border)ts_op_choice(op, param); }

/* A separable op with the weights of a plain blur (center 0, conv 1). */
static void sep_init(tsk_op *k, ts_border border)
{
    memset(k, 0, sizeof *k);
    k->kind = TSK_CONV_SEP;
    k->u.sep.border = border;
    k->u.sep.center_w = 0;
    k->u.sep.conv_w = 1;
}

static void sep_gauss(tsk_op *k, double sigma, int radius)
{
    int taps = tsk_gauss_taps(sigma, radius, k->u.sep.kx);
    k->u.sep.nx = k->u.sep.ny = taps;
    memcpy(k->u.sep.ky, k->u.sep.kx, sizeof(float) * (size_t)taps);
}

ts_status ts_lower_gauss(const ts_user_op *op, ts_lowering *lw, ts_err *err)
{
    tsk_op k;
    sep_init(&k, border_at(op, P_GAUSS_BORDER));
    sep_gauss(&k, ts_op_num(op, P_GAUSS_SIGMA), (int)ts_op_num(op, P_GAUSS_RADIUS));
    return ts_lower_emit(lw, &k, err);
}

ts_status ts_lower_box(const ts_user_op *op, ts_lowering *lw, ts_err *err)
{
    tsk_op k;
    sep_init(&k, border_at(op, P_BOX_BORDER));
    int r = (int)ts_op_num(op, P_BOX_RADIUS);
    k.u.sep.nx = k.u.sep.ny = 2 * r + 1;
    for (int i = 0; i < 2 * r + 1; i++) k.u.sep.kx[i] = k.u.sep.ky[i] = 1.0f / (float)(2 * r + 1);
    return ts_lower_emit(lw, &k, err);
}

ts_status ts_lower_sharpen(const ts_user_op *op, ts_lowering *lw, ts_err *err)
{
    tsk_op k;
    sep_init(&k, border_at(op, P_SHARPEN_BORDER));
    sep_gauss(&k, ts_op_num(op, P_SHARPEN_SIGMA), (int)ts_op_num(op, P_SHARPEN_RADIUS));
    float a = (float)ts_op_num(op, P_SHARPEN_AMOUNT);
    k.u.sep.center_w = 1 + a;
    k.u.sep.conv_w = -a;
    k.alpha_passthrough = 1;
    return ts_lower_emit(lw, &k, err);
}

/* A 2-D op; derivative filters pass alpha through. */
static void conv2d_init(tsk_op *k, ts_border border)
{
    memset(k, 0, sizeof *k);
    k->kind = TSK_CONV_2D;
    k->u.conv2d.border = border;
    k->alpha_passthrough = 1;
}

ts_status ts_lower_sobel(const ts_user_op *op, ts_lowering *lw, ts_err *err)
{
    static const float sx[9] = { -1, 0, 1, -2, 0, 2, -1, 0, 1 };
    static const float sy[9] = { -1, -2, -1, 0, 0, 0, 1, 2, 1 };
    tsk_op k;
    conv2d_init(&k, border_at(op, P_SOBEL_BORDER));
    float s = (float)ts_op_num(op, P_SOBEL_SCALE);
    int dir = ts_op_choice(op, P_SOBEL_DIR);
    k.u.conv2d.kw = k.u.conv2d.kh = 3;
    for (int i = 0; i < 9; i++) {
        k.u.conv2d.k[i] = s * (dir == SOBEL_Y ? sy[i] : sx[i]);
        k.u.conv2d.k2[i] = s * sy[i];
    }
    k.u.conv2d.mode = dir == SOBEL_MAG ? TSK_CONV_MAG : TSK_CONV_ABS;
    return ts_lower_emit(lw, &k, err);
}

ts_status ts_lower_emboss(const ts_user_op *op, ts_lowering *lw, ts_err *err)
{
    tsk_op k;
    conv2d_init(&k, border_at(op, P_EMBOSS_BORDER));
    float s = (float)ts_op_num(op, P_EMBOSS_STRENGTH);
    const float e[9] = { -2 * s, -s, 0, -s, 1, s, 0, s, 2 * s };
    k.u.conv2d.kw = k.u.conv2d.kh = 3;
    memcpy(k.u.conv2d.k, e, sizeof e);
    k.u.conv2d.mode = TSK_CONV_LINEAR;
    return ts_lower_emit(lw, &k, err);
}

ts_status ts_lower_conv(const ts_user_op *op, ts_lowering *lw, ts_err *err)
{
    const ts_param_value *taps = &op->v[P_CONV_K];
    tsk_op k;
    conv2d_init(&k, border_at(op, P_CONV_BORDER));
    int nt = taps->n, kw = (int)ts_op_num(op, P_CONV_W), kh = (int)ts_op_num(op, P_CONV_H);
    if (kw == 0 && kh == 0) kw = kh = (int)lround(sqrt((double)nt));
    else if (kw == 0) kw = nt / kh;
    else if (kh == 0) kh = nt / kw;
    double sum = 0, div = ts_op_num(op, P_CONV_DIVISOR);
    int negative = 0;
    for (int i = 0; i < nt; i++) {
        sum += taps->list[i];
        negative |= taps->list[i] < 0;
    }
    if (div == 0) div = fabs(sum) > 1e-12 ? sum : 1;
    k.u.conv2d.kw = kw;
    k.u.conv2d.kh = kh;
    for (int i = 0; i < nt; i++) k.u.conv2d.k[i] = (float)(taps->list[i] / div);
    k.u.conv2d.bias = (float)ts_op_num(op, P_CONV_BIAS);
    k.u.conv2d.mode = TSK_CONV_LINEAR;
    k.alpha_passthrough = negative; /* all taps >= 0: a smoothing filter, alpha filtered too */
    return ts_lower_emit(lw, &k, err);
}

/* ------------------------------------------------------------ sampling */

/* Set the inverse map from a forward map out = A in + t (pixel-continuous
 * coordinates). Returns 0 if A is singular. */
static int set_inverse(tsk_op *k, double a, double b, double c, double d, double e, double f)
{
    double det = a * e - b * d;
    if (fabs(det) < 1e-12) return 0;
    double ia = e / det, ib = -b / det, id = -d / det, ie = a / det;
    k->u.sample.inv[0] = (float)ia;
    k->u.sample.inv[1] = (float)ib;
    k->u.sample.inv[2] = (float)(-(ia * c + ib * f));
    k->u.sample.inv[3] = (float)id;
    k->u.sample.inv[4] = (float)ie;
    k->u.sample.inv[5] = (float)(-(id * c + ie * f));
    return 1;
}

/* interp= as a kernel interpolation; auto looks at the footprint: area
 * where the map shrinks either axis, bilinear where it does not. */
static tsk_interp interp_of(int choice, const tsk_op *k)
{
    float kx, ky;
    if (choice == INTERP_NEAREST) return TSK_NEAREST;
    if (choice == INTERP_BILINEAR) return TSK_BILINEAR;
    if (choice == INTERP_AREA) return TSK_AREA;
    if (choice == INTERP_BICUBIC) return TSK_BICUBIC;
    tsk_sample_footprint(k, &kx, &ky);
    return kx > 1.0f || ky > 1.0f ? TSK_AREA : TSK_BILINEAR;
}

/* A sampling op with border mode border (its value set by the caller). */
static void sample_init(tsk_op *k, ts_border border)
{
    memset(k, 0, sizeof *k);
    k->kind = TSK_SAMPLE;
    k->u.sample.border = border;
}

/* Finish a sampling op from the forward map (a b c; d e f) and an ow x oh
 * output, then emit it. */
static ts_status emit_sample(const ts_user_op *op, int interp_param, tsk_op *k, double a, double b,
                             double c, double d, double e, double f, int ow, int oh,
                             ts_lowering *lw, ts_err *err)
{
    const char *n = op->def->name;
    if (!set_inverse(k, a, b, c, d, e, f))
        return ts_err_set(err, TS_E_ARG, "%s: the transform is singular (not invertible)", n);
    if ((uint64_t)ow * (uint64_t)oh > ((uint64_t)1 << 32))
        return ts_err_set(err, TS_E_LIMIT, "%s: output %d x %d is too large", n, ow, oh);
    k->u.sample.out_w = ow;
    k->u.sample.out_h = oh;
    k->u.sample.interp = interp_of(ts_op_choice(op, interp_param), k);
    return ts_lower_emit(lw, k, err);
}

/* resize and scale: a pure scale to ow x oh (at least 1 x 1). */
static ts_status emit_scale(const ts_user_op *op, int interp_param, int border_param, int ow, int oh,
                            ts_lowering *lw, ts_err *err)
{
    int w = ts_lowering_w(lw), h = ts_lowering_h(lw);
    tsk_op k;
    sample_init(&k, border_at(op, border_param));
    if (ow < 1) ow = 1;
    if (oh < 1) oh = 1;
    return emit_sample(op, interp_param, &k, (double)ow / w, 0, 0, 0, (double)oh / h, 0, ow, oh, lw, err);
}

/* A size parameter: pixels, a percentage of side, or -1 when not given. */
static int side_of(const ts_user_op *op, int param, int side)
{
    double v = ts_op_num(op, param);
    if (op->v[param].percent) return (int)fmax(1, lround(side * v));
    return v > 0 ? (int)v : -1;
}

/* Where a box of inner size sits in one of outer size along an axis: 0 at
 * the start, 1 in the middle, 2 at the end. */
static int gravity_axis(int gravity, int horizontal)
{
    static const signed char gx[9] = { 1, 1, 1, 2, 0, 0, 2, 0, 2 }, gy[9] = { 1, 0, 2, 1, 1, 0, 0, 2, 2 };
    return gravity >= 0 && gravity < 9 ? (horizontal ? gx : gy)[gravity] : 1;
}

/* The offset of an inner extent in an outer one at gravity. Centred, an
 * odd margin rounds as ImageMagick's -gravity center -extent rounds it:
 * a window cut from an image starts half a pixel earlier (floor), an image
 * placed on a canvas half a pixel later (the extra margin row above). */
static int place(int outer, int inner, int gravity, int horizontal, int on_canvas)
{
    int where = gravity_axis(gravity, horizontal);
    return where == 0 ? 0 : where == 2 ? outer - inner : (outer - inner + on_canvas) / 2;
}

/* An exact copy of the ow x oh window at (x0, y0) of the stage, with the
 * value fill (full-scale units) outside it: nearest sampling at pixel
 * centres shifted by whole pixels reads one source pixel, unchanged. */
static ts_status emit_window(const ts_user_op *op, int x0, int y0, int ow, int oh, double fill, ts_lowering *lw,
                             ts_err *err)
{
    tsk_op k;
    sample_init(&k, TS_BORDER_CONSTANT);
    k.u.sample.border_value = (float)fill;
    const char *n = op->def->name;
    if ((uint64_t)ow * (uint64_t)oh > ((uint64_t)1 << 32))
        return ts_err_set(err, TS_E_LIMIT, "%s: output %d x %d is too large", n, ow, oh);
    if (!set_inverse(&k, 1, 0, -x0, 0, 1, -y0))
        return ts_err_set(err, TS_E_ARG, "%s: the transform is singular (not invertible)", n);
    k.u.sample.out_w = ow;
    k.u.sample.out_h = oh;
    k.u.sample.interp = TSK_NEAREST;
    return ts_lower_emit(lw, &k, err);
}

/* resize: only w or h keeps the aspect; both fit the image inside the box
 * (the binding side exact), cover it and crop the rest at gravity, fit it
 * inside and pad to the box, or stretch to it. */
ts_status ts_lower_resize(const ts_user_op *op, ts_lowering *lw, ts_err *err)
{
    int w = ts_lowering_w(lw), h = ts_lowering_h(lw);
    int rw = side_of(op, P_RESIZE_W, w), rh = side_of(op, P_RESIZE_H, h), fit = ts_op_choice(op, P_RESIZE_FIT);
    if (rw < 0 || rh < 0 || fit == FIT_STRETCH) {
        int ow = rw > 0 ? rw : (int)lround((double)w * rh / h);
        int oh = rh > 0 ? rh : (int)lround((double)h * rw / w);
        return emit_scale(op, P_RESIZE_INTERP, P_RESIZE_BORDER, ow, oh, lw, err);
    }
    /* the side whose ratio binds is exact, the other follows the aspect */
    int by_width = (double)rw / w <= (double)rh / h;
    if (fit == FIT_COVER) by_width = !by_width;
    int sw = by_width ? rw : (int)lround((double)w * rh / h);
    int sh = by_width ? (int)lround((double)h * rw / w) : rh;
    ts_status st = emit_scale(op, P_RESIZE_INTERP, P_RESIZE_BORDER, sw, sh, lw, err);
    if (st != TS_OK || fit == FIT_INSIDE) return st;
    sw = ts_lowering_w(lw), sh = ts_lowering_h(lw);
    int gravity = ts_op_choice(op, P_RESIZE_GRAVITY);
    if (fit == FIT_COVER)
        return emit_window(op, place(sw, rw, gravity, 1, 0), place(sh, rh, gravity, 0, 0), rw, rh, 0, lw, err);
    return emit_window(op, -place(rw, sw, gravity, 1, 1), -place(rh, sh, gravity, 0, 1), rw, rh,
                       ts_op_num(op, P_RESIZE_FILL), lw, err);
}

ts_status ts_validate_crop(const ts_user_op *op, const char *text, ts_err *err)
{
    if (op->v[P_CROP_X].given != op->v[P_CROP_Y].given)
        return ts_err_set(err, TS_E_ARG, "bad op chain: crop takes x= and y= together (or neither, for gravity)\n  %s",
                          text);
    return TS_OK;
}

/* crop: the window clipped to the image (a crop never adds margins). */
ts_status ts_lower_crop(const ts_user_op *op, ts_lowering *lw, ts_err *err)
{
    int w = ts_lowering_w(lw), h = ts_lowering_h(lw);
    int cw = side_of(op, P_CROP_W, w), ch = side_of(op, P_CROP_H, h);
    cw = cw < 0 || cw > w ? w : cw;
    ch = ch < 0 || ch > h ? h : ch;
    int gravity = ts_op_choice(op, P_CROP_GRAVITY);
    int x = op->v[P_CROP_X].given ? (int)ts_op_num(op, P_CROP_X) : place(w, cw, gravity, 1, 0);
    int y = op->v[P_CROP_Y].given ? (int)ts_op_num(op, P_CROP_Y) : place(h, ch, gravity, 0, 0);
    if (x >= w || y >= h)
        return ts_err_set(err, TS_E_ARG, "crop: x=%d y=%d is outside the %d x %d image", x, y, w, h);
    if (x + cw > w) cw = w - x;
    if (y + ch > h) ch = h - y;
    return emit_window(op, x, y, cw, ch, 0, lw, err);
}

/* pad: the canvas at least the image's size, the image at gravity. */
ts_status ts_lower_pad(const ts_user_op *op, ts_lowering *lw, ts_err *err)
{
    int w = ts_lowering_w(lw), h = ts_lowering_h(lw);
    int pw = side_of(op, P_PAD_W, w), ph = side_of(op, P_PAD_H, h);
    pw = pw < w ? w : pw;
    ph = ph < h ? h : ph;
    int gravity = ts_op_choice(op, P_PAD_GRAVITY);
    return emit_window(op, -place(pw, w, gravity, 1, 1), -place(ph, h, gravity, 0, 1), pw, ph, ts_op_num(op, P_PAD_FILL),
                       lw, err);
}

ts_status ts_lower_scale(const ts_user_op *op, ts_lowering *lw, ts_err *err)
{
    int w = ts_lowering_w(lw), h = ts_lowering_h(lw);
    double fx = ts_op_num(op, P_SCALE_SX), fy = ts_op_num(op, P_SCALE_SY), ff = ts_op_num(op, P_SCALE_F);
    if (fx == 0) fx = ff;
    if (fy == 0) fy = ff;
    return emit_scale(op, P_SCALE_INTERP, P_SCALE_BORDER, (int)lround(w * fx), (int)lround(h * fy), lw, err);
}

ts_status ts_lower_rotate(const ts_user_op *op, ts_lowering *lw, ts_err *err)
{
    int w = ts_lowering_w(lw), h = ts_lowering_h(lw), ow = w, oh = h;
    double t = ts_op_num(op, P_ROTATE_DEG) * M_PI / 180.0, ct = cos(t), st = sin(t);
    tsk_op k;
    if (!(ts_op_num(op, P_ROTATE_CROP) > 0)) {
        ow = (int)ceil(fabs(w * ct) + fabs(h * st) - 1e-6);
        oh = (int)ceil(fabs(w * st) + fabs(h * ct) - 1e-6);
    }
    sample_init(&k, TS_BORDER_CONSTANT);
    k.u.sample.border_value = (float)ts_op_num(op, P_ROTATE_FILL);
    /* clockwise on screen (y down): x' = ct x - st y, y' = st x + ct y,
     * about the centres of input and output */
    double c = ow / 2.0 - (ct * w / 2.0 - st * h / 2.0);
    double f = oh / 2.0 - (st * w / 2.0 + ct * h / 2.0);
    return emit_sample(op, P_ROTATE_INTERP, &k, ct, -st, c, st, ct, f, ow, oh, lw, err);
}

ts_status ts_lower_affine(const ts_user_op *op, ts_lowering *lw, ts_err *err)
{
    int ow = ts_lowering_w(lw), oh = ts_lowering_h(lw);
    tsk_op k;
    if (ts_op_num(op, P_AFFINE_W) > 0) ow = (int)ts_op_num(op, P_AFFINE_W);
    if (ts_op_num(op, P_AFFINE_H) > 0) oh = (int)ts_op_num(op, P_AFFINE_H);
    sample_init(&k, TS_BORDER_CONSTANT);
    return emit_sample(op, P_AFFINE_INTERP, &k, ts_op_num(op, P_AFFINE_A), ts_op_num(op, P_AFFINE_B),
                       ts_op_num(op, P_AFFINE_C), ts_op_num(op, P_AFFINE_D), ts_op_num(op, P_AFFINE_E),
                       ts_op_num(op, P_AFFINE_F), ow, oh, lw, err);
}
