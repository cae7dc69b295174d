/* test_gpu_texture.c - both sampling paths through the whole engine, tiled
 * and untiled, against the CPU backend.
 *
 * test_gpu_sample checks single kernels on one region; test_gpu_engine
 * checks the global path through the engine. This one runs the chains that
 * users run (downscale then rotate, a wrap-border blur before an affine
 * map, resize before a derivative filter, several sampling ops in a row)
 * through engines with different tile shapes and stream counts, on both
 * paths, on random images (detail up to every edge) of photo size and on
 * the sample photos, and holds each result to the bound that tsk.h and
 * kernels/sample/sample.cu state:
 *   - the global path equals the CPU within the convolution tolerance;
 *   - the texture path: one bilinear sampling op differs by less than
 *     2 * max / 256 (the hardware's 8-bit weight fraction, per axis), an
 *     error that later ops carry forward scaled by their gain (sum of
 *     |taps|), and where a premultiplied result is divided by alpha again,
 *     by about max / alpha more;
 *   - tiled texture output holds the same bound. It need not equal the
 *     untiled texture output: a tile whose source region is not the whole
 *     image cannot use the hardware's wrap and mirror modes, and a tile
 *     that reads no pixel at all blends border values exactly; both run
 *     the global kernel, the reference's maths.
 * Every case prints its largest difference, so the bound's margin shows.
 * TS_ENGINE_SMALL=1 runs small images only (for compute-sanitizer). Exits
 * 77 without a CUDA device. */
#include "check.h"
#include "testimg.h"
#include "tilestream.h"
#include "testengine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tex_case {
    const char *text;
    double gain;   /* what one sampling op's error becomes at the output */
    int sampling;  /* bilinear sampling ops in the chain */
    int reach;     /* taps each side of a derivative filter after a
                      premultiplied op: the alphas that scale its error */
} tex_case;

/* gain: product of the later ops' sum of |taps| (emboss strength 1: 5;
 * sharpen 0.8: 1 + 2 * 0.8; blurs and bilinear resampling: 1). */
static const tex_case cases[] = {
    {"scale=0.37,rotate=deg=13", 1, 2, 0},
    {"gauss=sigma=4:border=wrap,affine=a=0.9:b=0.2:c=5:d=-0.1:e=1.1:f=3", 1, 1, 0},
    {"resize=w=517:h=-1,emboss", 5, 1, 1},
    {"matrix=sepia,gauss=sigma=1.5,rot90", 1, 0, 0},
    {"rotate=deg=13,scale=0.37", 1, 2, 0},
    {"scale=f=0.6:border=reflect", 1, 1, 0},
    {"scale=sx=1.6:sy=0.7:border=wrap", 1, 1, 0},
    {"scale=f=1.3:border=constant,rotate=deg=-33:crop=1:fill=0.5", 1, 2, 0},
    {"affine=a=0.5:b=0.3:c=-20:d=-0.3:e=0.5:f=40:w=700:h=500", 1, 1, 0},
    {"scale=0.5:interp=nearest,rotate=deg=90:interp=nearest", 1, 0, 0},
    {"resize=w=301:h=199:fit=stretch,sharpen=amount=0.8,rotate=deg=7", 2.6, 2, 3},
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

typedef struct rig {
    ts_engine *global;       /* 4 streams, 256 x 64 tiles */
    ts_engine *tex_whole;    /* texture, 1 stream, automatic tiles */
    ts_engine *tex_tiles;    /* texture, 4 streams, 256 x 64 tiles */
    ts_engine *tex_odd;      /* texture, 3 streams, 97 x 61 tiles */
} rig;

/* The smallest alpha within reach of (x, y): the alphas a derivative
 * filter mixes after unpremultiplying. */
static double min_alpha(const ts_view *v, int x, int y, int reach)
{
    double m = INFINITY;
    for (int j = y - reach; j <= y + reach; j++)
        for (int i = x - reach; i <= x + reach; i++)
            if (i >= 0 && j >= 0 && i < v->w && j < v->h) {
                double a = timg_get(v, i, j, v->c - 1);
                if (a < m) m = a;
            }
    return m;
}

/* Values beyond the bound; *worst gets the largest difference in colour
 * without alpha (and in alpha). For a colour channel of an image with
 * alpha, an error e in premultiplied colour and alpha becomes about
 * e * (max + s) / A in straight colour s. */
static long over_bound(const ts_image *got, const ts_image *want, double bound, int reach, double *worst,
                       const char *what)
{
    *worst = 0;
    if (got->w != want->w || got->h != want->h || got->c != want->c || got->type != want->type) {
        fprintf(stderr, "%s: shape %dx%dx%d vs %dx%dx%d\n", what, got->w, got->h, got->c, want->w, want->h, want->c);
        *worst = INFINITY;
        return 1;
    }
    ts_view g = tengine_view(got), w = tengine_view(want);
    double maxv = ts_type_max(got->type);
    int alpha = got->c == 2 || got->c == 4, shown = 0;
    long bad = 0;
    for (int y = 0; y < g.h; y++)
        for (int x = 0; x < g.w; x++)
            for (int ch = 0; ch < g.c; ch++) {
                double a = timg_get(&g, x, y, ch), b = timg_get(&w, x, y, ch), d = fabs(a - b);
                double allowed = bound;
                if (alpha && ch < g.c - 1 && bound > 0) {
                    double al = min_alpha(&w, x, y, reach);
                    allowed = bound * (maxv + b) / (al > 1 ? al : 1) + 1;
                }
                if (d > *worst && !(alpha && ch < g.c - 1)) *worst = d;
                if (d > allowed) {
                    bad++;
                    if (shown++ < 4)
                        fprintf(stderr, "%s: (%d,%d) ch %d: got %g want %g (allowed %g)\n", what, x, y, ch, a, b,
                                allowed);
                }
            }
    if (bad) fprintf(stderr, "%s: %ld values beyond the bound\n", what, bad);
    return bad;
}

/* TS_TEXTURE_TABLE=FILE: the largest differences, one line per case and
 * input, tab-separated (scripts/gpu_check.sh prints them in its summary). */
static FILE *table;

static int run_engine(ts_engine *e, const ts_chain *chain, const ts_image *in, ts_image *out, const char *what)
{
    ts_err err = {0};
    memset(out, 0, sizeof *out);
    ts_status st = ts_gpu_run(e, chain, in, out, &err);
    CHECK_MSG(st == TS_OK, "%s: %s", what, err.msg);
    return st == TS_OK;
}

/* The texture bound for one case at this type: 2 * max / 256 per bilinear
 * op, carried by the gain, plus one level for the final rounding; the
 * global path and nearest sampling keep the convolutions' +-1 (+-2 after
 * a chain of two FMA-ordered filters). */
static double texture_bound(const tex_case *tc, ts_type t)
{
    double step = 2.0 * ts_type_max(t) / 256.0;
    return tc->sampling * step * tc->gain + 2;
}

static void run_case(rig *R, const tex_case *tc, const ts_chain *chain, const ts_image *in, const char *name)
{
    char what[320];
    ts_image ref, g, tw, tt, to;
    ts_err err = {0};
    memset(&ref, 0, sizeof ref);
    if (ts_cpu_run(chain, in, 0, 0, &ref, &err) != TS_OK) {
        CHECK_MSG(0, "'%s' on %s: cpu: %s", tc->text, name, err.msg);
        return;
    }
    double worst_g = 0, worst_t = 0, bound = texture_bound(tc, in->type);
    snprintf(what, sizeof what, "'%s' on %s, global", tc->text, name);
    if (run_engine(R->global, chain, in, &g, what))
        CHECK_MSG(over_bound(&g, &ref, 2 * tc->gain, tc->reach, &worst_g, what) == 0, "%s: beyond +-%g of the CPU", what,
                  2 * tc->gain);
    snprintf(what, sizeof what, "'%s' on %s, texture", tc->text, name);
    if (run_engine(R->tex_whole, chain, in, &tw, what)) {
        CHECK_MSG(over_bound(&tw, &ref, bound, tc->reach, &worst_t, what) == 0, "%s: beyond +-%g of the CPU",
                  what, bound);
        double d = 0;
        snprintf(what, sizeof what, "'%s' on %s, texture 256x64 tiles", tc->text, name);
        if (run_engine(R->tex_tiles, chain, in, &tt, what))
            CHECK_MSG(over_bound(&tt, &ref, bound, tc->reach, &d, what) == 0, "%s: beyond +-%g of the CPU", what,
                      bound);
        if (d > worst_t) worst_t = d;
        snprintf(what, sizeof what, "'%s' on %s, texture 97x61 tiles", tc->text, name);
        if (run_engine(R->tex_odd, chain, in, &to, what))
            CHECK_MSG(over_bound(&to, &ref, bound, tc->reach, &d, what) == 0, "%s: beyond +-%g of the CPU", what,
                      bound);
        if (d > worst_t) worst_t = d;
        ts_image_free(&tt);
        ts_image_free(&to);
    }
    printf("%-70s %-28s global %6.0f texture %6.0f bound %6.0f\n", tc->text, name, worst_g, worst_t, bound);
    if (table)
        fprintf(table, "%s\t%s\t%d\t%.0f\t%.0f\t%.0f\n", tc->text, name, in->type == TS_U8 ? 8 : 16, worst_g,
                worst_t, bound);
    ts_image_free(&ref);
    ts_image_free(&g);
    ts_image_free(&tw);
}

int main(void)
{
    check_seed();
    char name[160];
    ts_err err = {0};
    if (!tengine_gpu_ready(name, sizeof name)) return 77;
    int small = getenv("TS_ENGINE_SMALL") != NULL;
    const char *table_path = getenv("TS_TEXTURE_TABLE");
    if (table_path && !(table = fopen(table_path, "w"))) fprintf(stderr, "%s: cannot write\n", table_path);
    rig R = {tengine_make(0, 4, 256, 64, TS_PATH_GLOBAL), tengine_make(0, 1, 0, 0, TS_PATH_TEXTURE),
             tengine_make(0, 4, 256, 64, TS_PATH_TEXTURE), tengine_make(0, 3, 97, 61, TS_PATH_TEXTURE)};
    if (!R.global || !R.tex_whole || !R.tex_tiles || !R.tex_odd) return check_exit();

    /* Random images: photo-sized RGB and RGBA, a 16-bit grey one, a small
     * grey+alpha one. The photos as files. */
    struct { int w, h, c; ts_type t; } shapes[] = {
        {small ? 301 : 3001, small ? 203 : 2003, 3, TS_U8}, {small ? 157 : 1023, small ? 99 : 769, 4, TS_U8},
        {small ? 120 : 777, small ? 80 : 513, 1, TS_U16}, {31, 33, 2, TS_U8},
    };
    const char *photos[] = {"photos/astronaut.jpg", "photos/chelsea.png", "photos/retina-rgba.png",
                            "photos/rocket-16bit.png", "patterns/zoneplate-512.png"};
    int n_inputs = (int)(sizeof shapes / sizeof shapes[0]) + (small ? 0 : (int)(sizeof photos / sizeof photos[0]));
    for (int i = 0; i < N_CASES; i++) {
        ts_chain *chain = NULL;
        if (ts_chain_parse(cases[i].text, &chain, &err) != TS_OK) {
            CHECK_MSG(0, "parse '%s': %s", cases[i].text, err.msg);
            continue;
        }
        for (int k = 0; k < n_inputs; k++) {
            ts_image in;
            char label[64];
            int ok;
            if (k < (int)(sizeof shapes / sizeof shapes[0])) {
                ok = tengine_random_image(&in, shapes[k].w, shapes[k].h, shapes[k].c, shapes[k].t, NULL);
                snprintf(label, sizeof label, "random %dx%dx%d %s", shapes[k].w, shapes[k].h, shapes[k].c,
                         shapes[k].t == TS_U8 ? "u8" : "u16");
            } else {
                const char *p = photos[k - (int)(sizeof shapes / sizeof shapes[0])];
                char path[512];
                snprintf(path, sizeof path, "%s/%s", TS_SAMPLES, p);
                ok = ts_image_load(path, NULL, &in, &err) == TS_OK;
                if (!ok) fprintf(stderr, "%s: %s\n", path, err.msg);
                snprintf(label, sizeof label, "%s", strrchr(p, '/') + 1);
            }
            CHECK(ok);
            if (!ok) continue;
            run_case(&R, &cases[i], chain, &in, label);
            ts_image_free(&in);
        }
        ts_chain_free(chain);
    }
    ts_engine_destroy(R.global);
    ts_engine_destroy(R.tex_whole);
    ts_engine_destroy(R.tex_tiles);
    ts_engine_destroy(R.tex_odd);
    if (table) fclose(table);
    return check_exit();
}
