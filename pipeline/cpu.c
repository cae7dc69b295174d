/* cpu.c - the CPU backend: runs a plan tile by tile with the reference
 * ops. It is the oracle for the GPU and the fallback without one. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

/* A view over rectangle r of a whole image held in img. */
static ts_view image_view(const ts_image *img, ts_rect r, int full_w, int full_h)
{
    ts_view v;
    size_t px = ts_pixel_bytes(img);
    v.data = img->data + (size_t)r.y0 * img->stride + (size_t)r.x0 * px;
    v.pitch = img->stride;
    v.x0 = r.x0; v.y0 = r.y0; v.w = r.w; v.h = r.h;
    v.full_w = full_w; v.full_h = full_h;
    v.c = img->c; v.type = img->type;
    return v;
}

/* A freshly allocated buffer holding rectangle r of a stage. */
static ts_status alloc_view(ts_view *v, ts_rect r, int full_w, int full_h, int c, ts_type t, ts_err *err)
{
    size_t pitch = (size_t)(r.w > 0 ? r.w : 1) * (size_t)c * (size_t)t;
    v->data = malloc(pitch * (size_t)(r.h > 0 ? r.h : 1));
    if (!v->data) return ts_err_set(err, TS_E_NOMEM, "out of memory for a %dx%d tile", r.w, r.h);
    v->pitch = pitch;
    v->x0 = r.x0; v->y0 = r.y0; v->w = r.w; v->h = r.h;
    v->full_w = full_w; v->full_h = full_h;
    v->c = c; v->type = t;
    return TS_OK;
}

/* Compute output rectangle tile of plan into out: each op in turn on
 * exactly the region the rest of the chain needs. */
static ts_status run_tile(const ts_plan *plan, const ts_image *in, ts_rect tile, ts_rect *r,
                          ts_image *out, ts_err *err)
{
    ts_plan_regions(plan, tile, r);
    ts_view src = image_view(in, r[0], plan->w[0], plan->h[0]);
    unsigned char *owned = NULL;
    ts_status st = TS_OK;
    for (int k = 0; k < plan->n && st == TS_OK; k++) {
        ts_view dst;
        if (k == plan->n - 1) {
            dst = image_view(out, r[k + 1], plan->w[k + 1], plan->h[k + 1]);
        } else if ((st = alloc_view(&dst, r[k + 1], plan->w[k + 1], plan->h[k + 1], plan->c, plan->type, err)) != TS_OK) {
            break;
        }
        st = tsk_ref_apply(&plan->ops[k], &src, &dst, err);
        free(owned);
        owned = k == plan->n - 1 ? NULL : dst.data;
        src = dst;
    }
    free(owned);
    return st;
}

ts_status ts_cpu_run(const ts_chain *chain, const ts_image *in, int tile_w, int tile_h,
                     ts_image *out, ts_err *err)
{
    ts_plan plan;
    ts_status st = ts_plan_make(chain, in->w, in->h, in->c, in->type, &plan, err);
    if (st != TS_OK) return st;
    int ow = plan.w[plan.n], oh = plan.h[plan.n];
    st = ts_image_alloc(out, ow, oh, in->c, in->type, 0, NULL, err);
    if (st != TS_OK) { ts_plan_free(&plan); return st; }
    out->orientation = 1;
    if (in->icc && in->icc_len) {
        out->icc = malloc(in->icc_len);
        if (out->icc) {
            memcpy(out->icc, in->icc, in->icc_len);
            out->icc_len = in->icc_len;
        }
    }
    if (plan.n == 0) { /* empty chain: pixels unchanged */
        size_t row = (size_t)in->w * ts_pixel_bytes(in);
        for (int y = 0; y < in->h; y++) memcpy(out->data + (size_t)y * out->stride, in->data + (size_t)y * in->stride, row);
        ts_plan_free(&plan);
        return TS_OK;
    }
    if (tile_w <= 0 || tile_w > ow) tile_w = ow;
    if (tile_h <= 0 || tile_h > oh) tile_h = oh;
    ts_rect *r = malloc(sizeof(ts_rect) * (size_t)(plan.n + 1));
    if (!r) st = ts_err_set(err, TS_E_NOMEM, "out of memory");
    for (int y = 0; st == TS_OK && y < oh; y += tile_h)
        for (int x = 0; st == TS_OK && x < ow; x += tile_w) {
            ts_rect t = { x, y, x + tile_w <= ow ? tile_w : ow - x, y + tile_h <= oh ? tile_h : oh - y };
            st = run_tile(&plan, in, t, r, out, err);
        }
    free(r);
    ts_plan_free(&plan);
    if (st != TS_OK) ts_image_free(out);
    return st;
}

ts_status ts_chain_out_size(const ts_chain *chain, int w, int h, int c, int *out_w, int *out_h, ts_err *err)
{
    ts_plan plan;
    ts_status st = ts_plan_make(chain, w, h, c, TS_U8, &plan, err);
    if (st != TS_OK) return st;
    *out_w = plan.w[plan.n];
    *out_h = plan.h[plan.n];
    ts_plan_free(&plan);
    return TS_OK;
}
