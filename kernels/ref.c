/* ref.c - the CPU reference for the kernel ops: checks the views and the
 * op's parameters, then hands the op to its family (point/ref_point.c,
 * orient/ref_orient.c, conv/ref_conv.c, sample/ref_sample.c). Written for
 * clarity, not speed: every GPU kernel is tested against it. */
#include "kind_parts.h"
#include "ref_internal.h"

#include <stdint.h>
#include <stdlib.h>

static int type_ok(ts_type t) { return t == TS_U8 || t == TS_U16 || t == TS_F32; }
static int border_ok(ts_border b) { return b >= TS_BORDER_REPLICATE && b <= TS_BORDER_CONSTANT; }
static int odd_in(int n, int hi) { return n >= 1 && n <= hi && n % 2 == 1; }

/* A view is usable when its region lies inside its image and its memory
 * can hold the region. */
static ts_status check_view(const ts_view *v, const char *name, const char *what, ts_err *err)
{
    if (v->c < 1 || v->c > 4 || !type_ok(v->type))
        return ts_err_set(err, TS_E_ARG, "reference %s: %s has %d channels of type %d", what, name,
                          v->c, (int)v->type);
    if (v->w < 0 || v->h < 0 || v->x0 < 0 || v->y0 < 0 || v->full_w < 0 || v->full_h < 0 ||
        v->w > v->full_w - v->x0 || v->h > v->full_h - v->y0)
        return ts_err_set(err, TS_E_ARG, "reference %s: %s region %d,%d %dx%d is not inside its %dx%d image",
                          what, name, v->x0, v->y0, v->w, v->h, v->full_w, v->full_h);
    if (v->w > 0 && v->h > 0) {
        size_t row = (size_t)v->w * (size_t)v->c * (size_t)v->type;
        if (!v->data || v->pitch < row)
            return ts_err_set(err, TS_E_ARG, "reference %s: %s has no pixels or a pitch of %zu < %zu",
                              what, name, v->pitch, row);
    }
    return TS_OK;
}

/* The parameter checks by kind (the kind table, kinds.c, points here). */
ts_status tsk_check_point(const tsk_op *op, const char *what, ts_err *err)
{
    (void)op; (void)what; (void)err;
    return TS_OK;
}

ts_status tsk_check_orient(const tsk_op *op, const char *what, ts_err *err)
{
    if (op->u.orient.code < 1 || op->u.orient.code > 8)
        return ts_err_set(err, TS_E_ARG, "reference %s: code %d is not 1..8", what, op->u.orient.code);
    return TS_OK;
}

ts_status tsk_check_sep(const tsk_op *op, const char *what, ts_err *err)
{
    const tsk_orient *then = &op->u.sep.then;
    if (then->code < 0 || then->code > 8)
        return ts_err_set(err, TS_E_ARG, "reference %s: orientation after it %d is not 0..8", what, then->code);
    if (!odd_in(op->u.sep.nx, TSK_MAX_SEP_TAPS) || !odd_in(op->u.sep.ny, TSK_MAX_SEP_TAPS))
        return ts_err_set(err, TS_E_ARG, "reference %s: %dx%d taps (odd, at most %d)", what,
                          op->u.sep.nx, op->u.sep.ny, TSK_MAX_SEP_TAPS);
    if (!border_ok(op->u.sep.border))
        return ts_err_set(err, TS_E_ARG, "reference %s: border %d", what, (int)op->u.sep.border);
    return TS_OK;
}

ts_status tsk_check_2d(const tsk_op *op, const char *what, ts_err *err)
{
    if (!odd_in(op->u.conv2d.kw, TSK_MAX_2D) || !odd_in(op->u.conv2d.kh, TSK_MAX_2D))
        return ts_err_set(err, TS_E_ARG, "reference %s: %dx%d kernel (odd, at most %d)", what,
                          op->u.conv2d.kw, op->u.conv2d.kh, TSK_MAX_2D);
    if (op->u.conv2d.mode < TSK_CONV_LINEAR || op->u.conv2d.mode > TSK_CONV_MAG)
        return ts_err_set(err, TS_E_ARG, "reference %s: mode %d", what, (int)op->u.conv2d.mode);
    if (!border_ok(op->u.conv2d.border))
        return ts_err_set(err, TS_E_ARG, "reference %s: border %d", what, (int)op->u.conv2d.border);
    return TS_OK;
}

ts_status tsk_check_sample(const tsk_op *op, const char *what, ts_err *err)
{
    if ((int)op->u.sample.interp < TSK_NEAREST || op->u.sample.interp >= TSK_INTERP_COUNT)
        return ts_err_set(err, TS_E_ARG, "reference %s: interpolation %d", what,
                          (int)op->u.sample.interp);
    if (!border_ok(op->u.sample.border))
        return ts_err_set(err, TS_E_ARG, "reference %s: border %d", what, (int)op->u.sample.border);
    return TS_OK;
}

/* src and dst must be two stages of one op: same pixel format, and dst's
 * image the size the op makes of src's. */
static ts_status check_pair(const tsk_op *op, const ts_view *src, const ts_view *dst, const char *what,
                            ts_err *err)
{
    int ow, oh;
    ts_status st = check_view(src, "source", what, err);
    if (st == TS_OK) st = check_view(dst, "destination", what, err);
    if (st != TS_OK) return st;
    if (src->c != dst->c || src->type != dst->type)
        return ts_err_set(err, TS_E_ARG, "reference %s: source and destination differ in channels or type", what);
    tsk_out_size(op, src->full_w, src->full_h, &ow, &oh);
    if (dst->full_w != ow || dst->full_h != oh)
        return ts_err_set(err, TS_E_ARG, "reference %s: a %dx%d input makes a %dx%d image, not %dx%d", what,
                          src->full_w, src->full_h, ow, oh, dst->full_w, dst->full_h);
    if (src->full_w < 1 || src->full_h < 1)
        return ts_err_set(err, TS_E_ARG, "reference %s: empty %dx%d input image", what, src->full_w,
                          src->full_h);
    return TS_OK;
}

ts_status tsk_ref_check(const tsk_op *op, const ts_view *src, const ts_view *dst, ts_err *err)
{
    const tsk_kind_info *k;
    ts_status st;
    if (!op || !src || !dst) return ts_err_set(err, TS_E_ARG, "reference: missing op or view");
    k = tsk_kind_info_of(op->kind);
    if (!k) return ts_err_set(err, TS_E_ARG, "reference: unknown kernel op %d", (int)op->kind);
    st = k->check(op, k->name, err);
    if (st == TS_OK) st = check_pair(op, src, dst, k->name, err);
    return st;
}

ts_status tsk_apply_split(tsk_apply_fn apply, const tsk_op *op, const ts_view *src, ts_view *dst, int *done,
                          ts_err *err)
{
    tsk_op conv, orient;
    *done = tsk_split_then(op, &conv, &orient);
    if (!*done) return TS_OK;
    /* the convolution's output region that the orientation reads */
    ts_rect out = { dst->x0, dst->y0, dst->w, dst->h };
    ts_rect r = tsk_need(&orient, src->full_w, src->full_h, out);
    ts_view mid = *dst;
    mid.x0 = r.x0;
    mid.y0 = r.y0;
    mid.w = r.w;
    mid.h = r.h;
    mid.full_w = src->full_w;
    mid.full_h = src->full_h;
    mid.pitch = (size_t)r.w * (size_t)dst->c * (size_t)dst->type;
    mid.data = malloc(mid.pitch * (size_t)r.h + 1);
    if (!mid.data)
        return ts_err_set(err, TS_E_NOMEM, "separable convolution: no memory for %dx%d pixels before the orientation",
                          r.w, r.h);
    ts_status st = apply(&conv, src, &mid, err);
    if (st == TS_OK) st = apply(&orient, &mid, dst, err);
    free(mid.data);
    return st;
}

ts_status tsk_ref_apply(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err)
{
    ts_status st = tsk_ref_check(op, src, dst, err);
    if (st != TS_OK) return st;
    if (dst->w == 0 || dst->h == 0) return TS_OK;
    int split = 0;
    st = tsk_apply_split(tsk_ref_apply, op, src, dst, &split, err);
    if (split) return st;
    return tsk_kind_info_of(op->kind)->ref(op, src, dst, err);  /* checked: a known kind */
}
