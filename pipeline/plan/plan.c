/* plan.c - lower a parsed chain to kernel ops for one image, and walk
 * output tiles back through the ops to the regions they need. */
#include "plan.h"
#include "ops.h"
#include "orient/ts_orient.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct op_list {
    tsk_op *ops;
    int n, cap;
} op_list;

static tsk_op *push(op_list *l)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 8;
        tsk_op *ops = realloc(l->ops, sizeof *ops * (size_t)cap);
        if (!ops) return NULL;
        l->ops = ops;
        l->cap = cap;
    }
    tsk_op *op = &l->ops[l->n++];
    memset(op, 0, sizeof *op);
    return op;
}

/* ------------------------------------------------------------ matrices */

/* For grey images the matrix sees (v, v, v) and the result is the luma of
 * its output: fold that into out = m[0] v + m[3] max. */
static void matrix_for_grey(float m[12])
{
    float gain = 0, off = 0;
    for (int i = 0; i < 3; i++) {
        gain += ts_luma[i] * (m[4 * i] + m[4 * i + 1] + m[4 * i + 2]);
        off += ts_luma[i] * m[4 * i + 3];
    }
    memset(m, 0, sizeof(float) * 12);
    m[0] = gain;
    m[3] = off;
}

/* ------------------------------------------------------------ orientations */

/* The single code equal to applying a, then b (checked on a 2x3 image). */
static int orient_compose(int a, int b)
{
    const int w = 2, h = 3;
    int aw = ts_orient_swaps(a) ? h : w, ah = ts_orient_swaps(a) ? w : h;   /* size after a */
    int bw = ts_orient_swaps(b) ? ah : aw, bh = ts_orient_swaps(b) ? aw : ah; /* size after b */
    for (int k = 1; k <= 8; k++) {
        int kw = ts_orient_swaps(k) ? h : w, kh = ts_orient_swaps(k) ? w : h, same = kw == bw && kh == bh;
        for (int y = 0; same && y < bh; y++)
            for (int x = 0; same && x < bw; x++) {
                int mx, my, sx, sy, kx, ky;
                ts_orient_src(b, x, y, aw, ah, &mx, &my);
                ts_orient_src(a, mx, my, w, h, &sx, &sy);
                ts_orient_src(k, x, y, w, h, &kx, &ky);
                same = kx == sx && ky == sy;
            }
        if (same) return k;
    }
    return 1; /* unreachable: the eight codes form a group */
}

/* ------------------------------------------------------------ lowering */

/* Ops that mix neighbouring pixels, so colour must be premultiplied by
 * alpha first; nearest sampling reads one pixel and mixes none. */
static int is_smoothing(const tsk_op *k)
{
    if (k->kind == TSK_SAMPLE && k->u.sample.interp == TSK_NEAREST) return 0;
    return (k->kind == TSK_CONV_SEP || k->kind == TSK_CONV_2D || k->kind == TSK_SAMPLE) &&
           !k->alpha_passthrough;
}

/* Scale the constant border values from full-scale units to channel units. */
static void scale_border_value(tsk_op *k, ts_type t)
{
    float maxv = (float)ts_type_max(t);
    if (k->kind == TSK_SAMPLE) k->u.sample.border_value *= maxv;
}

/* The state of step 1: the kernel ops so far and the image entering the
 * next user op. */
struct ts_lowering {
    op_list raw;
    int w, h;
    ts_type type;
};

int ts_lowering_w(const ts_lowering *lw) { return lw->w; }
int ts_lowering_h(const ts_lowering *lw) { return lw->h; }

ts_status ts_lower_emit(ts_lowering *lw, const tsk_op *k, ts_err *err)
{
    tsk_op *prev = lw->raw.n ? &lw->raw.ops[lw->raw.n - 1] : NULL;
    if (k->kind == TSK_ORIENT && prev && prev->kind == TSK_ORIENT) {
        prev->u.orient.code = orient_compose(prev->u.orient.code, k->u.orient.code);
    } else if (k->kind == TSK_MATRIX && prev && prev->kind == TSK_MATRIX) {
        ts_matrix_then(prev->u.matrix.m, k->u.matrix.m);
    } else {
        tsk_op *o = push(&lw->raw);
        if (!o) return ts_err_set(err, TS_E_NOMEM, "out of memory planning the op chain");
        *o = *k;
        scale_border_value(o, lw->type);
    }
    /* the size after k alone: a folded orientation swaps the axes as k does */
    tsk_out_size(k, lw->w, lw->h, &lw->w, &lw->h);
    return TS_OK;
}

ts_status ts_plan_make(const ts_chain *chain, int w, int h, int c, ts_type type,
                       ts_plan *plan, ts_err *err)
{
    op_list raw = { 0 }, out = { 0 };
    int has_alpha = c == 2 || c == 4;
    ts_status st = TS_OK;
    memset(plan, 0, sizeof *plan);

    /* 1: user ops -> kernel ops, folding adjacent matrices and orientations */
    ts_lowering lw = { { 0 }, w, h, type };
    for (int i = 0; i < chain->n && st == TS_OK; i++) {
        const ts_user_op *op = &chain->ops[i];
        st = op->def->lower(op, &lw, err);
    }
    raw = lw.raw;

    /* 2: drop identities, fold grey matrices, wrap smoothing runs in premultiply */
    for (int i = 0; i < raw.n && st == TS_OK; i++) {
        tsk_op *k = &raw.ops[i];
        if (k->kind == TSK_ORIENT && k->u.orient.code == 1) continue;
        if (k->kind == TSK_MATRIX && c <= 2) matrix_for_grey(k->u.matrix.m);
        if (!has_alpha) k->alpha_passthrough = 0;
        int smooth = has_alpha && is_smoothing(k);
        int prev_smooth = i > 0 && has_alpha && is_smoothing(&raw.ops[i - 1]);
        tsk_op *o;
        if (smooth && !prev_smooth) {
            if (!(o = push(&out))) { st = TS_E_NOMEM; break; }
            o->kind = TSK_PREMUL;
        }
        if (!(o = push(&out))) { st = TS_E_NOMEM; break; }
        *o = *k;
        int next_smooth = i + 1 < raw.n && is_smoothing(&raw.ops[i + 1]);
        if (smooth && !next_smooth) {
            if (!(o = push(&out))) { st = TS_E_NOMEM; break; }
            o->kind = TSK_UNPREMUL;
        }
    }
    free(raw.ops);
    if (st == TS_E_NOMEM) ts_err_set(err, st, "out of memory planning the op chain");
    if (st != TS_OK) { free(out.ops); return st; }

    plan->n = out.n;
    plan->ops = out.ops;
    plan->c = c;
    plan->type = type;
    plan->w = malloc(sizeof(int) * (size_t)(out.n + 1));
    plan->h = malloc(sizeof(int) * (size_t)(out.n + 1));
    if (!plan->w || !plan->h) {
        ts_plan_free(plan);
        return ts_err_set(err, TS_E_NOMEM, "out of memory planning the op chain");
    }
    plan->w[0] = w;
    plan->h[0] = h;
    for (int i = 0; i < out.n; i++) tsk_out_size(&out.ops[i], plan->w[i], plan->h[i], &plan->w[i + 1], &plan->h[i + 1]);
    return TS_OK;
}

/* The fusing passes compact the plan in place: op i kept as op n, with
 * the size of the stage after it. */
static void keep_op(ts_plan *plan, int i, int n)
{
    plan->ops[n] = plan->ops[i];
    plan->w[n + 1] = plan->w[i + 1];
    plan->h[n + 1] = plan->h[i + 1];
}

/* n ops kept: how many the pass removed. */
static int end_fuse(ts_plan *plan, int n)
{
    const int removed = plan->n - n;
    plan->n = n;
    return removed;
}

/* A separable convolution the GPU writes oriented (tsk_gpu_sep_fuses)
 * takes the ORIENT after it (with the matrix it carries), or a MATRIX after
 * it as the identity orientation with that matrix. */
static int fuse_after_sep(ts_plan *plan, int device_c)
{
    int n = 0;
    for (int i = 0; i < plan->n; i++) {
        tsk_op *k = &plan->ops[i], *prev = n > 0 ? &plan->ops[n - 1] : NULL;
        if (prev && prev->kind == TSK_CONV_SEP && prev->u.sep.then.code == 0 &&
            (k->kind == TSK_ORIENT || k->kind == TSK_MATRIX) && tsk_gpu_sep_fuses(prev, device_c, plan->type)) {
            if (k->kind == TSK_ORIENT) {
                prev->u.sep.then = k->u.orient;
            } else {
                prev->u.sep.then.code = 1;
                prev->u.sep.then.matrix = 1;
                memcpy(prev->u.sep.then.m, k->u.matrix.m, sizeof prev->u.sep.then.m);
            }
            plan->w[n] = plan->w[i + 1];
            plan->h[n] = plan->h[i + 1];
            continue;
        }
        keep_op(plan, i, n++);
    }
    return end_fuse(plan, n);
}

int ts_plan_fuse(ts_plan *plan, int device_c)
{
    int n = 0;
    for (int i = 0; i < plan->n; i++) {
        tsk_op *k = &plan->ops[i];
        /* the orientation before the matrix, else the one after it */
        tsk_op *into = NULL;
        if (k->kind == TSK_MATRIX) {
            tsk_op *prev = n > 0 ? &plan->ops[n - 1] : NULL, *next = i + 1 < plan->n ? &plan->ops[i + 1] : NULL;
            if (prev && prev->kind == TSK_ORIENT && !prev->u.orient.matrix) into = prev;
            else if (next && next->kind == TSK_ORIENT && !next->u.orient.matrix) into = next;
        }
        if (into) {
            into->u.orient.matrix = 1;
            memcpy(into->u.orient.m, k->u.matrix.m, sizeof into->u.orient.m);
            continue;
        }
        keep_op(plan, i, n++);
    }
    const int removed = end_fuse(plan, n);
    return removed + fuse_after_sep(plan, device_c);
}

void ts_plan_free(ts_plan *plan)
{
    free(plan->ops);
    free(plan->w);
    free(plan->h);
    memset(plan, 0, sizeof *plan);
}

void ts_plan_regions(const ts_plan *plan, ts_rect out, ts_rect *r)
{
    r[plan->n] = out;
    for (int k = plan->n - 1; k >= 0; k--) r[k] = tsk_need(&plan->ops[k], plan->w[k], plan->h[k], r[k + 1]);
}

void ts_plan_max_regions(const ts_plan *plan, int tile_w, int tile_h,
                         size_t *max_in_px, size_t *max_stage_px)
{
    int ow = plan->w[plan->n], oh = plan->h[plan->n];
    if (tile_w <= 0 || tile_w > ow) tile_w = ow;
    if (tile_h <= 0 || tile_h > oh) tile_h = oh;
    ts_rect r[64], *rr = plan->n + 1 <= 64 ? r : malloc(sizeof(ts_rect) * (size_t)(plan->n + 1));
    size_t in_px = 0, stage_px = 0;
    for (int y = 0; rr && y < oh; y += tile_h)
        for (int x = 0; x < ow; x += tile_w) {
            ts_rect t = { x, y, x + tile_w <= ow ? tile_w : ow - x, y + tile_h <= oh ? tile_h : oh - y };
            ts_plan_regions(plan, t, rr);
            size_t p0 = (size_t)rr[0].w * (size_t)rr[0].h;
            if (p0 > in_px) in_px = p0;
            for (int k = 0; k <= plan->n; k++) {
                size_t pk = (size_t)rr[k].w * (size_t)rr[k].h;
                if (pk > stage_px) stage_px = pk;
            }
        }
    if (rr != r) free(rr);
    *max_in_px = in_px;
    *max_stage_px = stage_px;
}
