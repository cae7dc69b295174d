/* test_nvjpeg.c - JPEG on the GPU (pipeline/codec/codec_nvjpeg.c) against
 * libjpeg-turbo, and a mixed folder through the batch with --codec gpu and
 * auto. Exits 77 without a CUDA device or without nvJPEG in the build.
 *
 * Bounds, from the first run on an H200 (hardware decoder; the test prints
 * what it measures):
 *   decode: nvJPEG and libjpeg-turbo differ in the IDCT and the chroma
 *           upsampling (libjpeg-turbo's is the smooth "fancy" one). On photos
 *           and smooth images (measured 43.0-46.4 dB, mean 0.33-0.80, max
 *           27-34): PSNR >= 40, mean |diff| <= 1, max |diff| <= 48. On a
 *           small test card of saturated colour blocks, where every pixel is
 *           near a chroma edge (tests/data/jpeg/icc.jpg, 48x32: measured
 *           28.3 dB, mean 5.8, max 103): PSNR >= 25, mean <= 8, max <= 128;
 *   encode: the GPU-encoded file decodes within ENCODE_DB_MAX dB (PSNR
 *           against the image encoded) of what the CPU encoder's file gives.
 * Metadata (orientation, ICC) comes through both ways; progressive files,
 * which the hardware decoder does not take, are decoded by nvJPEG's
 * GPU_HYBRID backend within the same bounds; CMYK and grey go to the CPU.
 * Pixels kept on the device (decoded into device memory, run through the
 * engine device to device, encoded from device memory) equal, byte for
 * byte, what the same steps give through host memory. */
#include "batch_util.h"
#include "engine_internal.h"
#include "gpu_codec.h"

typedef struct bound { double psnr_min, mean_max; int max_max; } bound;
static const bound PHOTO = { 40.0, 1.0, 48 }, COLOUR_EDGES = { 25.0, 8.0, 128 };
#define ENCODE_DB_MAX 1.5

typedef struct diff { int max; double mean, psnr; } diff;

static diff compare(const ts_image *a, const ts_image *b)
{
    diff d = {0, 0, 0};
    double se = 0, sa = 0;
    size_t n = 0, row = (size_t)a->w * (size_t)a->c;
    for (int y = 0; y < a->h; y++) {
        const unsigned char *p = a->data + (size_t)y * a->stride, *q = b->data + (size_t)y * b->stride;
        for (size_t i = 0; i < row; i++, n++) {
            int e = abs((int)p[i] - (int)q[i]);
            if (e > d.max) d.max = e;
            sa += e;
            se += (double)e * e;
        }
    }
    d.mean = n ? sa / (double)n : 0;
    d.psnr = se == 0 ? 99.0 : 10 * log10(255.0 * 255.0 * (double)n / se);
    return d;
}

static void check_decode(ts_gpu_coder *k, const char *path, int expect_gpu, bound b)
{
    ts_image g, c;
    ts_err err = {0};
    int cpu = 0;
    ts_status st = ts_gpu_decode_file(k, path, NULL, NULL, &g, &cpu, &err);
    if (!expect_gpu) {
        CHECK_MSG(cpu == 1, "%s: expected the CPU to take it (status %d)", path, (int)st);
        if (st == TS_OK) ts_image_free(&g);
        return;
    }
    CHECK_MSG(st == TS_OK && !cpu, "%s: %s", path, err.msg);
    if (st != TS_OK) return;
    CHECK(ts_image_load(path, NULL, &c, &err) == TS_OK);
    CHECK(g.w == c.w && g.h == c.h && g.c == c.c);
    CHECK_EQ_INT(g.orientation, c.orientation);
    CHECK_EQ_INT(g.icc_len, c.icc_len);
    if (g.w == c.w && g.h == c.h && g.c == c.c) {
        diff d = compare(&g, &c);
        fprintf(stderr, "decode %-40s %5dx%-5d max %3d mean %.3f PSNR %.1f dB\n", strrchr(path, '/') + 1, g.w, g.h,
                d.max, d.mean, d.psnr);
        CHECK(d.psnr >= b.psnr_min);
        CHECK(d.mean <= b.mean_max);
        CHECK(d.max <= b.max_max);
    }
    ts_image_free(&g);
    ts_image_free(&c);
}

/* Encode img on the GPU and on the CPU at q90; decode both back. */
static void check_encode(ts_gpu_coder *k, const char *dir, const char *name, ts_image *img)
{
    char gp[8400], cp[8400];
    snprintf(gp, sizeof gp, "%s/gpu-%s.jpg", dir, name);
    snprintf(cp, sizeof cp, "%s/cpu-%s.jpg", dir, name);
    ts_err err = {0};
    int cpu = 0;
    img->orientation = 6;   /* carried as EXIF, as the CPU writer does */
    CHECK_MSG(ts_gpu_save_jpeg(k, gp, img, 0, 90, &cpu, &err) == TS_OK && !cpu, "%s: %s", gp, err.msg);
    ts_save_opts so = {TS_FMT_JPEG, 90, -1, 0};
    CHECK(ts_image_save(cp, img, &so, &err) == TS_OK);
    ts_image a, b;
    if (ts_image_load(gp, NULL, &a, &err) != TS_OK) { CHECK_MSG(0, "%s", err.msg); return; }
    CHECK(ts_image_load(cp, NULL, &b, &err) == TS_OK);
    CHECK(a.w == img->w && a.h == img->h);
    CHECK_EQ_INT(a.orientation, 6);
    CHECK_EQ_INT(a.icc_len, b.icc_len);
    diff dg = compare(img, &a), dc = compare(img, &b);
    size_t lg = 0, lc = 0;
    free(bu_slurp(gp, &lg));
    free(bu_slurp(cp, &lc));
    fprintf(stderr, "encode %-12s q90: GPU %.2f dB (%zu bytes), CPU %.2f dB (%zu bytes)\n", name, dg.psnr, lg, dc.psnr, lc);
    CHECK(dg.psnr >= dc.psnr - ENCODE_DB_MAX);
    ts_image_free(&a);
    ts_image_free(&b);
}

/* One chain through the engine from a device image, to a host and to a
 * device output, against the same from a host image. */
static void check_device_chain(ts_engine *e, const ts_image *dev_in, const ts_image *host_in, const char *chain_text)
{
    ts_err err = {0};
    ts_chain *chain = NULL;
    CHECK_MSG(ts_chain_parse(chain_text, &chain, &err) == TS_OK, "%s", err.msg);
    if (!chain) return;
    ts_allocator da = ts_engine_device_allocator(e);
    ts_image want, got_host, got_dev;
    void *tag;
    ts_status st;
    CHECK(ts_engine_submit(e, chain, host_in, &want, NULL, 0, &err) == TS_OK && ts_engine_collect(e, &tag, &st, &err) && st == TS_OK);
    CHECK(ts_engine_submit_to(e, chain, dev_in, &got_host, NULL, NULL, 1, &err) == TS_OK &&
          ts_engine_collect(e, &tag, &st, &err) && st == TS_OK);
    CHECK(ts_engine_submit_to(e, chain, dev_in, &got_dev, &da, NULL, 2, &err) == TS_OK &&
          ts_engine_collect(e, &tag, &st, &err) && st == TS_OK);
    CHECK_MSG(ts_engine_image_to_host(e, &got_dev, &err) == TS_OK, "%s", err.msg);
    CHECK_MSG(bu_same_pixels(&want, &got_host), "%s: device input, host output differs", chain_text);
    CHECK_MSG(bu_same_pixels(&want, &got_dev), "%s: device input, device output differs", chain_text);
    ts_image_free(&want);
    ts_image_free(&got_host);
    ts_image_free(&got_dev);
    ts_chain_free(chain);
}

static void check_on_device(ts_gpu_coder *k, const char *path, const char *dir)
{
    ts_err err = {0};
    ts_engine *e = NULL;
    CHECK_MSG(ts_engine_create(NULL, &e, &err) == TS_OK, "%s", err.msg);
    if (!e) return;
    ts_allocator da = ts_engine_device_allocator(e);
    ts_image host, dev;
    int cpu = 0;
    CHECK_MSG(ts_gpu_decode_file(k, path, NULL, NULL, &host, &cpu, &err) == TS_OK, "%s", err.msg);
    CHECK_MSG(ts_gpu_decode_file(k, path, NULL, &da, &dev, &cpu, &err) == TS_OK && !cpu, "%s", err.msg);
    CHECK_EQ_INT(dev.orientation, host.orientation);
    CHECK_EQ_INT(dev.icc_len, host.icc_len);
    const char *chains[] = {"", "gauss=sigma=2,matrix=sepia,transpose", "resize=w=777:h=-1,rotate=deg=7"};
    for (int i = 0; i < 3; i++) check_device_chain(e, &dev, &host, chains[i]);
    /* encode from device memory: the same bitstream as from host memory */
    char hp[8400], dp[8400];
    snprintf(hp, sizeof hp, "%s/from-host.jpg", dir);
    snprintf(dp, sizeof dp, "%s/from-device.jpg", dir);
    CHECK_MSG(ts_gpu_save_jpeg(k, hp, &host, 0, 90, &cpu, &err) == TS_OK && !cpu, "%s", err.msg);
    CHECK_MSG(ts_gpu_save_jpeg(k, dp, &dev, 1, 90, &cpu, &err) == TS_OK && !cpu, "%s", err.msg);
    CHECK_MSG(bu_same_file(hp, dp), "%s: encoding from device memory gives another file", path);
    ts_image back = dev;
    dev.data = NULL;   /* moved */
    CHECK_MSG(ts_engine_image_to_host(e, &back, &err) == TS_OK, "%s", err.msg);
    CHECK_MSG(bu_same_pixels(&back, &host), "%s: decoding into device memory gives other pixels", path);
    fprintf(stderr, "device-resident %s: decode, 3 chains and encode equal the host path\n", strrchr(path, '/') + 1);
    ts_image_free(&back);
    ts_image_free(&host);
    ts_engine_destroy(e);
}

static void copy_file(const char *from, const char *dir, const char *name, size_t limit)
{
    char to[8400];
    size_t len = 0;
    snprintf(to, sizeof to, "%s/%s", dir, name);
    unsigned char *p = bu_slurp(from, &len);
    CHECK_MSG(p != NULL, "%s", from);
    FILE *f = fopen(to, "wb");
    CHECK(f != NULL);
    if (f && p) fwrite(p, 1, limit && limit < len ? limit : len, f);
    if (f) fclose(f);
    free(p);
}

static void mixed_folder(const char *root, ts_codec codec)
{
    char in[8400], out[8400];
    snprintf(in, sizeof in, "%s/mixed", root);
    snprintf(out, sizeof out, "%s/out-%d", root, (int)codec);
    mkdir(in, 0777);
    const char *jp[] = {"baseline.jpg", "progressive.jpg", "cmyk.jpg", "grey.jpg", "icc.jpg", "orient6.jpg"};
    for (int i = 0; i < 6; i++) {
        char from[8400];
        snprintf(from, sizeof from, "%s/jpeg/%s", TS_TEST_DATA, jp[i]);
        copy_file(from, in, jp[i], 0);
    }
    char from[8400];
    snprintf(from, sizeof from, "%s/photos/astronaut.jpg", TS_SAMPLES);
    copy_file(from, in, "astronaut.jpg", 0);
    copy_file(from, in, "truncated.jpg", 3000);
    snprintf(from, sizeof from, "%s/photos/chelsea.png", TS_SAMPLES);
    copy_file(from, in, "chelsea.png", 0);
    snprintf(from, sizeof from, "%s/bad/text.png", TS_TEST_DATA);
    copy_file(from, in, "text.png", 0);
    CHECK(bu_write(in, "big.jpg", 2400, 1600, 3, 5));

    const char *inputs[1] = {in};
    ts_batch_opts o;
    bu_folder_opts(&o, inputs, out, "gauss=sigma=2,matrix=sepia,transpose", TS_DEVICE_GPU);
    o.codec = codec;
    o.format = TS_FMT_JPEG;
    ts_batch_result r;
    ts_err err = {0};
    ts_status st = ts_batch_run(&o, &r, &err);
    CHECK(st != TS_OK);   /* two bad files */
    CHECK_EQ_INT(r.n_images, 11);
    CHECK_EQ_INT(r.n_failed, 2);
    CHECK_EQ_INT(r.n_ok, 9);
    CHECK_MSG(r.gpu_decoded >= 2, "codec %d: nvJPEG decoded %d (%s)", (int)codec, r.gpu_decoded, r.codec_note);
    CHECK_MSG(r.gpu_encoded >= 2, "codec %d: nvJPEG encoded %d", (int)codec, r.gpu_encoded);
    for (int i = 0; i < r.n_images; i++) {
        const ts_image_result *im = &r.images[i];
        int bad = strstr(im->input, "truncated.jpg") || strstr(im->input, "text.png");
        CHECK_MSG(bad ? im->status != TS_OK : im->status == TS_OK, "%s: %s", im->input, im->error);
        if (bad) CHECK_MSG(strstr(im->error, strrchr(im->input, '/') + 1) != NULL, "error does not name the file: %s", im->error);
    }
    fprintf(stderr, "mixed folder, codec %d: %d ok, %d failed, nvJPEG decoded %d, encoded %d (%s)\n", (int)codec, r.n_ok,
            r.n_failed, r.gpu_decoded, r.gpu_encoded, r.codec_note);
    ts_batch_result_free(&r);
}

/* A folder with no JPEG in or out leaves nvJPEG unmade, --codec gpu too:
 * its set-up and release would cost a second and buy nothing. */
static void png_only_folder(const char *root)
{
    char in[8300], out[8300], from[8400];
    snprintf(in, sizeof in, "%s/png-in", root);
    snprintf(out, sizeof out, "%s/png-out", root);
    CHECK(mkdir(in, 0777) == 0);
    snprintf(from, sizeof from, "%s/photos/chelsea.png", TS_SAMPLES);
    copy_file(from, in, "chelsea.png", 0);
    copy_file(from, in, "chelsea2.png", 0);
    const char *inputs[1] = {in};
    ts_batch_opts o;
    bu_folder_opts(&o, inputs, out, "gauss=sigma=2,matrix=sepia,transpose", TS_DEVICE_GPU);
    o.codec = TS_CODEC_GPU;
    ts_batch_result r;
    ts_err err = {0};
    CHECK_MSG(ts_batch_run(&o, &r, &err) == TS_OK, "%s", err.msg);
    CHECK_EQ_INT(r.n_ok, 2);
    CHECK_EQ_INT(r.gpu_decoded + r.gpu_encoded, 0);
    CHECK_MSG(r.codec_note[0] == '\0', "nvJPEG made for PNGs: %s", r.codec_note);
    ts_batch_result_free(&r);
}

int main(void)
{
    ts_err err = {0};
    if (!ts_gpu_codec_built()) { fprintf(stderr, "skipped: built without nvJPEG\n"); return 77; }
    if (ts_gpu_count(&err) < 1) { fprintf(stderr, "skipped: %s\n", err.msg); return 77; }
    ts_gpu_codec *c = NULL;
    ts_gpu_coder *k = NULL;
    int hardware = 0;
    CHECK_MSG(ts_gpu_codec_create(0, &c, &hardware, &err) == TS_OK, "%s", err.msg);
    if (!c) return check_exit();
    CHECK_MSG(ts_gpu_coder_create(c, &k, &err) == TS_OK, "%s", err.msg);
    fprintf(stderr, "nvJPEG: %s decoder\n", hardware ? "hardware" : "hybrid");
    /* the baseline files below are for the hardware decoder, not for the
     * GPU_HYBRID one that takes them while its state is being made */
    if (hardware) CHECK_MSG(ts_gpu_codec_wait_hardware(c) == 1, "the hardware decoder's state was not made");
    char root[4096], path[8400];
    CHECK(bu_tempdir(root, sizeof root, "nvjpeg"));
    if (k) {
        /* real photos, and enlargements of them of camera sizes */
        snprintf(path, sizeof path, "%s/photos/astronaut.jpg", TS_SAMPLES);
        check_decode(k, path, 1, PHOTO);
        snprintf(path, sizeof path, "%s/photos/coffee-orient6.jpg", TS_SAMPLES);
        check_decode(k, path, 1, PHOTO);
        snprintf(path, sizeof path, "%s/jpeg/icc.jpg", TS_TEST_DATA);
        check_decode(k, path, 1, COLOUR_EDGES);
        CHECK(bu_write(root, "synthetic.jpg", 4032, 3024, 3, 4));   /* 4:2:0 from the CPU writer */
        snprintf(path, sizeof path, "%s/synthetic.jpg", root);
        check_decode(k, path, 1, PHOTO);
        /* progressive files: not for the hardware decoder, for GPU_HYBRID */
        snprintf(path, sizeof path, "%s/jpeg/progressive.jpg", TS_TEST_DATA);
        check_decode(k, path, 1, COLOUR_EDGES);
        CHECK(bu_write(root, "synthetic-progressive.jpg", 4000, 3000, 3, 6));   /* seed % 3 == 0: progressive */
        snprintf(path, sizeof path, "%s/synthetic-progressive.jpg", root);
        check_decode(k, path, 1, PHOTO);
        ts_image photo;
        snprintf(path, sizeof path, "%s/photos/astronaut.jpg", TS_SAMPLES);
        if (ts_image_load(path, NULL, &photo, &err) == TS_OK) {
            ts_save_opts so = {TS_FMT_JPEG, 90, -1, 1};
            snprintf(path, sizeof path, "%s/astronaut-progressive.jpg", root);
            CHECK_MSG(ts_image_save(path, &photo, &so, &err) == TS_OK, "%s", err.msg);
            check_decode(k, path, 1, PHOTO);
            ts_image_free(&photo);
        }
        snprintf(path, sizeof path, "%s/jpeg/cmyk.jpg", TS_TEST_DATA);
        check_decode(k, path, 0, PHOTO);
        snprintf(path, sizeof path, "%s/jpeg/grey.jpg", TS_TEST_DATA);
        check_decode(k, path, 0, PHOTO);

        snprintf(path, sizeof path, "%s/synthetic.jpg", root);
        check_on_device(k, path, root);
        snprintf(path, sizeof path, "%s/photos/coffee-orient6.jpg", TS_SAMPLES);
        check_on_device(k, path, root);
        snprintf(path, sizeof path, "%s/synthetic-progressive.jpg", root);
        check_on_device(k, path, root);

        ts_image img;
        snprintf(path, sizeof path, "%s/photos/astronaut.jpg", TS_SAMPLES);
        if (ts_image_load(path, NULL, &img, &err) == TS_OK) {
            check_encode(k, root, "astronaut", &img);
            ts_image_free(&img);
        }
        snprintf(path, sizeof path, "%s/jpeg/icc.jpg", TS_TEST_DATA);
        if (ts_image_load(path, NULL, &img, &err) == TS_OK) {
            check_encode(k, root, "icc", &img);
            ts_image_free(&img);
        }
    }
    ts_gpu_coder_destroy(k);
    ts_gpu_codec_destroy(c);
    mixed_folder(root, TS_CODEC_GPU);
    if (hardware) mixed_folder(root, TS_CODEC_AUTO);
    png_only_folder(root);
    bu_rmtree(root);
    return check_exit();
}
