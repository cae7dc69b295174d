/* test_cpu_ops.c - the fast CPU ops (kernels/<family>/cpu_*.c) against the
 * reference, byte for byte: every kernel op, every type, channel count and
 * border mode, odd sizes, regions inside the image with a source of exactly
 * tsk_need(), images wider than one band; every orientation code and pixel
 * size on sizes around the transposes' blocks, matrices on every row length
 * up to a few vectors and with coefficients that overflow. Nothing is
 * written outside the output's rows (the padding after them stays as it
 * was). Where the CPU has AVX2 all of it runs twice: with the AVX2 versions
 * and without them. The one op allowed to differ, with AVX2 and FMA only,
 * is the fused separable smoothing (symmetric taps on 8- and 16-bit
 * images), within 1 of the reference; without AVX2 it too is exact. Then the thread pool: tiles of one image on several
 * threads, and several images sharing one pool, equal the single-threaded
 * result. */
#include "batch_util.h"
#include "check.h"
#include "testimg.h"
#include "test_ref_util.h"
#include "pool.h"
#include "buffers.h"
#include "tsk_cpu.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

static const ts_type TYPES[3] = { TS_U8, TS_U16, TS_F32 };

static float border_value(ts_type t) { return t == TS_U8 ? 77.0f : t == TS_U16 ? 40000.0f : 0.625f; }

/* Random taps: smoothing (positive) or signed; a few exact zeros. */
static void random_taps(float *k, int n, int sign)
{
    for (int i = 0; i < n; i++) {
        k[i] = sign ? tref_randf(-1.0f, 1.0f) : tref_randf(0.0f, 1.0f) / (float)n;
        if (tref_randint(0, 5) == 0) k[i] = 0.0f;
    }
}

static tsk_op random_op(tsk_kind kind, int c, ts_type t, ts_border b)
{
    tsk_op op;
    memset(&op, 0, sizeof op);
    op.kind = kind;
    op.alpha_passthrough = tref_randint(0, 1);
    switch (kind) {
    case TSK_MATRIX:
        for (int i = 0; i < 12; i++) op.u.matrix.m[i] = tref_randf(-0.6f, 1.2f);
        if (tref_randint(0, 3) == 0) { /* the identity: copies */
            memset(op.u.matrix.m, 0, sizeof op.u.matrix.m);
            op.u.matrix.m[0] = op.u.matrix.m[5] = op.u.matrix.m[10] = 1.0f;
        }
        break;
    case TSK_ORIENT:
        op.u.orient.code = tref_randint(1, 8);
        if (tref_randint(0, 1)) { /* carrying a matrix, as ts_plan_fuse makes it */
            op.u.orient.matrix = 1;
            for (int i = 0; i < 12; i++) op.u.orient.m[i] = tref_randf(-0.6f, 1.2f);
        }
        break;
    case TSK_CONV_SEP: {
        int style = tref_randint(0, 2); /* smoothing, unsharp mask, signed */
        op.u.sep.nx = tref_randodd(tref_randint(0, 4) ? 15 : TSK_MAX_SEP_TAPS);
        op.u.sep.ny = tref_randodd(tref_randint(0, 4) ? 15 : TSK_MAX_SEP_TAPS);
        random_taps(op.u.sep.kx, op.u.sep.nx, style == 2);
        random_taps(op.u.sep.ky, op.u.sep.ny, style == 2);
        if (tref_randint(0, 1)) {   /* symmetric, as gauss and box are */
            for (int i = 0; i < op.u.sep.nx / 2; i++) op.u.sep.kx[op.u.sep.nx - 1 - i] = op.u.sep.kx[i];
            for (int i = 0; i < op.u.sep.ny / 2; i++) op.u.sep.ky[op.u.sep.ny - 1 - i] = op.u.sep.ky[i];
        }
        op.u.sep.center_w = style == 0 ? 0.0f : style == 1 ? 1.7f : 0.3f;
        op.u.sep.conv_w = style == 0 ? 1.0f : style == 1 ? -0.7f : 0.9f;
        op.u.sep.border = b;
        op.u.sep.border_value = border_value(t);
        if (tref_randint(0, 2) == 0) { /* an orientation after it, as ts_plan_fuse makes it for the GPU */
            op.u.sep.then.code = tref_randint(1, 8);
            /* a matrix only where the result is exact: it would widen the fused smoothing's 1 */
            if (!tsk_cpu_sep_fused(&op, c, t) && tref_randint(0, 1)) {
                op.u.sep.then.matrix = 1;
                for (int i = 0; i < 12; i++) op.u.sep.then.m[i] = tref_randf(-0.6f, 1.2f);
            }
        }
        break;
    }
    case TSK_CONV_2D:
        op.u.conv2d.kw = tref_randodd(TSK_MAX_2D);
        op.u.conv2d.kh = tref_randodd(TSK_MAX_2D);
        random_taps(op.u.conv2d.k, op.u.conv2d.kw * op.u.conv2d.kh, 1);
        random_taps(op.u.conv2d.k2, op.u.conv2d.kw * op.u.conv2d.kh, 1);
        op.u.conv2d.mode = (tsk_conv_mode)tref_randint(0, 2);
        op.u.conv2d.bias = tref_randf(-0.2f, 0.5f);
        op.u.conv2d.border = b;
        op.u.conv2d.border_value = border_value(t);
        break;
    case TSK_SAMPLE: {
        /* half of them axis-aligned (zeros of either sign off the diagonal),
         * which the fast version computes per column and per row; every
         * interpolation, a quarter of them shrinking 2.5x to 9x (the area
         * and bicubic footprints widen with it) */
        int aligned = tref_randint(0, 1), wide = tref_randint(0, 3) == 0;
        float a = wide ? tref_randf(2.5f, 9.0f) : tref_randf(0.3f, 2.5f);
        float r = aligned ? (tref_randint(0, 1) ? 0.0f : -0.0f) : tref_randf(-0.5f, 0.5f);
        op.u.sample.inv[0] = a; op.u.sample.inv[1] = r; op.u.sample.inv[2] = tref_randf(-4, 4);
        op.u.sample.inv[3] = -r; op.u.sample.inv[4] = aligned ? (wide ? tref_randf(2.5f, 9.0f) : tref_randf(0.3f, 2.5f)) : a;
        op.u.sample.inv[5] = tref_randf(-4, 4);
        op.u.sample.out_w = tref_randint(1, 50);
        op.u.sample.out_h = tref_randint(1, 40);
        op.u.sample.interp = (tsk_interp)tref_randint(0, TSK_INTERP_COUNT - 1);
        op.u.sample.border = b;
        op.u.sample.border_value = border_value(t);
        break;
    }
    default:
        break;
    }
    (void)c;
    return op;
}

/* The bytes after each row of v (its pitch is longer than the row) still
 * hold timg_poison's value. */
static int padding_intact(const ts_view *v)
{
    size_t row = (size_t)v->w * (size_t)v->c * (size_t)v->type;
    for (int y = 0; y < v->h; y++)
        for (size_t i = row; i < v->pitch; i++)
            if (v->data[(size_t)y * v->pitch + i] != 0xA5) return 0;
    return 1;
}

static const char *const KIND_NAMES[] = { "matrix", "premul", "unpremul", "orient", "sep", "2d", "sample" };

/* 1 where the CPU has AVX2 and FMA, which the fused smoothing needs. */
static int cpu_fma(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

static int fused_cases;   /* checked within 1 rather than exactly */
static int fixed_cases;   /* of those, the 8-bit passes in fixed point */

/* op on a w x h image: a random region of the output from exactly the
 * source region it needs, fast against reference. */
static void check_case(const tsk_op *op, int w, int h, int c, ts_type t, int whole_region)
{
    int ow, oh;
    ts_err err = { 0 };
    tsk_out_size(op, w, h, &ow, &oh);
    if (ow < 1 || oh < 1) return;
    ts_rect out = { 0, 0, ow, oh };
    if (!whole_region) {
        out.x0 = tref_randint(0, ow - 1);
        out.y0 = tref_randint(0, oh - 1);
        out.w = tref_randint(1, ow - out.x0);
        out.h = tref_randint(1, oh - out.y0);
    }
    ts_view img = timg_whole(w, h, c, t);
    timg_random(&img);
    ts_view src = tref_crop(&img, tsk_need(op, w, h, out));
    ts_view ref = timg_alloc(out.x0, out.y0, out.w, out.h, ow, oh, c, t);
    ts_view got = timg_alloc(out.x0, out.y0, out.w, out.h, ow, oh, c, t);
    timg_poison(&ref);
    timg_poison(&got);
    ts_status s1 = tsk_ref_apply(op, &src, &ref, &err);
    CHECK_MSG(s1 == TS_OK, "reference: %s", err.msg);
    ts_status s2 = tsk_cpu_apply(op, &src, &got, &err);
    CHECK_MSG(s2 == TS_OK, "fast: %s", err.msg);
    if (tsk_cpu_sep_fused(op, c, t)) {
        fused_cases++;
        fixed_cases += tsk_cpu_sep_fixed(op, c, t);
        double d = timg_compare(&got, &ref, 1.0, KIND_NAMES[op->kind]);
        CHECK_MSG(d <= 1.0, "%s %s c=%d %dx%d region %d,%d %dx%d: fused smoothing differs from the reference by %g",
                  KIND_NAMES[op->kind], tref_type_names[t], c, w, h, out.x0, out.y0, out.w, out.h, d);
    } else {
        int same = tref_same_bytes(&got, &ref);
        CHECK_MSG(same, "%s %s c=%d %dx%d region %d,%d %dx%d: fast differs from the reference", KIND_NAMES[op->kind],
                  tref_type_names[t], c, w, h, out.x0, out.y0, out.w, out.h);
        if (!same) timg_compare(&got, &ref, 0.0, KIND_NAMES[op->kind]);
    }
    CHECK_MSG(padding_intact(&got), "%s %s c=%d %dx%d region %d,%d %dx%d: fast wrote past the end of a row",
              KIND_NAMES[op->kind], tref_type_names[t], c, w, h, out.x0, out.y0, out.w, out.h);
    timg_free(&img);
    timg_free(&src);
    timg_free(&ref);
    timg_free(&got);
}

/* Every op, type, channel count and border on small odd images. */
static void test_small(void)
{
    for (int kind = 0; kind < TSK_KIND_COUNT; kind++)
        for (int ti = 0; ti < 3; ti++)
            for (int c = 1; c <= 4; c++)
                for (int b = 0; b <= TS_BORDER_CONSTANT; b++) {
                    tsk_op op = random_op((tsk_kind)kind, c, TYPES[ti], (ts_border)b);
                    int w = tref_randint(1, 45), h = tref_randint(1, 31);
                    check_case(&op, w, h, c, TYPES[ti], tref_randint(0, 1));
                }
}

/* Images wider than one band of the convolutions (a 13-tap ring of RGBA
 * floats holds under 1000 pixels), and a region starting past the first. */
static void test_wide(void)
{
    static const tsk_kind kinds[] = { TSK_CONV_SEP, TSK_CONV_2D, TSK_ORIENT, TSK_MATRIX, TSK_SAMPLE };
    for (int k = 0; k < 5; k++)
        for (int trial = 0; trial < 3; trial++) {
            int c = tref_randint(1, 4);
            ts_type t = tref_randtype();
            tsk_op op = random_op(kinds[k], c, t, (ts_border)tref_randint(0, 4));
            check_case(&op, tref_randint(1500, 2600), tref_randint(2, 9), c, t, trial == 0);
        }
    /* RGB matrices on integers run as a flat loop in chunks of 960 values */
    for (int ti = 0; ti < 2; ti++) {
        tsk_op op = random_op(TSK_MATRIX, 3, TYPES[ti], TS_BORDER_REPLICATE);
        check_case(&op, tref_randint(700, 1300), tref_randint(2, 5), 3, TYPES[ti], 0);
    }
}

/* Transposes larger than one block of the fast version both ways (256
 * output columns by 16..192 rows), every code and pixel size. */
static void test_transpose_blocks(void)
{
    for (int code = 1; code <= 8; code++) {
        int c = tref_randint(1, 4);
        ts_type t = TYPES[tref_randint(0, 2)];
        tsk_op op;
        memset(&op, 0, sizeof op);
        op.kind = TSK_ORIENT;
        op.u.orient.code = code;
        check_case(&op, tref_randint(300, 700), tref_randint(300, 700), c, t, code % 2);
        check_case(&op, tref_randint(300, 700), tref_randint(300, 700), 3, TS_U8, code % 2);
    }
}

/* Every orientation code and pixel size (1 to 16 bytes: c = 1..4 of each
 * type) on sizes below, at and past the transposes' blocks (16x16 pixels
 * of one byte, 8x8 of 2 to 4, 4x4 of 6 and 8; the AVX2 blocks of 3- and
 * 6-byte pixels write 8 bytes past a row's block where the rest of the row
 * follows) and the row reversals' groups (up to 32 pixels), whole images
 * and regions. */
static void test_orient_sizes(void)
{
    static const int sizes[] = { 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 15, 16, 17, 19, 24, 31, 32, 33, 35, 40, 47, 67 };
    enum { NS = sizeof sizes / sizeof sizes[0] };
    for (int code = 1; code <= 8; code++)
        for (int ti = 0; ti < 3; ti++)
            for (int c = 1; c <= 4; c++)
                for (int trial = 0; trial < 6; trial++) {
                    tsk_op op;
                    memset(&op, 0, sizeof op);
                    op.kind = TSK_ORIENT;
                    op.u.orient.code = code;
                    int w = sizes[tref_randint(0, NS - 1)], h = sizes[tref_randint(0, NS - 1)];
                    check_case(&op, w, h, c, TYPES[ti], trial < 3);
                }
}

/* RGB(A) matrices on integers row by row: every width up to 40 pixels
 * (vectors of 8, with and without a tail; the last 8 of a row stored
 * exactly), and coefficients whose sums reach 2^30 and beyond, infinity
 * and NaN, which take the clamped rounding instead of the saturating one. */
static void test_matrix_rows(void)
{
    static const float big[] = { 3.0e3f, 2.0e6f, 5.0e6f, 1.0e9f, 3.0e38f };
    for (int ti = 0; ti < 2; ti++)
        for (int c = 3; c <= 4; c++)
            for (int w = 1; w <= 40; w++) {
                tsk_op op = random_op(TSK_MATRIX, c, TYPES[ti], TS_BORDER_REPLICATE);
                check_case(&op, w, tref_randint(1, 4), c, TYPES[ti], w % 2);
            }
    for (int ti = 0; ti < 2; ti++)
        for (int c = 3; c <= 4; c++)
            for (int k = 0; k < 24; k++) {
                tsk_op op = random_op(TSK_MATRIX, c, TYPES[ti], TS_BORDER_REPLICATE);
                float scale = big[k % 5];
                for (int i = 0; i < 12; i++) op.u.matrix.m[i] *= tref_randint(0, 2) ? scale : 1.0f;
                if (k % 6 == 5) op.u.matrix.m[tref_randint(0, 11)] = k % 12 == 5 ? INFINITY : -INFINITY;
                if (k % 8 == 7) op.u.matrix.m[tref_randint(0, 11)] = NAN;
                check_case(&op, tref_randint(1, 60), tref_randint(1, 6), c, TYPES[ti], k % 2);
            }
}

/* A source short of a pixel the op reads is an error, as in the reference. */
static void test_short_source(void)
{
    ts_err err = { 0 };
    tsk_op op = random_op(TSK_CONV_SEP, 3, TS_U8, TS_BORDER_REPLICATE);
    op.u.sep.nx = op.u.sep.ny = 5;
    ts_view img = timg_whole(20, 20, 3, TS_U8);
    timg_random(&img);
    ts_rect out = { 5, 5, 6, 6 }, need = tsk_need(&op, 20, 20, out);
    need.w -= 1;
    ts_view src = tref_crop(&img, need);
    ts_view dst = timg_alloc(5, 5, 6, 6, 20, 20, 3, TS_U8);
    CHECK(tsk_cpu_apply(&op, &src, &dst, &err) == TS_E_ARG);
    CHECK_MSG(strstr(err.msg, "lacks pixel") != NULL, "%s", err.msg);
    timg_free(&img);
    timg_free(&src);
    timg_free(&dst);
}

/* ------------------------------------------------------------- the pool */

static ts_image random_image(int w, int h, int c, ts_type t)
{
    ts_image img;
    ts_err err = { 0 };
    CHECK(ts_image_alloc(&img, w, h, c, t, 0, NULL, &err) == TS_OK);
    ts_view v = { img.data, img.stride, 0, 0, w, h, w, h, c, t };
    timg_random(&v);
    return img;
}

static const char *const CHAINS[] = {
    "gauss=sigma=2,matrix=sepia,transpose", "sharpen=amount=0.8,rot90", "sobel,flip=h",
    "box=radius=3:border=wrap,rot270", "emboss,scale=0.7", "matrix=grey,gauss=sigma=1.2:border=constant",
    "matrix=sepia,flip=v", "rot180,matrix=grey", /* rows to rows: cut into strips of rows */
};

typedef struct shared_run {
    const ts_chain *chain;
    const ts_image *in;
    ts_pool *pool;
    ts_image out;
    ts_status st;
} shared_run;

static void *run_on_pool(void *arg)
{
    shared_run *r = arg;
    ts_err err = { 0 };
    r->st = ts_cpu_run_pool(r->chain, r->in, 0, 0, r->pool, &r->out, &err);
    return NULL;
}

/* The automatic tile: 256-pixel squares, halved while an image has fewer
 * than two per thread, never under 64; for chains that map rows to rows,
 * strips of whole rows of about 65536 pixels, fewer rows while there are
 * fewer than two per thread, never under one row. */
static void test_auto_tile(void)
{
    static const struct { int w, h, threads, rows, tile_w, tile_h; } cases[] = {
        { 6000, 4000, 16, 0, 256, 256 }, { 6000, 4000, 1, 0, 256, 256 }, { 512, 512, 2, 0, 256, 256 },
        { 512, 512, 3, 0, 128, 128 },    { 300, 500, 3, 0, 128, 128 },   { 100, 100, 16, 0, 64, 64 },
        { 1, 1, 1, 0, 64, 64 },          { 1, 1, 64, 0, 64, 64 },        { 6000, 4000, 16, 1, 6000, 11 },
        { 6000, 4000, 1, 1, 6000, 11 },  { 256, 256, 1, 1, 256, 128 },   { 256, 256, 2, 1, 256, 64 },
        { 1000, 100, 16, 1, 1000, 3 },   { 70000, 10, 4, 1, 70000, 1 },  { 1, 1, 8, 1, 1, 1 },
        { 100, 2000, 3, 1, 100, 328 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int tw = 0, th = 0;
        ts_cpu_auto_tile(cases[k].w, cases[k].h, cases[k].threads, cases[k].rows, &tw, &th);
        CHECK_MSG(tw == cases[k].tile_w && th == cases[k].tile_h, "%dx%d on %d threads%s: %dx%d, want %dx%d",
                  cases[k].w, cases[k].h, cases[k].threads, cases[k].rows ? " (rows)" : "", tw, th, cases[k].tile_w,
                  cases[k].tile_h);
    }
}

/* One image on a pool of 3 equals one tile on one thread; four images at
 * once on one pool of 2 equal it too. */
static void test_pool(void)
{
    ts_pool *pool3 = ts_pool_create(3), *pool2 = ts_pool_create(2);
    CHECK(pool3 && pool2);
    for (size_t k = 0; k < sizeof CHAINS / sizeof CHAINS[0]; k++) {
        ts_chain *chain = NULL;
        ts_err err = { 0 };
        CHECK(ts_chain_parse(CHAINS[k], &chain, &err) == TS_OK);
        if (!chain) continue;
        int c = tref_randint(1, 4);
        ts_type t = TYPES[tref_randint(0, 2)];
        ts_image in = random_image(tref_randint(200, 400), tref_randint(300, 700), c, t), one = { 0 }, many = { 0 };
        CHECK(ts_cpu_run(chain, &in, 1 << 30, 1 << 30, &one, &err) == TS_OK);
        CHECK_MSG(ts_cpu_run_pool(chain, &in, 0, 0, pool3, &many, &err) == TS_OK, "%s", err.msg);
        CHECK_MSG(bu_same_pixels(&one, &many), "%s: threads differ from one tile", CHAINS[k]);
        ts_image_free(&many);
        shared_run runs[4];
        pthread_t th[4];
        for (int i = 0; i < 4; i++) {
            runs[i] = (shared_run){ chain, &in, pool2, { 0 }, TS_E_ARG };
            CHECK(pthread_create(&th[i], NULL, run_on_pool, &runs[i]) == 0);
        }
        for (int i = 0; i < 4; i++) {
            pthread_join(th[i], NULL);
            CHECK(runs[i].st == TS_OK);
            CHECK_MSG(bu_same_pixels(&one, &runs[i].out), "%s: shared pool differs", CHAINS[k]);
            ts_image_free(&runs[i].out);
        }
        ts_image_free(&one);
        ts_image_free(&in);
        ts_chain_free(chain);
    }
    ts_pool_free(pool3);
    ts_pool_free(pool2);
}

/* The cache of pixel buffers: a freed buffer serves the next request it
 * fits (not one under half its size), idle bytes stay within keep (the
 * oldest go first), small requests are malloc's, and a buffer may come
 * back after its cache was released. */
static void test_buffers(void)
{
    const size_t MB = (size_t)1 << 20;
    ts_buffers *c = ts_buffers_create(16 * MB);
    ts_allocator a = ts_buffers_allocator(c);
    CHECK(c && a.alloc && a.free);
    if (!c) return;
    unsigned char *p = a.alloc(a.ctx, 5 * MB);
    CHECK(p && ((uintptr_t)p & 63) == 0);
    if (!p) return;
    memset(p, 0x5a, 5 * MB);
    a.free(a.ctx, p);
    ts_buffers_stats s = ts_buffers_stats_of(c);
    CHECK(s.mapped == 1 && s.reused == 0 && s.idle_bytes == 6 * MB);
    unsigned char *q = a.alloc(a.ctx, 4 * MB);          /* fits the idle 6 MB */
    CHECK(q == p);
    CHECK(q && q[4 * MB - 1] == 0x5a);                  /* the same pages, not fresh ones */
    unsigned char *r = a.alloc(a.ctx, MB);              /* 2 MB: the 6 MB one is out anyway */
    a.free(a.ctx, q);
    unsigned char *t = a.alloc(a.ctx, MB);              /* the idle 6 MB is over twice 2 MB: fresh */
    CHECK(t && t != q);
    s = ts_buffers_stats_of(c);
    CHECK(s.mapped == 3 && s.reused == 1);
    a.free(a.ctx, r);
    a.free(a.ctx, t);
    s = ts_buffers_stats_of(c);
    CHECK(s.idle_bytes == 10 * MB);
    unsigned char *big[3];
    for (int i = 0; i < 3; i++) big[i] = a.alloc(a.ctx, 5 * MB); /* the idle 6 MB and two fresh */
    for (int i = 0; i < 3; i++) a.free(a.ctx, big[i]);
    s = ts_buffers_stats_of(c);
    CHECK_MSG(s.idle_bytes <= 16 * MB, "%zu idle bytes kept over a keep of 16 MB", s.idle_bytes);
    ts_buffers_keep(c, 0);
    CHECK(ts_buffers_stats_of(c).idle_bytes == 0);
    unsigned char *small = a.alloc(a.ctx, 1000);
    CHECK(small != NULL);
    if (small) memset(small, 1, 1000);
    a.free(a.ctx, small);
    ts_buffers_keep(c, 16 * MB);
    /* a tile's buffer (32 KB to 1 MB) is kept too, mapped in steps of 64 KB */
    unsigned char *mid = a.alloc(a.ctx, 200 * 1024);
    CHECK(mid && ((uintptr_t)mid & 63) == 0);
    if (mid) memset(mid, 3, 200 * 1024);
    a.free(a.ctx, mid);
    CHECK(ts_buffers_stats_of(c).idle_bytes == 256 * 1024);
    unsigned char *mid2 = a.alloc(a.ctx, 150 * 1024);  /* 192 KB: the idle 256 KB is not over twice that */
    CHECK(mid2 == mid && mid2 && mid2[150 * 1024 - 1] == 3);
    a.free(a.ctx, mid2);
    unsigned char *late = a.alloc(a.ctx, 3 * MB);
    ts_buffers_release(c);                              /* late is still out */
    if (late) memset(late, 2, 3 * MB);
    a.free(a.ctx, late);                                /* unmapped now, and the cache freed */

    /* a pool's outputs come from its cache: an image freed after the pool */
    ts_pool *pool = ts_pool_create(2);
    ts_chain *chain = NULL;
    ts_err err = { 0 };
    CHECK(pool && ts_chain_parse("gauss=sigma=1,transpose", &chain, &err) == TS_OK);
    ts_image in = random_image(640, 480, 3, TS_U8), first = { 0 }, again = { 0 }, ref = { 0 };
    CHECK(ts_cpu_run(chain, &in, 0, 0, &ref, &err) == TS_OK);
    CHECK(ts_cpu_run_pool(chain, &in, 0, 0, pool, &first, &err) == TS_OK);
    unsigned char *first_px = first.data;
    ts_image_free(&first);
    CHECK(ts_cpu_run_pool(chain, &in, 0, 0, pool, &again, &err) == TS_OK);
    CHECK_MSG(again.data == first_px, "the second output did not reuse the first one's buffer");
    CHECK(bu_same_pixels(&ref, &again));
    ts_pool_free(pool);
    CHECK(bu_same_pixels(&ref, &again));
    ts_image_free(&again);
    ts_image_free(&ref);
    ts_image_free(&in);
    ts_chain_free(chain);
}

/* The pool's limit: tasks running at once, counted from inside them. */
static atomic_int running, most_running, tasks_done;

static void counting_task(void *ctx, int i)
{
    (void)ctx;
    (void)i;
    int now = atomic_fetch_add(&running, 1) + 1;
    int seen = atomic_load(&most_running);
    while (now > seen && !atomic_compare_exchange_weak(&most_running, &seen, now)) {}
    struct timespec nap = { 0, 200000 }; /* long enough for the others to join in */
    nanosleep(&nap, NULL);
    atomic_fetch_sub(&running, 1);
    atomic_fetch_add(&tasks_done, 1);
}

static void *counting_caller(void *pool)
{
    ts_pool_run(pool, 40, counting_task, NULL);
    return NULL;
}

/* One caller on a pool of 3: at most 3 tasks at once. Four callers on a
 * pool of 2: each runs its own tasks, and the pool's one thread may be
 * finishing a task it started before they all arrived, so at most 5.
 * Every task runs exactly once. */
static void test_pool_limit(void)
{
    ts_pool *pool = ts_pool_create(3);
    atomic_store(&most_running, 0);
    atomic_store(&tasks_done, 0);
    counting_caller(pool);
    CHECK_EQ_INT(atomic_load(&tasks_done), 40);
    CHECK_MSG(atomic_load(&most_running) <= 3, "%d tasks at once on a pool of 3", atomic_load(&most_running));
    /* a thread that said it is busy (a batch worker) runs its tiles the same */
    atomic_store(&most_running, 0);
    ts_pool_busy(pool, 1);
    counting_caller(pool);
    ts_pool_busy(pool, 0);
    CHECK_EQ_INT(atomic_load(&tasks_done), 80);
    CHECK(atomic_load(&most_running) <= 3);
    ts_pool_free(pool);
    pool = ts_pool_create(2);
    atomic_store(&most_running, 0);
    atomic_store(&tasks_done, 0);
    pthread_t th[4];
    for (int i = 0; i < 4; i++) CHECK(pthread_create(&th[i], NULL, counting_caller, pool) == 0);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    CHECK_EQ_INT(atomic_load(&tasks_done), 160);
    CHECK_MSG(atomic_load(&most_running) <= 5, "%d tasks at once: 4 callers and a pool of 2",
              atomic_load(&most_running));
    ts_pool_free(pool);
}

/* The 8-bit smoothing in fixed point (cpu_conv.c) at its edges: the
 * narrowest and widest Gaussians and boxes the ops make, a tap just under
 * 1, every border (the constant one at 0 and 255), on noise, on a 0/255
 * checkerboard (the largest sums) and on flat images, which must stay flat
 * (an image of one value blurs to that value). */
static void test_fixed_smoothing(void)
{
    static const double sigmas[] = { 0.1, 0.3, 0.8, 2.0, 5.0, 10.3 };
    enum { NSIG = sizeof sigmas / sizeof sigmas[0] };
    int checked = 0;
    for (int shape = 0; shape < NSIG + 3; shape++)
        for (int b = 0; b <= TS_BORDER_CONSTANT; b++)
            for (int pattern = 0; pattern < 4; pattern++) {
                tsk_op op;
                memset(&op, 0, sizeof op);
                op.kind = TSK_CONV_SEP;
                if (shape < NSIG) {
                    op.u.sep.nx = op.u.sep.ny = tsk_gauss_taps(sigmas[shape], 0, op.u.sep.kx);
                    memcpy(op.u.sep.ky, op.u.sep.kx, sizeof op.u.sep.kx);
                } else {   /* boxes of 3 and 63 taps, and 3 taps of which the centre is just under 1 */
                    int n = shape == NSIG + 1 ? TSK_MAX_SEP_TAPS : 3;
                    op.u.sep.nx = op.u.sep.ny = n;
                    for (int i = 0; i < n; i++) op.u.sep.kx[i] = op.u.sep.ky[i] = 1.0f / (float)n;
                    if (shape == NSIG + 2) {
                        op.u.sep.kx[1] = op.u.sep.ky[1] = 0.99998f;
                        op.u.sep.kx[0] = op.u.sep.kx[2] = op.u.sep.ky[0] = op.u.sep.ky[2] = 0.00001f;
                    }
                }
                op.u.sep.center_w = 0.0f;
                op.u.sep.conv_w = 1.0f;
                op.u.sep.border = (ts_border)b;
                op.u.sep.border_value = pattern == 1 || pattern == 2 ? 255.0f : 0.0f;   /* a flat image's own value */
                int c = 1 + (shape + pattern) % 3;   /* 1..3: no alpha */
                if (!tsk_cpu_sep_fixed(&op, c, TS_U8)) continue;
                int w = tref_randint(40, 160), h = tref_randint(20, 90);
                ts_view img = timg_whole(w, h, c, TS_U8), ref = timg_whole(w, h, c, TS_U8);
                ts_view got = timg_whole(w, h, c, TS_U8);
                for (int y = 0; y < h; y++)
                    for (int x = 0; x < w; x++)
                        for (int ch = 0; ch < c; ch++) {
                            float v = pattern == 0 ? (float)(check_rand() & 255)
                                    : pattern == 1 ? ((x + y) & 1 ? 255.0f : 0.0f)
                                    : pattern == 2 ? 255.0f : 0.0f;
                            timg_set(&img, x, y, ch, v);
                        }
                ts_err err = { 0 };
                timg_poison(&ref);
                timg_poison(&got);
                CHECK(tsk_ref_apply(&op, &img, &ref, &err) == TS_OK);
                CHECK(tsk_cpu_apply(&op, &img, &got, &err) == TS_OK);
                double d = timg_compare(&got, &ref, 1.0, "fixed smoothing");
                CHECK_MSG(d <= 1.0, "%d taps, border %d, pattern %d, c=%d: %g from the reference", op.u.sep.nx, b,
                          pattern, c, d);
                if (pattern >= 2) {
                    double flat = timg_compare(&got, &img, 0.0, "fixed smoothing of a flat image");
                    CHECK_MSG(flat == 0.0, "%d taps, border %d: a flat %s image is not kept (off by %g)",
                              op.u.sep.nx, b, pattern == 2 ? "white" : "black", flat);
                }
                checked++;
                timg_free(&img);
                timg_free(&ref);
                timg_free(&got);
            }
    if (cpu_fma()) CHECK_MSG(checked > 50, "only %d cases ran the fixed-point smoothing", checked);
}

/* The op tests with the AVX-512 and AVX2 versions (where the CPU has
 * them), with the AVX2 ones alone, then with neither. */
static void test_ops(void)
{
    for (int pass = 0; pass < 3; pass++) {
        if (pass == 1 && !tsk_cpu_avx512()) continue;   /* the same as pass 0 */
        tsk_cpu_allow_avx512(pass == 0);
        tsk_cpu_allow_avx2(pass < 2);
        fused_cases = fixed_cases = 0;
        for (int rep = 0; rep < 3; rep++) test_small();
        test_wide();
        test_transpose_blocks();
        test_orient_sizes();
        test_matrix_rows();
        if (pass < 2) test_fixed_smoothing();
        if (pass < 2 && cpu_fma()) CHECK_MSG(fused_cases > 0 && fixed_cases > 0, "%d cases ran the fused smoothing, "
                                             "%d of them in fixed point", fused_cases, fixed_cases);
        if (pass == 2) CHECK_MSG(fused_cases == 0, "%d cases ran the fused smoothing without AVX2", fused_cases);
    }
    tsk_cpu_allow_avx2(1);
    tsk_cpu_allow_avx512(1);
}

int main(void)
{
    check_seed();
    test_ops();
    test_short_source();
    test_auto_tile();
    test_pool();
    test_pool_limit();
    test_buffers();
    return check_exit();
}
