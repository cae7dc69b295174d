/* test_ref_regions.c - regions: for random ops of every kind, border,
 * type and channel count on random sizes (1x1 and odd ones included), an
 * output rect computed from only tsk_need(rect) of the input equals the
 * same rect of the whole-image result, byte for byte. For the
 * convolutions, point ops and orientations need is also tight: one pixel
 * less on any side and the reference refuses (TS_E_ARG); and for
 * convolutions it is exactly the grown rect clipped to the image (whole
 * axis for wrap once it leaves), which together proves clipping is enough
 * for replicate, reflect and constant. */
#include "check.h"
#include "testimg.h"
#include "test_ref_util.h"

#include <math.h>

static float rand_channel_value(ts_type t)
{
    return t == TS_U8 ? (float)tref_randint(0, 255) : t == TS_U16 ? (float)tref_randint(0, 65535) : tref_randf(0, 1);
}

/* An affine inverse map for an in_w x in_h input: mostly scale, rotation
 * and shift near the image; sometimes anything, far away, huge or NaN. */
static void random_inverse(float inv[6], int in_w, int in_h)
{
    int style = tref_randint(0, 9);
    if (style <= 5) {
        float a = tref_randf(-3.2f, 3.2f), sx = tref_randf(0.2f, 4), sy = style == 0 ? sx : tref_randf(0.2f, 4);
        if (style == 1) a = 0;
        inv[0] = sx * cosf(a); inv[1] = -sy * sinf(a);
        inv[3] = sx * sinf(a); inv[4] = sy * cosf(a);
        inv[2] = tref_randf(-1.5f, 1.5f) * (float)in_w;
        inv[5] = tref_randf(-1.5f, 1.5f) * (float)in_h;
    } else if (style <= 7) {
        for (int i = 0; i < 6; i++) inv[i] = tref_randf(-3, 3);
        if (style == 7) { inv[2] += tref_randf(-1000, 1000); inv[5] += tref_randf(-1000, 1000); }
    } else {
        static const float odd[5] = { 1e9f, -3e8f, 1e30f, 2.5e8f, NAN };
        for (int i = 0; i < 6; i++) inv[i] = tref_randf(-2, 2);
        inv[tref_randint(0, 5)] = odd[tref_randint(0, 4)];
    }
}

/* A random op of a random kind for an in_w x in_h image of type t. Large
 * separable kernels only on small images, to keep the test quick. */
static tsk_op random_op(int in_w, int in_h, ts_type t)
{
    tsk_op op;
    memset(&op, 0, sizeof op);
    op.kind = (tsk_kind)tref_randint(0, TSK_KIND_COUNT - 1);
    op.alpha_passthrough = tref_randint(0, 1);
    switch (op.kind) {
    case TSK_MATRIX:
        for (int i = 0; i < 12; i++) op.u.matrix.m[i] = (i % 4 == 3) ? tref_randf(-0.3f, 0.3f) : tref_randf(-1, 1.5f);
        break;
    case TSK_ORIENT:
        op.u.orient.code = tref_randint(1, 8);
        break;
    case TSK_CONV_SEP:
        op.u.sep.nx = tref_randodd(in_w * in_h <= 64 ? TSK_MAX_SEP_TAPS : 11);
        op.u.sep.ny = tref_randodd(in_w * in_h <= 64 ? TSK_MAX_SEP_TAPS : 11);
        for (int i = 0; i < op.u.sep.nx; i++) op.u.sep.kx[i] = tref_randf(-0.3f, 1) / (float)op.u.sep.nx;
        for (int j = 0; j < op.u.sep.ny; j++) op.u.sep.ky[j] = tref_randf(-0.3f, 1) / (float)op.u.sep.ny;
        op.u.sep.center_w = tref_randint(0, 1) ? 0 : tref_randf(0.5f, 2);
        op.u.sep.conv_w = 1 - op.u.sep.center_w;
        op.u.sep.border = (ts_border)tref_randint(0, 4);
        op.u.sep.border_value = rand_channel_value(t);
        break;
    case TSK_CONV_2D:
        op.u.conv2d.kw = tref_randodd(TSK_MAX_2D);
        op.u.conv2d.kh = tref_randodd(TSK_MAX_2D);
        for (int i = 0; i < op.u.conv2d.kw * op.u.conv2d.kh; i++) {
            op.u.conv2d.k[i] = tref_randf(-1, 1) / (float)op.u.conv2d.kw;
            op.u.conv2d.k2[i] = tref_randf(-1, 1) / (float)op.u.conv2d.kh;
        }
        op.u.conv2d.mode = (tsk_conv_mode)tref_randint(0, 2);
        op.u.conv2d.bias = tref_randf(-0.2f, 0.5f);
        op.u.conv2d.border = (ts_border)tref_randint(0, 4);
        op.u.conv2d.border_value = rand_channel_value(t);
        break;
    case TSK_SAMPLE:
        random_inverse(op.u.sample.inv, in_w, in_h);
        op.u.sample.out_w = tref_randint(1, 3) == 1 ? 1 : tref_randint(1, 33);
        op.u.sample.out_h = tref_randint(1, 3) == 1 ? 1 : tref_randint(1, 33);
        op.u.sample.interp = (tsk_interp)tref_randint(0, TSK_INTERP_COUNT - 1);
        op.u.sample.border = (ts_border)tref_randint(0, 4);
        op.u.sample.border_value = rand_channel_value(t);
        if (op.u.sample.interp >= TSK_AREA) { /* wide footprints: few output pixels, to stay quick */
            float kx, ky;
            tsk_sample_footprint(&op, &kx, &ky);
            if (kx * ky > 64) {
                op.u.sample.out_w = tref_randint(1, 3);
                op.u.sample.out_h = tref_randint(1, 3);
            }
        }
        break;
    default: /* PREMUL, UNPREMUL: no parameters */
        break;
    }
    return op;
}

/* An orientation (and matrix) after a separable convolution, as
 * ts_plan_fuse makes it for the GPU: code 1..8, half of them with a matrix. */
static void random_then(tsk_op *op)
{
    op->u.sep.then.code = tref_randint(1, 8);
    op->u.sep.then.matrix = tref_randint(0, 1);
    for (int i = 0; i < 12; i++) op->u.sep.then.m[i] = (i % 4 == 3) ? tref_randf(-0.3f, 0.3f) : tref_randf(-1, 1.5f);
}

static void describe(const tsk_op *op, const ts_view *src, ts_rect r, char *buf, size_t n)
{
    snprintf(buf, n, "kind %d on %dx%dx%d %s, rect %d,%d %dx%d", (int)op->kind, src->full_w, src->full_h, src->c,
             tref_type_names[src->type], r.x0, r.y0, r.w, r.h);
}

/* Run op over rect r from only src = need(r) and compare with whole. */
static void check_rect(const tsk_op *op, const ts_view *in, const ts_view *whole, ts_rect r)
{
    char what[160];
    ts_rect need = tsk_need(op, in->full_w, in->full_h, r);
    ts_view src, dst, want;
    ts_err err;
    ts_status st;
    describe(op, in, r, what, sizeof what);
    CHECK_MSG(need.w >= 0 && need.h >= 0 && need.x0 >= 0 && need.y0 >= 0 && need.x0 + need.w <= in->full_w &&
              need.y0 + need.h <= in->full_h, "%s: need %d,%d %dx%d is not inside the image", what, need.x0,
              need.y0, need.w, need.h);
    if (need.w == 0 || need.h == 0) need.w = need.h = 0;
    src = tref_crop(in, need);
    dst = timg_alloc(r.x0, r.y0, r.w, r.h, whole->full_w, whole->full_h, in->c, in->type);
    timg_poison(&dst);
    err.msg[0] = '\0';
    st = tsk_ref_apply(op, &src, &dst, &err);
    CHECK_MSG(st == TS_OK, "%s: %s", what, err.msg);
    want = tref_crop(whole, r);
    CHECK_MSG(tref_same_bytes(&dst, &want), "%s: differs from the whole-image result (need %d,%d %dx%d)", what,
              need.x0, need.y0, need.w, need.h);
    timg_free(&src);
    timg_free(&dst);
    timg_free(&want);
}

static void test_random_regions(void)
{
    for (int round = 0; round < 500; round++) {
        int w = tref_randint(1, 6) == 1 ? 1 : tref_randint(1, 29);
        int h = tref_randint(1, 6) == 1 ? 1 : tref_randint(1, 29);
        ts_type t = tref_randtype();
        ts_view in = timg_whole(w, h, tref_randint(1, 4), t), whole;
        tsk_op op = random_op(w, h, t);
        if (op.kind == TSK_CONV_SEP && tref_randint(0, 1)) random_then(&op);
        timg_random(&in);
        whole = tref_apply_whole(&op, &in);
        for (int k = 0; k < 5; k++) {
            ts_rect r;
            r.x0 = tref_randint(0, whole.full_w - 1);
            r.y0 = tref_randint(0, whole.full_h - 1);
            r.w = tref_randint(1, whole.full_w - r.x0);
            r.h = tref_randint(1, whole.full_h - r.y0);
            check_rect(&op, &in, &whole, r);
        }
        timg_free(&whole);
        timg_free(&in);
    }
}

/* The rect one axis of a convolution needs, by the rule in tsk.h. */
static void conv_axis(int lo, int hi, int n, ts_border b, int *a, int *len)
{
    if (b == TS_BORDER_WRAP && (lo < 0 || hi >= n)) { lo = 0; hi = n - 1; }
    if (lo < 0) lo = 0;
    if (hi > n - 1) hi = n - 1;
    *a = lo;
    *len = hi - lo + 1;
}

/* need with one pixel less on side `side` (0 left, 1 top, 2 right,
 * 3 bottom); 0 when that side cannot shrink. */
static int shrink(ts_rect *r, int side)
{
    if ((side == 0 || side == 2) && r->w < 2) return 0;
    if ((side == 1 || side == 3) && r->h < 2) return 0;
    switch (side) {
    case 0: r->x0++; r->w--; break;
    case 1: r->y0++; r->h--; break;
    case 2: r->w--; break;
    default: r->h--; break;
    }
    return 1;
}

static void test_need_is_tight(void)
{
    for (int round = 0; round < 300; round++) {
        int w = tref_randint(1, 25), h = tref_randint(1, 25);
        ts_type t = tref_randtype();
        ts_view in = timg_whole(w, h, tref_randint(1, 4), t), dst;
        tsk_op op = random_op(w, h, t);
        ts_rect r, need;
        int ow, oh;
        char what[160];
        if (op.kind == TSK_SAMPLE) { timg_free(&in); continue; } /* carries slack on purpose */
        timg_random(&in);
        tsk_out_size(&op, w, h, &ow, &oh);
        r.x0 = tref_randint(0, ow - 1);
        r.y0 = tref_randint(0, oh - 1);
        r.w = tref_randint(1, ow - r.x0);
        r.h = tref_randint(1, oh - r.y0);
        need = tsk_need(&op, w, h, r);
        describe(&op, &in, r, what, sizeof what);
        if (op.kind == TSK_CONV_SEP || op.kind == TSK_CONV_2D) {
            int rx = op.kind == TSK_CONV_SEP ? op.u.sep.nx / 2 : op.u.conv2d.kw / 2;
            int ry = op.kind == TSK_CONV_SEP ? op.u.sep.ny / 2 : op.u.conv2d.kh / 2;
            ts_border b = op.kind == TSK_CONV_SEP ? op.u.sep.border : op.u.conv2d.border;
            int ax, aw, ay, ah;
            conv_axis(r.x0 - rx, r.x0 + r.w - 1 + rx, w, b, &ax, &aw);
            conv_axis(r.y0 - ry, r.y0 + r.h - 1 + ry, h, b, &ay, &ah);
            CHECK_MSG(need.x0 == ax && need.w == aw && need.y0 == ay && need.h == ah,
                      "%s: need %d,%d %dx%d, the rule gives %d,%d %dx%d", what, need.x0, need.y0, need.w,
                      need.h, ax, ay, aw, ah);
        } else if (op.kind != TSK_ORIENT) {
            CHECK_MSG(need.x0 == r.x0 && need.y0 == r.y0 && need.w == r.w && need.h == r.h,
                      "%s: a point op needs its own rect", what);
        }
        dst = timg_alloc(r.x0, r.y0, r.w, r.h, ow, oh, in.c, in.type);
        for (int side = 0; side < 4; side++) {
            ts_rect less = need;
            ts_view src;
            ts_err err;
            if (!shrink(&less, side)) continue;
            src = tref_crop(&in, less);
            err.msg[0] = '\0';
            CHECK_MSG(tsk_ref_apply(&op, &src, &dst, &err) == TS_E_ARG, "%s: works with side %d shrunk", what,
                      side);
            CHECK_MSG(strstr(err.msg, "lacks pixel") != NULL, "%s: message '%s'", what, err.msg);
            timg_free(&src);
        }
        timg_free(&dst);
        timg_free(&in);
    }
}

/* A separable convolution carrying an orientation gives the bytes of the
 * convolution followed by the ORIENT op (with its matrix), sizes swapped
 * for the transposing codes; a code outside 0..8 is refused. */
static void test_sep_then(void)
{
    for (int round = 0; round < 200; round++) {
        int w = tref_randint(1, 23), h = tref_randint(1, 23);
        ts_type t = tref_randtype();
        ts_view in = timg_whole(w, h, tref_randint(1, 4), t);
        tsk_op conv;
        do conv = random_op(w, h, t); while (conv.kind != TSK_CONV_SEP);
        tsk_op fused = conv, orient;
        random_then(&fused);
        memset(&orient, 0, sizeof orient);
        orient.kind = TSK_ORIENT;
        orient.u.orient = fused.u.sep.then;
        timg_random(&in);
        ts_view mid = tref_apply_whole(&conv, &in), want = tref_apply_whole(&orient, &mid);
        ts_view got = tref_apply_whole(&fused, &in);
        CHECK_MSG(got.full_w == want.full_w && got.full_h == want.full_h && tref_same_bytes(&got, &want),
                  "code %d%s on %dx%dx%d %s: differs from the two ops", fused.u.sep.then.code,
                  fused.u.sep.then.matrix ? "+matrix" : "", w, h, in.c, tref_type_names[t]);
        timg_free(&in);
        timg_free(&mid);
        timg_free(&want);
        timg_free(&got);
    }
    tsk_op op;
    ts_view src = timg_whole(5, 4, 3, TS_U8), dst = timg_whole(5, 4, 3, TS_U8);
    ts_err err;
    do op = random_op(5, 4, TS_U8); while (op.kind != TSK_CONV_SEP);
    op.u.sep.then.code = 9;
    timg_random(&src);
    CHECK_EQ_INT(tsk_ref_apply(&op, &src, &dst, &err), TS_E_ARG);
    timg_free(&src);
    timg_free(&dst);
}

/* Constant border, sampling wholly outside: nothing is needed, and the
 * reference takes an empty src (no pixels at all) and writes the border
 * value everywhere. */
static void test_empty_need(void)
{
    static const float far[6] = { 1, 0, 500, 0, 1, -300 };
    for (int interp = 0; interp < TSK_INTERP_COUNT; interp++) {
        tsk_op op;
        ts_rect r = { 1, 2, 5, 3 }, need;
        ts_view src, dst;
        ts_err err;
        float want[15 * 3];
        memset(&op, 0, sizeof op);
        op.kind = TSK_SAMPLE;
        memcpy(op.u.sample.inv, far, sizeof far);
        op.u.sample.out_w = 8;
        op.u.sample.out_h = 6;
        op.u.sample.interp = (tsk_interp)interp;
        op.u.sample.border = TS_BORDER_CONSTANT;
        op.u.sample.border_value = 0.75f;
        need = tsk_need(&op, 10, 10, r);
        CHECK_MSG(need.w == 0 || need.h == 0, "need %d,%d %dx%d, want empty", need.x0, need.y0, need.w, need.h);
        memset(&src, 0, sizeof src);
        src.full_w = 10;
        src.full_h = 10;
        src.c = 3;
        src.type = TS_F32;
        dst = timg_alloc(r.x0, r.y0, r.w, r.h, 8, 6, 3, TS_F32);
        timg_poison(&dst);
        CHECK_EQ_INT(tsk_ref_apply(&op, &src, &dst, &err), TS_OK);
        for (int i = 0; i < 45; i++) want[i] = 0.75f;
        tref_expect(&dst, want, 0, "empty need, constant border");
        timg_free(&dst);
        /* Replicate reads the nearest edge: need is not empty then. */
        op.u.sample.border = TS_BORDER_REPLICATE;
        need = tsk_need(&op, 10, 10, r);
        CHECK(need.w > 0 && need.h > 0 && need.x0 + need.w == 10 && need.y0 == 0);
    }
}

/* Float overflow: with inv = (1e38, -1e38, 0) the float sum at X = Y =
 * 5.5 is inf - inf = NaN, clamped to -2^30, which reflect maps to x = 6
 * of a 7-wide image (2^30 mod 14 = 8), while exact maths gives 0. need
 * must cover what float does: it takes the whole axis for such maps. */
static void test_overflowing_map(void)
{
    static const float inv[6] = { 1e38f, -1e38f, 0, 0, 1, 0 };
    for (int b = 0; b < 5; b++) {
        tsk_op op;
        ts_view in = timg_whole(7, 10, 1, TS_U8), whole;
        ts_rect r = { 5, 5, 1, 1 };
        memset(&op, 0, sizeof op);
        op.kind = TSK_SAMPLE;
        memcpy(op.u.sample.inv, inv, sizeof inv);
        op.u.sample.out_w = 10;
        op.u.sample.out_h = 10;
        op.u.sample.border = (ts_border)b;
        timg_random(&in);
        for (int interp = 0; interp < TSK_INTERP_COUNT; interp++) {
            op.u.sample.interp = (tsk_interp)interp;
            whole = tref_apply_whole(&op, &in);
            check_rect(&op, &in, &whole, r);
            timg_free(&whole);
        }
        timg_free(&in);
    }
}

/* An empty dst is nothing to do; mismatched views are refused. */
static void test_view_checks(void)
{
    tsk_op op;
    ts_view src = timg_whole(4, 4, 3, TS_U8), dst = timg_alloc(0, 0, 0, 3, 4, 4, 3, TS_U8);
    ts_err err;
    memset(&op, 0, sizeof op);
    op.kind = TSK_PREMUL;
    timg_random(&src);
    CHECK_EQ_INT(tsk_ref_apply(&op, &src, &dst, &err), TS_OK);
    timg_free(&dst);
    dst = timg_whole(4, 4, 4, TS_U8);
    CHECK_EQ_INT(tsk_ref_apply(&op, &src, &dst, &err), TS_E_ARG);
    timg_free(&dst);
    dst = timg_whole(4, 4, 3, TS_U16);
    CHECK_EQ_INT(tsk_ref_apply(&op, &src, &dst, &err), TS_E_ARG);
    timg_free(&dst);
    dst = timg_alloc(2, 2, 3, 3, 4, 4, 3, TS_U8); /* sticks out of its image */
    CHECK_EQ_INT(tsk_ref_apply(&op, &src, &dst, &err), TS_E_ARG);
    timg_free(&dst);
    dst = timg_whole(5, 4, 3, TS_U8); /* a point op keeps the size */
    CHECK_EQ_INT(tsk_ref_apply(&op, &src, &dst, &err), TS_E_ARG);
    timg_free(&dst);
    dst = timg_whole(4, 4, 3, TS_U8);
    src.pitch = 4; /* less than a row */
    CHECK_EQ_INT(tsk_ref_apply(&op, &src, &dst, &err), TS_E_ARG);
    timg_free(&dst);
    timg_free(&src);
}

int main(void)
{
    check_seed();
    test_random_regions();
    test_need_is_tight();
    test_sep_then();
    test_empty_need();
    test_overflowing_map();
    test_view_checks();
    return check_exit();
}
