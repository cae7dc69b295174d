/* test_chain.c - the op-chain parser, the planner and the tiled CPU
 * backend: errors that point at the token, folding, premultiply wrapping,
 * output sizes, hand-computed pixels through the whole pipeline, and tiled
 * == untiled on random chains and odd sizes. */
#include "batch_util.h"
#include "check.h"
#include "plan.h"
#include "testimg.h"

#include <dirent.h>
#include <stdint.h>

static ts_chain *parse_ok(const char *text)
{
    ts_chain *c = NULL;
    ts_err err = { 0 };
    ts_status st = ts_chain_parse(text, &c, &err);
    CHECK_MSG(st == TS_OK, "'%s': %s", text, err.msg);
    return c;
}

/* The chain must fail, and the message must contain want. */
static void parse_fails(const char *text, const char *want)
{
    ts_chain *c = NULL;
    ts_err err = { 0 };
    ts_status st = ts_chain_parse(text, &c, &err);
    CHECK_MSG(st == TS_E_ARG, "'%s' parsed but should not", text);
    CHECK_MSG(strstr(err.msg, want) != NULL, "'%s': message '%s' lacks '%s'", text, err.msg, want);
    ts_chain_free(c);
}

static void test_errors(void)
{
    parse_fails("gaus=sigma=2", "did you mean 'gauss'");
    parse_fails("matrix=sepa", "did you mean 'sepia'");
    parse_fails("gauss=sigm=2", "did you mean 'sigma'");
    parse_fails("gauss=sigma=abc", "wants a number");
    parse_fails("gauss=sigma=1000", "between");
    parse_fails("flip=x", "unknown dir");
    parse_fails("rot90,,rot90", "empty op");
    parse_fails("conv=k=1 2 3", "not a square");
    parse_fails("conv=k=1 2 3 4", "odd");
    parse_fails("conv=k=1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", "odd");
    parse_fails("resize", "needs w= or h=");
    parse_fails("transpose=3", "key=value");
    parse_fails("frobnicate", "unknown op 'frobnicate'");
    parse_fails("gauss=sigma=50%", "takes no percentage");
    parse_fails("scale=0%", "percentage above 0");
    parse_fails("resize=w=200:h=200:fit=fill", "unknown fit");
    parse_fails("crop=w=10:h=10:x=3", "x= and y= together");
    /* the caret sits under the bad token */
    ts_chain *c = NULL;
    ts_err err = { 0 };
    ts_chain_parse("rot90,gaus", &c, &err);
    const char *caret = strrchr(err.msg, '\n');
    CHECK(caret && strcmp(caret, "\n        ^^^^") == 0);
}

static void test_parse_forms(void)
{
    ts_chain *c = parse_ok("matrix=sepia,gauss=sigma=1.5:border=wrap,flip=v,scale=0.5,conv=k=0 -1 0 -1 5 -1 0 -1 0");
    CHECK_EQ_INT(ts_chain_length(c), 5);
    /* the canonical text parses back to itself */
    ts_chain *again = parse_ok(ts_chain_describe(c));
    CHECK(again && strcmp(ts_chain_describe(again), ts_chain_describe(c)) == 0);
    ts_chain_free(again);
    ts_chain_free(c);
    c = parse_ok("");
    CHECK_EQ_INT(ts_chain_length(c), 0);
    ts_chain_free(c);
    c = parse_ok(" rot90 , flip=h ");
    CHECK_EQ_INT(ts_chain_length(c), 2);
    ts_chain_free(c);
}

/* Every example chain in samples/chains parses. */
static void test_sample_chains(void)
{
    DIR *d = opendir(TS_SAMPLES "/chains");
    CHECK(d != NULL);
    if (!d) return;
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        if (!strstr(e->d_name, ".chain")) continue;
        char path[1024], line[1024], chain[1024] = "";
        snprintf(path, sizeof path, "%s/chains/%s", TS_SAMPLES, e->d_name);
        FILE *f = fopen(path, "r");
        CHECK(f != NULL);
        if (!f) continue;
        while (fgets(line, sizeof line, f))
            if (line[0] != '#' && line[0] != '\n') {
                line[strcspn(line, "\n")] = '\0';
                snprintf(chain, sizeof chain, "%s", line);
            }
        fclose(f);
        ts_chain *c = parse_ok(chain);
        ts_chain_free(c);
        n++;
    }
    closedir(d);
    CHECK(n >= 5);
}

static ts_plan plan_of(const char *text, int w, int h, int c)
{
    ts_plan p;
    memset(&p, 0, sizeof p);
    ts_chain *chain = parse_ok(text);
    ts_err err = { 0 };
    if (chain) CHECK_MSG(ts_plan_make(chain, w, h, c, TS_U8, &p, &err) == TS_OK, "%s", err.msg);
    ts_chain_free(chain);
    return p;
}

static void test_planning(void)
{
    ts_plan p = plan_of("rot90,rot90", 10, 6, 3);
    CHECK_EQ_INT(p.n, 1);
    CHECK(p.n == 1 && p.ops[0].kind == TSK_ORIENT && p.ops[0].u.orient.code == 3);
    ts_plan_free(&p);
    p = plan_of("rot90,flip=h,transpose", 10, 6, 3); /* the identity */
    CHECK_EQ_INT(p.n, 0);
    ts_plan_free(&p);
    p = plan_of("rot90,rot90,rot90,rot90", 7, 5, 1);
    CHECK_EQ_INT(p.n, 0);
    ts_plan_free(&p);
    p = plan_of("matrix=sepia,matrix=brightness=0.1", 4, 4, 3);
    CHECK_EQ_INT(p.n, 1);
    ts_plan_free(&p);
    /* the GPU's fusion: a matrix rides in the orientation before it, else after it */
    p = plan_of("gauss=sigma=2,matrix=sepia,transpose", 10, 6, 3);
    CHECK_EQ_INT(p.n, 3);
    CHECK_EQ_INT(ts_plan_fuse(&p, 3), 1);
    CHECK_EQ_INT(p.n, 2);
    if (p.n == 2) {
        CHECK(p.ops[0].kind == TSK_CONV_SEP && p.ops[1].kind == TSK_ORIENT && p.ops[1].u.orient.matrix);
        CHECK(p.ops[1].u.orient.code == 5 && p.ops[1].u.orient.m[0] > 0.39f && p.ops[1].u.orient.m[0] < 0.40f);
        CHECK(p.w[1] == 10 && p.h[1] == 6 && p.w[2] == 6 && p.h[2] == 10);
    }
    ts_plan_free(&p);
    p = plan_of("rot90,matrix=grey,gauss,matrix=sepia,flip=h", 10, 6, 3);
    CHECK_EQ_INT(ts_plan_fuse(&p, 3), 2);
    CHECK(p.n == 3 && p.ops[0].u.orient.matrix && p.ops[1].kind == TSK_CONV_SEP && p.ops[2].u.orient.matrix);
    CHECK(p.n == 3 && p.w[3] == 6 && p.h[3] == 10);
    ts_plan_free(&p);
    p = plan_of("matrix=sepia,gauss", 10, 6, 3); /* no orientation beside it: nothing to fuse */
    CHECK_EQ_INT(ts_plan_fuse(&p, 3), 0);
    CHECK_EQ_INT(p.n, 2);
    ts_plan_free(&p);
    /* smoothing on alpha images runs premultiplied; derivative filters keep alpha */
    p = plan_of("gauss,box", 9, 9, 4);
    CHECK_EQ_INT(p.n, 4);
    if (p.n == 4) {
        CHECK(p.ops[0].kind == TSK_PREMUL && p.ops[1].kind == TSK_CONV_SEP);
        CHECK(p.ops[2].kind == TSK_CONV_SEP && p.ops[3].kind == TSK_UNPREMUL);
    }
    ts_plan_free(&p);
    p = plan_of("gauss", 9, 9, 3);
    CHECK(p.n == 1 && p.ops[0].kind == TSK_CONV_SEP);
    ts_plan_free(&p);
    p = plan_of("sobel", 9, 9, 4);
    CHECK(p.n == 1 && p.ops[0].kind == TSK_CONV_2D && p.ops[0].alpha_passthrough == 1);
    ts_plan_free(&p);
    /* sizes */
    p = plan_of("resize=w=100:h=-1", 200, 100, 3);
    CHECK(p.w[p.n] == 100 && p.h[p.n] == 50);
    ts_plan_free(&p);
    p = plan_of("rotate=90", 30, 20, 3);
    CHECK(p.w[p.n] == 20 && p.h[p.n] == 30);
    ts_plan_free(&p);
    p = plan_of("transpose,scale=0.5", 30, 20, 3);
    CHECK(p.w[p.n] == 10 && p.h[p.n] == 15);
    ts_plan_free(&p);
    /* interp=auto: area where the op shrinks an axis, bilinear otherwise */
    static const struct { const char *chain; tsk_interp want; } interps[] = {
        { "scale=0.5", TSK_AREA }, { "scale=2", TSK_BILINEAR }, { "scale=1", TSK_BILINEAR },
        { "rotate=deg=30", TSK_BILINEAR }, { "scale=sx=0.5:sy=2", TSK_AREA }, { "resize=w=40:h=20", TSK_BILINEAR },
        { "resize=w=39:h=20", TSK_AREA }, { "affine=a=0.25:e=0.25", TSK_AREA }, { "affine=a=1.5:b=0.3", TSK_BILINEAR },
        { "scale=0.5:interp=bilinear", TSK_BILINEAR }, { "scale=2:interp=area", TSK_AREA },
        { "rotate=deg=10:interp=bicubic", TSK_BICUBIC }, { "scale=0.3:interp=nearest", TSK_NEAREST },
    };
    for (size_t i = 0; i < sizeof interps / sizeof interps[0]; i++) {
        p = plan_of(interps[i].chain, 40, 20, 3);
        CHECK_MSG(p.n == 1 && p.ops[0].kind == TSK_SAMPLE && p.ops[0].u.sample.interp == interps[i].want,
                  "%s: interp %d, want %d", interps[i].chain, p.n == 1 ? (int)p.ops[0].u.sample.interp : -1,
                  (int)interps[i].want);
        ts_plan_free(&p);
    }
    /* a gauss 5-tap kernel sums to 1 */
    p = plan_of("gauss=sigma=1:radius=2", 9, 9, 1);
    float sum = 0;
    for (int i = 0; p.n == 1 && i < p.ops[0].u.sep.nx; i++) sum += p.ops[0].u.sep.kx[i];
    CHECK(p.n == 1 && p.ops[0].u.sep.nx == 5);
    CHECK_NEAR(sum, 1.0, 1e-6);
    ts_plan_free(&p);
}

static ts_image make_image(int w, int h, int c, ts_type t)
{
    ts_image img;
    memset(&img, 0, sizeof img);
    ts_err err = { 0 };
    CHECK(ts_image_alloc(&img, w, h, c, t, 0, NULL, &err) == TS_OK);
    ts_view v = { img.data, img.stride, 0, 0, w, h, w, h, c, t };
    timg_random(&v);
    return img;
}

static double pixel(const ts_image *img, int x, int y, int ch)
{
    ts_view v = { img->data, img->stride, 0, 0, img->w, img->h, img->w, img->h, img->c, img->type };
    return timg_get(&v, x, y, ch);
}

/* Values worked out by hand, through parse -> plan -> CPU backend. */
static void test_hand_computed(void)
{
    ts_err err = { 0 };
    ts_image in = make_image(2, 1, 3, TS_U8), out;
    in.data[0] = 100; in.data[1] = 0; in.data[2] = 255; /* pixel 0: (100, 0, 255) */
    in.data[3] = 10; in.data[4] = 20; in.data[5] = 30;
    ts_chain *c = parse_ok("matrix=brightness=0.1");
    /* 100 + 0.1*255 = 125.5 -> 126 (half up); 0 + 25.5 -> 26; 255 + 25.5 saturates at 255 */
    CHECK(ts_cpu_run(c, &in, 0, 0, &out, &err) == TS_OK);
    CHECK_EQ_INT(pixel(&out, 0, 0, 0), 126);
    CHECK_EQ_INT(pixel(&out, 0, 0, 1), 26);
    CHECK_EQ_INT(pixel(&out, 0, 0, 2), 255);
    ts_image_free(&out);
    ts_chain_free(c);
    /* flip=h swaps the two pixels */
    c = parse_ok("flip=h");
    CHECK(ts_cpu_run(c, &in, 0, 0, &out, &err) == TS_OK);
    CHECK_EQ_INT(pixel(&out, 0, 0, 0), 10);
    CHECK_EQ_INT(pixel(&out, 1, 0, 2), 255);
    ts_image_free(&out);
    ts_chain_free(c);
    /* box radius 1, replicate, on a 2x1 row: each output is the mean of 3x3 taps
     * = (2a + b)/3 horizontally (rows identical): (200+10)/3 = 70, (100+20)/3 = 40 */
    c = parse_ok("box=radius=1:border=replicate");
    CHECK(ts_cpu_run(c, &in, 0, 0, &out, &err) == TS_OK);
    CHECK_EQ_INT(pixel(&out, 0, 0, 0), 70);
    CHECK_EQ_INT(pixel(&out, 1, 0, 0), 40);
    ts_image_free(&out);
    ts_chain_free(c);
    /* empty chain: pixels unchanged */
    c = parse_ok("");
    CHECK(ts_cpu_run(c, &in, 0, 0, &out, &err) == TS_OK);
    CHECK(out.w == 2 && out.h == 1 && memcmp(out.data, in.data, 6) == 0);
    ts_image_free(&out);
    ts_chain_free(c);
    ts_image_free(&in);
}

/* The size a chain makes of a w x h image. */
static void out_size_is(const char *chain, int w, int h, int want_w, int want_h)
{
    ts_chain *c = parse_ok(chain);
    int ow = 0, oh = 0;
    ts_err err = { 0 };
    CHECK_MSG(ts_chain_out_size(c, w, h, 3, &ow, &oh, &err) == TS_OK, "%s: %s", chain, err.msg);
    CHECK_MSG(ow == want_w && oh == want_h, "%s on %dx%d: %dx%d, want %dx%d", chain, w, h, ow, oh, want_w, want_h);
    ts_chain_free(c);
}

/* Resizing as users expect it: a box keeps the aspect (the binding side
 * exact), cover fills it, pad and stretch make it; percentages; crop and
 * pad copy pixels exactly, margins get the fill, an odd margin rounds as
 * ImageMagick's -gravity center -extent. */
static void test_fit_crop_pad(void)
{
    out_size_is("resize=w=800:h=800", 4000, 3000, 800, 600);
    out_size_is("resize=w=800:h=800", 3000, 4000, 600, 800);
    out_size_is("resize=800:800:fit=cover", 4000, 3000, 800, 800);
    out_size_is("resize=w=800:h=800:fit=pad", 4000, 3000, 800, 800);
    out_size_is("resize=w=800:h=800:fit=stretch", 4000, 3000, 800, 800);
    out_size_is("resize=w=800", 4000, 3000, 800, 600);
    out_size_is("resize=w=200:h=200", 451, 300, 200, 133);
    out_size_is("resize=w=50%", 451, 300, 226, 150);
    out_size_is("scale=25%", 400, 300, 100, 75);
    out_size_is("crop=w=100:h=80", 451, 300, 100, 80);
    out_size_is("crop=w=1000:h=80", 451, 300, 451, 80);       /* never larger than the image */
    out_size_is("crop=w=100:h=80:x=400:y=250", 451, 300, 51, 50);
    out_size_is("pad=w=500:h=10", 451, 300, 500, 300);        /* never smaller */

    ts_err err = { 0 };
    ts_image in = make_image(7, 5, 3, TS_U8), out = { 0 };
    /* crop: an exact window; centred, the odd margin's extra pixel at the end */
    ts_chain *c = parse_ok("crop=w=4:h=2");
    CHECK(ts_cpu_run(c, &in, 0, 0, &out, &err) == TS_OK);
    CHECK(out.w == 4 && out.h == 2);
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 4; x++)
            for (int k = 0; k < 3; k++) CHECK_EQ_INT(pixel(&out, x, y, k), pixel(&in, x + 1, y + 1, k));
    ts_image_free(&out);
    ts_chain_free(c);
    /* pad: the image unchanged at its place, the fill around it */
    c = parse_ok("pad=w=10:h=8:fill=1:gravity=southeast");
    CHECK(ts_cpu_run(c, &in, 0, 0, &out, &err) == TS_OK);
    CHECK(out.w == 10 && out.h == 8);
    CHECK_EQ_INT(pixel(&out, 0, 0, 0), 255);
    CHECK_EQ_INT(pixel(&out, 2, 4, 1), 255);
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 7; x++)
            for (int k = 0; k < 3; k++) CHECK_EQ_INT(pixel(&out, x + 3, y + 3, k), pixel(&in, x, y, k));
    ts_image_free(&out);
    ts_chain_free(c);
    /* centred on a canvas: a 7 x 5 image on 10 x 8 sits at (2, 2) */
    c = parse_ok("pad=w=10:h=8");
    CHECK(ts_cpu_run(c, &in, 0, 0, &out, &err) == TS_OK);
    CHECK_EQ_INT(pixel(&out, 2, 2, 0), pixel(&in, 0, 0, 0));
    CHECK_EQ_INT(pixel(&out, 1, 1, 0), 0);
    ts_image_free(&out);
    ts_chain_free(c);
    ts_image_free(&in);
    /* alpha through a crop: nearest sampling is not premultiplied, so a
     * pixel of alpha 1 keeps its colour exactly */
    ts_image rgba = make_image(3, 3, 4, TS_U8);
    rgba.data[4 * 4 + 3] = 1;
    c = parse_ok("crop=w=1:h=1");
    CHECK(ts_cpu_run(c, &rgba, 0, 0, &out, &err) == TS_OK);
    for (int k = 0; k < 4; k++) CHECK_EQ_INT(pixel(&out, 0, 0, k), pixel(&rgba, 1, 1, k));
    ts_image_free(&out);
    ts_chain_free(c);
    ts_image_free(&rgba);
}

static const char *const RANDOM_OPS[] = {
    "matrix=sepia", "matrix=saturation=0.5:contrast=1.3", "transpose", "rot90", "rot180", "rot270",
    "flip=h", "flip=v", "gauss=sigma=1.2", "gauss=sigma=0.8:border=wrap", "box=radius=2:border=reflect",
    "sharpen=amount=0.8", "sobel", "sobel=dir=y:border=constant", "emboss", "conv=k=1 2 1 2 4 2 1 2 1",
    "conv=k=0 -1 0 -1 5 -1 0 -1 0:border=wrap", "scale=0.7", "scale=1.6:interp=nearest",
    "resize=w=37:h=23", "rotate=deg=17", "rotate=deg=-8:interp=nearest", "affine=a=1:b=0.2:d=-0.1:e=0.9:c=3",
    "scale=0.3", "scale=0.45:interp=bicubic", "resize=w=13:h=9:interp=area", "rotate=deg=31:interp=area",
    "affine=a=0.4:b=0.1:d=-0.1:e=0.5:c=2:interp=bicubic", "scale=sx=0.3:sy=1.7",
    "resize=w=20:h=20:fit=cover:gravity=north", "resize=w=31:h=17:fit=pad:fill=0.5", "crop=w=60%:h=11",
    "pad=w=70:h=50:gravity=southwest:fill=1",
};
enum { N_RANDOM_OPS = sizeof RANDOM_OPS / sizeof RANDOM_OPS[0] };

/* Tiled output equals whole-image output exactly, on random chains. */
static void test_tiled_equals_untiled(void)
{
    static const ts_type types[3] = { TS_U8, TS_U16, TS_F32 };
    for (int trial = 0; trial < 60; trial++) {
        char chain[512] = "";
        int nops = 1 + (int)(check_rand() % 3);
        for (int k = 0; k < nops; k++) {
            if (k) strcat(chain, ",");
            strcat(chain, RANDOM_OPS[check_rand() % N_RANDOM_OPS]);
        }
        int w = 1 + (int)(check_rand() % 61), h = 1 + (int)(check_rand() % 47), c = 1 + (int)(check_rand() % 4);
        ts_type t = types[check_rand() % 3];
        int tw = 1 + (int)(check_rand() % 17), th = 1 + (int)(check_rand() % 13);
        ts_image in = make_image(w, h, c, t), whole = { 0 }, tiled = { 0 };
        ts_chain *ch = parse_ok(chain);
        ts_err err = { 0 };
        ts_status s1 = ts_cpu_run(ch, &in, 0, 0, &whole, &err);
        CHECK_MSG(s1 == TS_OK, "%s: %s", chain, err.msg);
        ts_status s2 = ts_cpu_run(ch, &in, tw, th, &tiled, &err);
        CHECK_MSG(s2 == TS_OK, "%s: %s", chain, err.msg);
        if (s1 == TS_OK && s2 == TS_OK)
            CHECK_MSG(bu_same_pixels(&whole, &tiled), "chain '%s' on %dx%dx%d type %d, tiles %dx%d differ", chain,
                      w, h, c, (int)t, tw, th);
        ts_image_free(&whole);
        ts_image_free(&tiled);
        ts_image_free(&in);
        ts_chain_free(ch);
    }
}

int main(void)
{
    check_seed();
    test_errors();
    test_parse_forms();
    test_sample_chains();
    test_planning();
    test_hand_computed();
    test_fit_crop_pad();
    test_tiled_equals_untiled();
    return check_exit();
}
