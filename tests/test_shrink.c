/* test_shrink.c - shrink on load (pipeline/plan/shrink.c): a chain that starts
 * by shrinking 2x or more decodes JPEGs at 1/2, 1/4 or 1/8 with libjpeg's
 * DCT scaling and resizes from there. Outputs must have exactly the size
 * they have without it, and stay within PSNR_MIN dB of decoding whole (on
 * photos: the sample photos enlarged, the only photos in the repository;
 * baseline, progressive, grey, and EXIF orientation 6). Chains that do not
 * start by shrinking that much, images whose sides the scale does not
 * divide, and --no-shrink-on-load, decode whole. */
#include "batch_util.h"

/* The lowest PSNR measured over these cases was 35.4 dB (scale=0.12 with
 * bicubic, decoded at 1/8, on the progressive astronaut); most are 45 to
 * 60 dB. The bound leaves a margin for other libjpeg-turbo versions'
 * scaled IDCTs. */
#define PSNR_MIN 33.0

/* samples/photos/NAME enlarged to w x h (bicubic), saved as JPEG q90 into
 * dir/out; orientation kept as stored (the EXIF tag is written again). */
static int make_photo(const char *dir, const char *name, const char *out, int w, int h, int grey, int progressive)
{
    char src[4096], path[8400], chain[128];
    snprintf(src, sizeof src, "%s/photos/%s", TS_SAMPLES, name);
    snprintf(path, sizeof path, "%s/%s", dir, out);
    snprintf(chain, sizeof chain, "resize=w=%d:h=%d:fit=stretch:interp=bicubic%s", w, h, grey ? ",matrix=grey" : "");
    ts_image in, big;
    ts_chain *c = NULL;
    ts_err err = {0};
    if (ts_image_load(src, NULL, &in, &err) != TS_OK) { fprintf(stderr, "%s\n", err.msg); return 0; }
    int ok = ts_chain_parse(chain, &c, &err) == TS_OK && ts_cpu_run(c, &in, 0, 0, &big, &err) == TS_OK;
    if (ok) {
        big.orientation = in.orientation;
        ts_save_opts so = {TS_FMT_JPEG, 90, -1, progressive};
        ok = ts_image_save(path, &big, &so, &err) == TS_OK;
        ts_image_free(&big);
    }
    if (!ok) fprintf(stderr, "%s: %s\n", path, err.msg);
    ts_chain_free(c);
    ts_image_free(&in);
    return ok;
}

static double psnr(const ts_image *a, const ts_image *b)
{
    double se = 0;
    size_t n = 0, row = (size_t)a->w * (size_t)a->c;
    for (int y = 0; y < a->h; y++) {
        const unsigned char *p = a->data + (size_t)y * a->stride, *q = b->data + (size_t)y * b->stride;
        for (size_t i = 0; i < row; i++, n++) se += ((double)p[i] - q[i]) * ((double)p[i] - q[i]);
    }
    return se == 0 ? 99.0 : 10 * log10(255.0 * 255.0 * (double)n / se);
}

static void run_batch(const char *in, const char *out, const char *chain, int no_shrink, ts_batch_result *r)
{
    const char *inputs[1] = {in};
    ts_batch_opts o;
    bu_folder_opts(&o, inputs, out, chain, TS_DEVICE_CPU);
    o.format = TS_FMT_PNG;   /* compare pixels, not a second JPEG encode */
    o.png_level = 1;
    o.no_shrink_on_load = no_shrink;
    ts_err err = {0};
    CHECK_MSG(ts_batch_run(&o, r, &err) == TS_OK, "%s: %s", chain, err.msg);
}

/* Run chain with and without shrink on load; compare every output. */
static void compare(const char *in, const char *root, const char *chain, int expect_shrunk)
{
    char a[8400], b[8400];
    snprintf(a, sizeof a, "%s/whole", root);
    snprintf(b, sizeof b, "%s/shrunk", root);
    bu_rmtree(a);
    bu_rmtree(b);
    ts_batch_result whole, shrunk;
    run_batch(in, a, chain, 1, &whole);
    run_batch(in, b, chain, 0, &shrunk);
    CHECK_EQ_INT(whole.shrunk_on_load, 0);
    CHECK_MSG(shrunk.shrunk_on_load == expect_shrunk, "%s: %d shrunk, expected %d", chain, shrunk.shrunk_on_load,
              expect_shrunk);
    for (int i = 0; i < whole.n_images && i < shrunk.n_images; i++) {
        char other[8400];
        bu_other_output(whole.images[i].output, a, b, other, sizeof other);
        ts_image x, y;
        ts_err err = {0};
        int ok = ts_image_load(whole.images[i].output, NULL, &x, &err) == TS_OK;
        CHECK_MSG(ok, "%s", err.msg);
        if (!ok) continue;
        if (ts_image_load(other, NULL, &y, &err) != TS_OK) {
            CHECK_MSG(0, "%s", err.msg);
            ts_image_free(&x);
            continue;
        }
        CHECK_MSG(x.w == y.w && x.h == y.h && x.c == y.c, "%s on %s: %dx%d whole, %dx%d shrunk", chain,
                  whole.images[i].input, x.w, x.h, y.w, y.h);
        if (x.w == y.w && x.h == y.h && x.c == y.c) {
            double db = psnr(&x, &y);
            fprintf(stderr, "%-28s %-22s %5dx%-5d PSNR %.1f dB\n", chain, strrchr(whole.images[i].input, '/') + 1,
                    x.w, x.h, db);
            CHECK_MSG(db >= PSNR_MIN, "%s on %s: %.1f dB", chain, whole.images[i].input, db);
        }
        ts_image_free(&x);
        ts_image_free(&y);
    }
    ts_batch_result_free(&whole);
    ts_batch_result_free(&shrunk);
}

int main(void)
{
    char root[4096], in[4200];
    CHECK(bu_tempdir(root, sizeof root, "shrink"));
    snprintf(in, sizeof in, "%s/in", root);
    CHECK(mkdir(in, 0777) == 0);
    CHECK(make_photo(in, "astronaut.jpg", "astronaut.jpg", 1536, 1536, 0, 0));
    CHECK(make_photo(in, "astronaut.jpg", "astronaut-prog.jpg", 1200, 904, 0, 1));
    /* sides that 2 does not divide: never shrunk (the geometry would shift) */
    CHECK(make_photo(in, "astronaut.jpg", "astronaut-odd.jpg", 999, 751, 0, 0));
    CHECK(make_photo(in, "coffee-orient6.jpg", "coffee-orient6.jpg", 1200, 1800, 0, 0));
    CHECK(make_photo(in, "chelsea.png", "chelsea-grey.jpg", 904, 600, 1, 0));
    compare(in, root, "scale=0.25", 4);
    compare(in, root, "scale=0.12:interp=bicubic", 4);
    compare(in, root, "resize=w=600:h=-1", 3);     /* the grey one is under 2x as wide */
    compare(in, root, "resize=w=500:h=500:fit=stretch,matrix=sepia", 2);
    compare(in, root, "resize=w=500:h=500", 3);    /* fits inside: 500 x 377 is 2x below 1200 x 904 too */
    compare(in, root, "resize=w=500:h=500:fit=cover:gravity=north", 2);
    compare(in, root, "resize=w=400:h=400:fit=pad:fill=1,matrix=sepia", 3);
    compare(in, root, "scale=0.5,gauss=sigma=1", 4);
    compare(in, root, "scale=sx=0.3:sy=0.45", 4);
    compare(in, root, "scale=0.6", 0);            /* less than 2x: decoded whole */
    compare(in, root, "gauss,scale=0.25", 0);      /* does not start by shrinking */
    bu_rmtree(root);
    return check_exit();
}
