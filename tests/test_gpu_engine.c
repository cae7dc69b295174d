/* test_gpu_engine.c - the GPU engine against the CPU backend.
 *
 * For point, convolution (every border), orientation, resampling and mixed
 * chains on random images of odd sizes, 1 to 4 channels, 8 and 16 bits:
 *   - GPU output equals ts_cpu_run within the kernels' tolerance (exact for
 *     point, orientation, nearest, area and bicubic sampling; +-1 for convolution and
 *     bilinear sampling, scaled by about max/alpha where a premultiplied
 *     result is divided by alpha again);
 *   - tiled (small tiles) == untiled and 1 stream == 4 streams, bit for bit;
 *   - eight images in flight at once give the same results as one by one;
 *   - trace events land on the ts_now() clock with the right byte counts.
 *
 * TS_ENGINE_SMALL=1 runs only small images (for compute-sanitizer).
 * Exits 77 (skipped) without a CUDA device. */
#include "check.h"
#include "testimg.h"
#include "tilestream.h"
#include "testengine.h"
#include "trace_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct chain_case {
    const char *text;
    int tol;          /* 0 = exact, else +-tol */
    int big;          /* also run on 4097 x 2161 (one channel/type combo) */
} chain_case;

static const chain_case cases[] = {
    {"matrix=sepia", 0, 1},
    {"matrix=preset=invert:brightness=0.1:saturation=1.4", 0, 0},
    {"gauss=sigma=1.5:border=replicate", 1, 0},
    {"gauss=sigma=1.5:border=reflect101", 1, 1},
    {"gauss=sigma=1.5:border=reflect", 1, 0},
    {"gauss=sigma=1.5:border=wrap", 1, 0},
    {"gauss=sigma=1.5:border=constant", 1, 0},
    {"box=radius=3:border=wrap", 1, 0},
    {"sharpen=amount=0.8", 1, 0},
    {"sobel", 1, 0},
    {"emboss=strength=2:border=reflect", 1, 0},
    {"rot90", 0, 1},
    {"flip=v,transpose", 0, 0},
    {"rot270,flip=h", 0, 0},
    {"resize=w=517:h=-1", 1, 0},
    {"scale=f=0.37:interp=nearest", 0, 0},
    {"scale=sx=1.6:sy=0.7", 1, 0},
    {"rotate=deg=17", 1, 0},
    {"scale=f=0.3", 0, 1},                                      /* auto: area, exact */
    {"resize=w=211:h=-1:interp=bicubic", 0, 0},
    {"resize=w=301:h=301:fit=cover,pad=w=400:h=320:fill=0.25,crop=w=50%:h=90%:gravity=southwest", 1, 0},
    {"resize=w=180:h=180:fit=pad:fill=1:gravity=east", 0, 0},
    {"affine=a=0.45:b=0.1:d=-0.05:e=0.5:c=3:interp=area", 0, 0},
    {"matrix=grey,gauss=sigma=2,transpose,scale=f=0.6", 1, 1},
    /* the box is a +-1 version (tensor cores), carried by sharpen's gain 1 + 2 x 0.6 (NUMERICS.md) */
    {"matrix=sepia,box=radius=2:border=constant,rot90,sharpen,rotate=deg=-33", 3, 0},
    {"gauss=sigma=2,matrix=sepia,transpose", 2, 1},                 /* one op on RGB(X)8: the matrix widens 1 to 2 */
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

typedef struct engines {
    ts_engine *one;     /* 1 stream, automatic tiles */
    ts_engine *four;    /* 4 streams, automatic tiles */
    ts_engine *tiled;   /* 4 streams, 256 x 64 tiles */
    ts_engine *tiny;    /* 2 streams, 7 x 5 tiles (small images only) */
} engines;

/* Largest difference beyond what is allowed; prints the first few. For
 * chains that premultiply, straight colour s = P * max / A is divided by a
 * filtered alpha: errors of tol in both P and A move s by up to
 * tol * (max + s) / A, plus one for the final rounding. */
static int compare_images(const ts_image *got, const ts_image *want, int tol, int alpha_scaled, const char *what)
{
    if (got->w != want->w || got->h != want->h || got->c != want->c || got->type != want->type) {
        fprintf(stderr, "%s: shape %dx%dx%d vs %dx%dx%d\n", what, got->w, got->h, got->c, want->w, want->h, want->c);
        return 0;
    }
    ts_view g = tengine_view(got), w = tengine_view(want);
    double maxv = ts_type_max(got->type);
    int shown = 0, bad = 0, has_alpha = got->c == 2 || got->c == 4;
    for (int y = 0; y < g.h; y++)
        for (int x = 0; x < g.w; x++)
            for (int ch = 0; ch < g.c; ch++) {
                double a = timg_get(&g, x, y, ch), b = timg_get(&w, x, y, ch), allowed = tol;
                if (alpha_scaled && has_alpha && ch < g.c - 1 && tol) {
                    double alpha = timg_get(&w, x, y, g.c - 1);
                    allowed = tol * (maxv + b) / (alpha > 1 ? alpha : 1) + 1;
                }
                if (fabs(a - b) > allowed) {
                    bad++;
                    if (shown++ < 4)
                        fprintf(stderr, "%s: (%d,%d) ch %d: got %g want %g (allowed %g)\n", what, x, y, ch, a, b,
                                allowed);
                }
            }
    if (bad) fprintf(stderr, "%s: %d values differ\n", what, bad);
    return bad == 0;
}

static int identical(const ts_image *a, const ts_image *b, const char *what)
{
    return compare_images(a, b, 0, 0, what);
}

/* Pool memory is reused: fill the block the next output will get with a
 * pattern, so that a pixel the engine never writes shows up. */
static void poison_pool(ts_engine *e, size_t bytes)
{
    ts_allocator a = ts_engine_allocator(e);
    void *p = a.alloc(a.ctx, bytes);
    if (!p) return;
    memset(p, 0xA5, bytes);
    a.free(a.ctx, p);
}

static int random_image(ts_image *img, int w, int h, int c, ts_type t, ts_engine *pool)
{
    ts_allocator a = ts_engine_allocator(pool);
    return tengine_random_image(img, w, h, c, t, &a);
}

static ts_status gpu(ts_engine *e, const ts_chain *chain, const ts_image *in, ts_image *out, const char *what)
{
    ts_err err = {0};
    int ow = 0, oh = 0;
    ts_chain_out_size(chain, in->w, in->h, in->c, &ow, &oh, NULL);
    poison_pool(e, (size_t)ow * (size_t)oh * ts_pixel_bytes(in));
    ts_status st = ts_gpu_run(e, chain, in, out, &err);
    CHECK_MSG(st == TS_OK, "%s: %s", what, err.msg);
    return st;
}

/* One chain on one image: CPU reference, then the four engines. */
static void run_case(engines *E, const chain_case *cc, const ts_chain *chain, int w, int h, int c, ts_type t)
{
    char what[200];
    snprintf(what, sizeof what, "'%s' on %dx%dx%d %s", cc->text, w, h, c, t == TS_U8 ? "u8" : "u16");
    ts_image in, ref, g1, g4, gt, gs;
    memset(&ref, 0, sizeof ref);
    if (!random_image(&in, w, h, c, t, E->four)) {
        CHECK(0);
        return;
    }
    ts_err err = {0};
    ts_status st = ts_cpu_run(chain, &in, 0, 0, &ref, &err);
    CHECK_MSG(st == TS_OK, "%s: cpu: %s", what, err.msg);
    memset(&g1, 0, sizeof g1);
    memset(&g4, 0, sizeof g4);
    memset(&gt, 0, sizeof gt);
    memset(&gs, 0, sizeof gs);
    int alpha_scaled = strstr(cc->text, "gauss") || strstr(cc->text, "box") || strstr(cc->text, "resize") ||
                       strstr(cc->text, "scale") || strstr(cc->text, "rotate");
    if (st == TS_OK && gpu(E->four, chain, &in, &g4, what) == TS_OK)
        CHECK_MSG(compare_images(&g4, &ref, cc->tol, alpha_scaled, what), "%s: GPU differs from CPU", what);
    if (g4.data && gpu(E->one, chain, &in, &g1, what) == TS_OK)
        CHECK_MSG(identical(&g1, &g4, what), "%s: 1 stream differs from 4 streams", what);
    if (g4.data && gpu(E->tiled, chain, &in, &gt, what) == TS_OK)
        CHECK_MSG(identical(&gt, &g4, what), "%s: 256x64 tiles differ from untiled", what);
    if (g4.data && w * h <= 64 * 64 && gpu(E->tiny, chain, &in, &gs, what) == TS_OK)
        CHECK_MSG(identical(&gs, &g4, what), "%s: 7x5 tiles differ from untiled", what);
    ts_image_free(&in);
    ts_image_free(&ref);
    ts_image_free(&g1);
    ts_image_free(&g4);
    ts_image_free(&gt);
    ts_image_free(&gs);
}

static void run_chains(engines *E, int small)
{
    for (int i = 0; i < N_CASES; i++) {
        ts_chain *chain = NULL;
        ts_err err = {0};
        if (ts_chain_parse(cases[i].text, &chain, &err) != TS_OK) {
            CHECK_MSG(0, "parse '%s': %s", cases[i].text, err.msg);
            continue;
        }
        /* Every channel count and type on the tiny sizes (small: three)... */
        for (int c = 1; c <= 4; c++)
            for (int t = 0; t < 2; t++) {
                ts_type type = t ? TS_U16 : TS_U8;
                if (small && !((c == 1 && !t) || (c == 3 && !t) || (c == 4 && t))) continue;
                run_case(E, &cases[i], chain, 1, 1, c, type);
                run_case(E, &cases[i], chain, 31, 33, c, type);
            }
        /* ...two combinations on the middle size, one on the large. */
        int c = 1 + i % 4;
        if (small) {
            run_case(E, &cases[i], chain, 300, 201, c, TS_U8);
        } else {
            run_case(E, &cases[i], chain, 1023, 769, c, i % 2 ? TS_U16 : TS_U8);
            run_case(E, &cases[i], chain, 1023, 769, 1 + (i + 2) % 4, i % 2 ? TS_U8 : TS_U16);
            if (cases[i].big) run_case(E, &cases[i], chain, 4097, 2161, 3 + i % 2, i % 3 ? TS_U8 : TS_U16);
        }
        ts_chain_free(chain);
    }
}

/* Eight images of different shapes submitted before any is collected:
 * each equals the same image run alone, and they come back in order. */
static void run_in_flight(engines *E, int small)
{
    enum { N = 8 };
    const char *text = "matrix=sepia,gauss=sigma=1:border=wrap,rot90";
    ts_chain *chain = NULL;
    ts_err err = {0};
    CHECK(ts_chain_parse(text, &chain, &err) == TS_OK);
    if (!chain) return;
    ts_image in[N], alone[N], out[N];
    int scale = small ? 4 : 1;
    for (int i = 0; i < N; i++) {
        int w = (97 + 211 * i) / scale, h = (61 + 173 * i) / scale;
        memset(&alone[i], 0, sizeof alone[i]);
        CHECK(random_image(&in[i], w, h, 1 + i % 4, i % 3 ? TS_U8 : TS_U16, E->four));
        gpu(E->one, chain, &in[i], &alone[i], "alone");
    }
    for (int i = 0; i < N; i++) {
        ts_status st = ts_engine_submit(E->four, chain, &in[i], &out[i], &in[i], i, &err);
        CHECK_MSG(st == TS_OK, "submit %d: %s", i, err.msg);
    }
    /* ts_gpu_run refuses while images are pending. */
    ts_image extra;
    CHECK(ts_gpu_run(E->four, chain, &in[0], &extra, &err) == TS_E_ARG);
    for (int i = 0; i < N; i++) {
        void *tag = NULL;
        ts_status st = TS_E_IO;
        CHECK(ts_engine_collect(E->four, &tag, &st, &err) == 1);
        CHECK_MSG(st == TS_OK, "collect %d: %s", i, err.msg);
        CHECK_MSG(tag == &in[i], "image %d came back out of order", i);
        char what[64];
        snprintf(what, sizeof what, "in flight %d", i);
        CHECK(identical(&out[i], &alone[i], what));
    }
    CHECK(ts_engine_collect(E->four, NULL, NULL, &err) == 0);
    for (int i = 0; i < N; i++) {
        ts_image_free(&in[i]);
        ts_image_free(&alone[i]);
        ts_image_free(&out[i]);
    }
    ts_chain_free(chain);
}

static const ts_stage_stat *find_stage(const ts_stage_stat *s, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s[i].stage, name) == 0) return &s[i];
    return NULL;
}

/* Stage events: every stage of an RGB chain, bytes as moved, times on the
 * ts_now() clock (calibration) and inside the call. */
static void run_trace(void)
{
    ts_trace *t = ts_trace_create();
    ts_engine_opts o;
    memset(&o, 0, sizeof o);
    o.streams = 2;
    o.tile_h = 100;     /* 8 tiles: both lanes */
    o.trace = t;
    ts_engine *e = NULL;
    ts_err err = {0};
    CHECK_MSG(ts_engine_create(&o, &e, &err) == TS_OK, "%s", err.msg);
    ts_chain *chain = NULL;
    CHECK(ts_chain_parse("matrix=grey,flip=h", &chain, &err) == TS_OK);
    if (!e || !chain) {
        ts_engine_destroy(e);
        ts_chain_free(chain);
        ts_trace_free(t);
        return;
    }
    ts_image in, out;
    memset(&out, 0, sizeof out);
    CHECK(random_image(&in, 640, 800, 3, TS_U8, e));
    double t0 = ts_now();
    CHECK_MSG(ts_gpu_run(e, chain, &in, &out, &err) == TS_OK, "%s", err.msg);
    double t1 = ts_now();
    ts_stage_stat s[16];
    int n = ts_trace_summary(t, s, 16);
    /* the matrix rides in the flip (ts_plan_fuse): one stage, one pass */
    const char *want[] = {"h2d", "expand", "orient+matrix", "pack", "d2h"};
    CHECK(find_stage(s, n, "matrix") == NULL && find_stage(s, n, "orient") == NULL);
    for (int i = 0; i < 5; i++) {
        const ts_stage_stat *st = find_stage(s, n, want[i]);
        CHECK_MSG(st != NULL, "no '%s' events", want[i]);
        if (!st) continue;
        CHECK_EQ_INT(st->count, 8);
        /* Within the call, allowing for the calibration's few microseconds. */
        CHECK_MSG(st->first_s >= t0 - 1e-3 && st->last_s <= t1 + 1e-3, "%s at %.6f..%.6f outside %.6f..%.6f",
                  want[i], st->first_s, st->last_s, t0, t1);
    }
    const ts_stage_stat *h2d = find_stage(s, n, "h2d"), *d2h = find_stage(s, n, "d2h");
    if (h2d) CHECK_EQ_INT(h2d->bytes, 640 * 800 * 3);     /* no halo: each strip reads only itself */
    if (d2h) CHECK_EQ_INT(d2h->bytes, 640 * 800 * 3);
    const ts_stage_stat *m = find_stage(s, n, "orient+matrix");
    if (m) CHECK_EQ_INT(m->bytes, 640 * 800 * 4 * 2);     /* RGBX read and written */
    CHECK(ts_trace_lane(t, "stream 1") == 1);
    CHECK(ts_trace_busy(t, NULL) <= t1 - t0 + 1e-3);
    ts_image_free(&in);
    ts_image_free(&out);
    ts_chain_free(chain);
    ts_engine_destroy(e);
    ts_trace_free(t);
}

/* The texture path: hardware filtering keeps 8 bits of weight fraction,
 * so it is compared with the CPU within a few levels, not exactly. */
static void run_texture(engines *E)
{
    ts_engine_opts o;
    memset(&o, 0, sizeof o);
    o.streams = 3;
    o.path = TS_PATH_TEXTURE;
    ts_engine *e = NULL;
    ts_err err = {0};
    CHECK_MSG(ts_engine_create(&o, &e, &err) == TS_OK, "%s", err.msg);
    ts_chain *chain = NULL;
    CHECK(ts_chain_parse("scale=sx=1.6:sy=0.7,rotate=deg=9", &chain, &err) == TS_OK);
    ts_image in, ref, out;
    memset(&ref, 0, sizeof ref);
    memset(&out, 0, sizeof out);
    if (e && chain && random_image(&in, 1023, 769, 3, TS_U8, E->four)) {
        CHECK(ts_cpu_run(chain, &in, 0, 0, &ref, &err) == TS_OK);
        if (gpu(e, chain, &in, &out, "texture") == TS_OK)
            CHECK_MSG(compare_images(&out, &ref, 3, 0, "texture path"), "texture path beyond +-3 of the CPU");
        ts_image_free(&in);
    }
    ts_image_free(&ref);
    ts_image_free(&out);
    ts_chain_free(chain);
    ts_engine_destroy(e);
}

static void run_errors(engines *E)
{
    ts_err err = {0};
    ts_engine *e = NULL;
    ts_engine_opts o;
    memset(&o, 0, sizeof o);
    o.streams = 17;
    CHECK(ts_engine_create(&o, &e, &err) == TS_E_ARG && e == NULL);
    CHECK(strstr(err.msg, "17") != NULL);
    ts_chain *chain = NULL;
    CHECK(ts_chain_parse("gauss", &chain, &err) == TS_OK);
    ts_image empty, out;
    memset(&empty, 0, sizeof empty);
    CHECK(ts_engine_submit(E->four, chain, &empty, &out, NULL, 0, &err) == TS_E_ARG);
    CHECK(out.data == NULL);
    CHECK(ts_engine_collect(E->four, NULL, NULL, &err) == 0);
    ts_chain_free(chain);
}

int main(void)
{
    check_seed();
    char name[160];
    if (!tengine_gpu_ready(name, sizeof name)) return 77;
    fprintf(stderr, "device: %s\n", name);
    int small = getenv("TS_ENGINE_SMALL") != NULL;
    engines E = {tengine_make(0, 1, 0, 0, TS_PATH_GLOBAL), tengine_make(0, 4, 0, 0, TS_PATH_GLOBAL),
                 tengine_make(0, 4, 256, 64, TS_PATH_GLOBAL), tengine_make(0, 2, 7, 5, TS_PATH_GLOBAL)};
    if (E.one && E.four && E.tiled && E.tiny) {
        run_chains(&E, small);
        run_in_flight(&E, small);
        run_trace();
        run_texture(&E);
        run_errors(&E);
    }
    ts_engine_destroy(E.one);
    ts_engine_destroy(E.four);
    ts_engine_destroy(E.tiled);
    ts_engine_destroy(E.tiny);
    return check_exit();
}
