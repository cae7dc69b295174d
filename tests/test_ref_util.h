/* test_ref_util.h - helpers for the reference-op tests: views made from
 * literal values, running an op over a whole image, comparing with
 * expected values, and random ops. Include after check.h and testimg.h. */
#ifndef TS_TEST_REF_UTIL_H
#define TS_TEST_REF_UTIL_H

#include "check.h"
#include "testimg.h"
#include "tsk.h"

#include <string.h>

static const char *const tref_border_names[] = { "replicate", "reflect101", "reflect", "wrap", "constant" };
static const char *const tref_type_names[] = { "?", "u8", "u16", "?", "f32" };

/* A whole w x h image of c channels whose values are vals[(y*w + x)*c + ch]. */
static inline ts_view tref_view(int w, int h, int c, ts_type t, const float *vals)
{
    ts_view v = timg_whole(w, h, c, t);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int ch = 0; ch < c; ch++) timg_set(&v, x, y, ch, vals[((size_t)y * w + x) * c + ch]);
    return v;
}

/* The whole output image of op applied to the whole image src, poisoned
 * first so that any pixel left unwritten shows. Checks the call worked. */
static inline ts_view tref_apply_whole(const tsk_op *op, const ts_view *src)
{
    int ow, oh;
    ts_err err;
    ts_status st;
    ts_view dst;
    tsk_out_size(op, src->full_w, src->full_h, &ow, &oh);
    dst = timg_whole(ow, oh, src->c, src->type);
    timg_poison(&dst);
    err.msg[0] = '\0';
    st = tsk_ref_apply(op, src, &dst, &err);
    CHECK_MSG(st == TS_OK, "op %d on %dx%dx%d: %s", (int)op->kind, src->w, src->h, src->c, err.msg);
    return dst;
}

/* Every value of v equals want[] (row-major, c per pixel) within tol. */
static inline void tref_expect(const ts_view *v, const float *want, double tol, const char *name)
{
    int bad = 0;
    for (int y = 0; y < v->h; y++)
        for (int x = 0; x < v->w; x++)
            for (int ch = 0; ch < v->c; ch++) {
                double got = timg_get(v, x, y, ch), w = want[((size_t)y * v->w + x) * v->c + ch];
                if (!(got - w <= tol && w - got <= tol)) {
                    if (bad++ < 6)
                        fprintf(stderr, "%s: (%d,%d) ch %d: got %.9g want %.9g\n", name, x, y, ch, got, w);
                }
            }
    CHECK_MSG(bad == 0, "%s: %d values differ", name, bad);
}

/* Two views hold the same bytes in every pixel of their (equal) regions. */
static inline int tref_same_bytes(const ts_view *a, const ts_view *b)
{
    size_t row = (size_t)a->w * (size_t)a->c * (size_t)a->type;
    if (a->w != b->w || a->h != b->h || a->c != b->c || a->type != b->type) return 0;
    for (int y = 0; y < a->h; y++)
        if (memcmp(a->data + (size_t)y * a->pitch, b->data + (size_t)y * b->pitch, row) != 0) return 0;
    return 1;
}

/* A copy of rect r of the whole image `whole`, as a view of that region. */
static inline ts_view tref_crop(const ts_view *whole, ts_rect r)
{
    ts_view v = timg_alloc(r.x0, r.y0, r.w, r.h, whole->full_w, whole->full_h, whole->c, whole->type);
    size_t row = (size_t)r.w * (size_t)whole->c * (size_t)whole->type;
    for (int y = 0; y < r.h; y++)
        memcpy(v.data + (size_t)y * v.pitch,
               whole->data + (size_t)(r.y0 + y) * whole->pitch + (size_t)r.x0 * whole->c * whole->type, row);
    return v;
}

/* Uniform random numbers for test parameters. */
static inline int tref_randint(int lo, int hi) { return lo + (int)(check_rand() % (unsigned long long)(hi - lo + 1)); }
static inline float tref_randf(float lo, float hi)
{
    return lo + (hi - lo) * (float)((check_rand() >> 11) * (1.0 / 9007199254740992.0));
}
static inline ts_type tref_randtype(void)
{
    static const ts_type t[3] = { TS_U8, TS_U16, TS_F32 };
    return t[tref_randint(0, 2)];
}
static inline int tref_randodd(int max) { return 2 * tref_randint(0, (max - 1) / 2) + 1; }

/* Border folding written another way than ts_border_map: reflect step by
 * step until inside. -1 for a constant border outside. */
static inline int tref_fold(int i, int n, ts_border b)
{
    if (b == TS_BORDER_CONSTANT) return (i >= 0 && i < n) ? i : -1;
    if (b == TS_BORDER_REPLICATE) return i < 0 ? 0 : i >= n ? n - 1 : i;
    if (n == 1) return 0;
    while (i < 0 || i >= n) {
        if (b == TS_BORDER_WRAP) i += i < 0 ? n : -n;
        else if (b == TS_BORDER_REFLECT101) i = i < 0 ? -i : 2 * (n - 1) - i;
        else i = i < 0 ? -1 - i : 2 * n - 1 - i;
    }
    return i;
}

#endif
