/* test_jpeg.c - JPEG reading: fixtures made with cjpeg, ImageMagick and
 * exiftool (tests/data/make_fixtures.sh) against djpeg's decoding of the
 * same files; EXIF orientation in both byte orders; ICC profiles; CMYK
 * with and without Adobe's inversion and YCCK (written here through
 * libjpeg, since no command-line tool writes them); the progressive scan
 * cap; and the EXIF parser on malformed data. */
#include "check.h"
#include "codec_test.h"
#include "codec_internal.h"
#include "tilestream.h"

#include <jpeglib.h>

#define JDIR TS_TEST_DATA "/jpeg"

static char tmpdir[512];

static void check_against_djpeg(const char *name, const char *ref_name, int channels)
{
    char path[512], ref_path[512];
    snprintf(path, sizeof path, "%s/%s", JDIR, name);
    snprintf(ref_path, sizeof ref_path, "%s/%s", JDIR, ref_name);
    ts_image img, ref;
    ts_err err = {0};
    ts_status st = ts_image_load(path, NULL, &img, &err);
    CHECK_MSG(st == TS_OK, "%s", err.msg);
    CHECK_MSG(ct_read_pnm(ref_path, &ref), "cannot read %s", ref_path);
    if (st != TS_OK || !ref.data) {
        ts_image_free(&img);
        ts_image_free(&ref);
        return;
    }
    CHECK_EQ_INT(img.w, 48);
    CHECK_EQ_INT(img.h, 32);
    CHECK_EQ_INT(img.c, channels);
    CHECK_EQ_INT(img.type, TS_U8);
    int diff = ct_max_diff(&img, &ref);
    fprintf(stderr, "  %s: largest difference from djpeg %d\n", name, diff);
    CHECK_MSG(diff >= 0 && diff <= 1, "%s differs from djpeg by %d", name, diff);
    ts_image_free(&img);
    ts_image_free(&ref);
}

static void check_probe(const char *name, int progressive, const char *color, int c, size_t icc_len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", JDIR, name);
    ts_image_info info;
    ts_err err = {0};
    CHECK_MSG(ts_image_probe(path, &info, &err) == TS_OK, "%s", err.msg);
    CHECK_EQ_INT(info.format, TS_FMT_JPEG);
    CHECK_EQ_INT(info.w, 48);
    CHECK_EQ_INT(info.h, 32);
    CHECK_EQ_INT(info.c, c);
    CHECK_EQ_INT(info.bit_depth, 8);
    CHECK_EQ_INT(info.progressive, progressive);
    CHECK_MSG(info.color && strcmp(info.color, color) == 0, "%s: colour %s, expected %s", name,
              info.color ? info.color : "(null)", color);
    CHECK_EQ_INT(info.icc_len, icc_len);
}

static void test_fixtures(void)
{
    check_against_djpeg("baseline.jpg", "baseline.ppm", 3);
    check_against_djpeg("progressive.jpg", "progressive.ppm", 3);
    check_against_djpeg("grey.jpg", "grey.pgm", 1);
    check_against_djpeg("cmyk.jpg", "cmyk.ppm", 3);
    check_against_djpeg("icc.jpg", "icc.ppm", 3);
    check_probe("baseline.jpg", 0, "ycbcr", 3, 0);
    check_probe("progressive.jpg", 1, "ycbcr", 3, 0);
    check_probe("grey.jpg", 0, "grey", 1, 0);
    check_probe("cmyk.jpg", 0, "ycck", 3, 0);  /* ImageMagick writes Adobe YCCK */

    /* The decoded pictures resemble the source (a sanity check on the
     * fixtures themselves: djpeg could be wrong the same way). */
    ts_image src, img;
    ts_err err;
    CHECK(ct_read_pnm(JDIR "/src.ppm", &src));
    CHECK(ts_image_load(JDIR "/cmyk.jpg", NULL, &img, &err) == TS_OK);
    if (src.data && img.data) {
        double p = ct_psnr(&src, &img);
        fprintf(stderr, "  cmyk.jpg vs source: PSNR %.1f dB\n", p);
        CHECK_MSG(p > 28.0, "CMYK decode far from the source: %.1f dB", p);
    }
    ts_image_free(&img);
    ts_image_free(&src);
}

static void test_icc(void)
{
    size_t want_len;
    unsigned char *want = ct_read_file(JDIR "/test-rgb.icc", &want_len);
    CHECK(want != NULL);
    check_probe("icc.jpg", 0, "ycbcr", 3, want_len);
    ts_image img;
    ts_err err;
    CHECK(ts_image_load(JDIR "/icc.jpg", NULL, &img, &err) == TS_OK);
    CHECK_EQ_INT(img.icc_len, want_len);
    CHECK(img.icc && want && img.icc_len == want_len && memcmp(img.icc, want, want_len) == 0);
    ts_image_free(&img);
    CHECK(ts_image_load(JDIR "/baseline.jpg", NULL, &img, &err) == TS_OK);
    CHECK(img.icc == NULL && img.icc_len == 0);
    ts_image_free(&img);
    free(want);
}

static void test_orientation(void)
{
    ts_image base;
    ts_err err;
    CHECK(ts_image_load(JDIR "/baseline.jpg", NULL, &base, &err) == TS_OK);
    CHECK_EQ_INT(base.orientation, 1);
    for (int n = 1; n <= 8; n++) {
        char path[512];
        snprintf(path, sizeof path, "%s/orient%d.jpg", JDIR, n);
        ts_image img;
        ts_image_info info;
        CHECK_MSG(ts_image_load(path, NULL, &img, &err) == TS_OK, "%s", err.msg);
        CHECK_EQ_INT(img.orientation, n);
        CHECK(ts_image_probe(path, &info, &err) == TS_OK);
        CHECK_EQ_INT(info.orientation, n);
        /* Orientation is recorded, not applied. */
        CHECK(base.data && img.data && ct_same_pixels(&base, &img));
        ts_image_free(&img);
    }
    ts_image_free(&base);
}

/* ---- CMYK / YCCK written here ---------------------------------------- */

/* Write w x h CMYK samples as a JPEG in colour space cs (JCS_CMYK or
 * JCS_YCCK), with or without the Adobe marker. */
static int write_cmyk_jpeg(const char *path, const unsigned char *cmyk, int w, int h,
                           J_COLOR_SPACE cs, int adobe)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr jerr;
    unsigned char *mem = NULL;
    unsigned long mem_len = 0;
    c.err = jpeg_std_error(&jerr);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &mem, &mem_len);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = 4;
    c.in_color_space = JCS_CMYK;
    jpeg_set_defaults(&c);
    jpeg_set_colorspace(&c, cs);
    jpeg_set_quality(&c, 100, TRUE);
    c.write_Adobe_marker = adobe ? TRUE : FALSE;
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(cmyk + (size_t)c.next_scanline * (size_t)w * 4);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    int ok = ct_write_file(path, mem, mem_len);
    free(mem);
    return ok;
}

/* Expected RGB of stored CMYK under each convention. */
static int cmyk_expected(const unsigned char *p, int ch, int inverted)
{
    if (inverted)
        return (p[ch] * p[3] + 127) / 255;
    return ((255 - p[ch]) * (255 - p[3]) + 127) / 255;
}

static void check_cmyk_case(J_COLOR_SPACE cs, int adobe, const char *label)
{
    enum { W = 40, H = 24 };
    /* Deterministic ramps: the conventions differ by |255 - c - k| per
     * channel, which a random smooth image can keep near 0 everywhere; these
     * ramps reach 215 at x = 0, so every seed can tell the two apart. */
    unsigned char *cmyk = malloc((size_t)W * H * 4);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            unsigned char *p = cmyk + ((size_t)y * W + (size_t)x) * 4;
            p[0] = (unsigned char)(6 * x);
            p[1] = (unsigned char)(10 * y);
            p[2] = (unsigned char)(3 * (x + y));
            p[3] = (unsigned char)(40 + 4 * x);
        }

    char path[600];
    snprintf(path, sizeof path, "%s/%s.jpg", tmpdir, label);
    CHECK(write_cmyk_jpeg(path, cmyk, W, H, cs, adobe));
    ts_image img;
    ts_err err = {0};
    ts_image_info info;
    CHECK_MSG(ts_image_probe(path, &info, &err) == TS_OK, "%s", err.msg);
    CHECK_MSG(info.color && strcmp(info.color, cs == JCS_YCCK ? "ycck" : "cmyk") == 0, "%s: %s",
              label, info.color ? info.color : "(null)");
    ts_status st = ts_image_load(path, NULL, &img, &err);
    CHECK_MSG(st == TS_OK, "%s", err.msg);
    if (st == TS_OK) {
        CHECK_EQ_INT(img.c, 3);
        int worst = 0, worst_other = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                for (int ch = 0; ch < 3; ch++) {
                    const unsigned char *p = cmyk + ((size_t)y * W + (size_t)x) * 4;
                    int got = (int)ct_sample(&img, x, y, ch);
                    int d = abs(got - cmyk_expected(p, ch, adobe));
                    int d_other = abs(got - cmyk_expected(p, ch, !adobe));
                    if (d > worst) worst = d;
                    if (d_other > worst_other) worst_other = d_other;
                }
        fprintf(stderr, "  %s: largest error %d (the other convention would be off by %d)\n",
                label, worst, worst_other);
        CHECK_MSG(worst <= 4, "%s: error %d", label, worst);
        CHECK_MSG(worst_other > 40, "%s: test cannot tell the conventions apart", label);
    }
    ts_image_free(&img);
    free(cmyk);
}

static void test_cmyk_variants(void)
{
    check_cmyk_case(JCS_CMYK, 1, "adobe-cmyk");
    check_cmyk_case(JCS_CMYK, 0, "plain-cmyk");
    check_cmyk_case(JCS_YCCK, 1, "adobe-ycck");
}

static void test_scan_limit(void)
{
    ts_image img;
    ts_err err = {0};
    const char *path = TS_TEST_DATA "/bad/manyscans.jpg";
    ts_status st = ts_image_load(path, NULL, &img, &err);
    CHECK_EQ_INT(st, TS_E_CORRUPT);
    CHECK_MSG(ct_starts_with(err.msg, path) && strstr(err.msg, "scans"), "%s", err.msg);
    CHECK(img.data == NULL);
    ts_image_free(&img);    /* in case it was wrongly decoded */
    fprintf(stderr, "  manyscans.jpg -> %s\n", err.msg);
}

static void test_max_pixels(void)
{
    ts_image img;
    ts_err err = {0};
    ts_load_opts tight = {48 * 32 - 1, NULL, 0, 0};
    ts_load_opts exact = {48 * 32, NULL, 0, 0};
    CHECK_EQ_INT(ts_image_load(JDIR "/progressive.jpg", &tight, &img, &err), TS_E_LIMIT);
    CHECK(strstr(err.msg, "progressive.jpg") != NULL);
    ts_image_free(&img);
    CHECK_EQ_INT(ts_image_load(JDIR "/progressive.jpg", &exact, &img, &err), TS_OK);
    ts_image_free(&img);
}

/* ---- EXIF parser ------------------------------------------------------- */

/* A TIFF block with count entries in IFD0; the orientation entry is last. */
static size_t make_tiff(unsigned char *b, int big_endian, int count, unsigned type, unsigned value)
{
    size_t n = 0;
    #define PUT16(v) do { unsigned v_ = (v); if (big_endian) { b[n++] = v_ >> 8; b[n++] = v_ & 255; } \
                          else { b[n++] = v_ & 255; b[n++] = v_ >> 8; } } while (0)
    #define PUT32(v) do { uint32_t w_ = (v); if (big_endian) { PUT16(w_ >> 16); PUT16(w_ & 0xffff); } \
                          else { PUT16(w_ & 0xffff); PUT16(w_ >> 16); } } while (0)
    b[n++] = big_endian ? 'M' : 'I';
    b[n++] = big_endian ? 'M' : 'I';
    PUT16(42);
    PUT32(8);
    PUT16((unsigned)count);
    for (int i = 0; i < count - 1; i++) {   /* other tags: Make, Model, ... */
        PUT16(0x010F + (unsigned)i);
        PUT16(2);
        PUT32(4);
        PUT32(0x41424300);
    }
    PUT16(0x0112);
    PUT16(type);
    PUT32(1);
    if (type == 3) {
        PUT16(value);
        PUT16(0);
    } else {
        PUT32(value);
    }
    PUT32(0);
    #undef PUT16
    #undef PUT32
    return n;
}

static int orientation_of_copy(const unsigned char *b, size_t len)
{
    /* An exact-size heap copy, so that ASan sees any read past the end. */
    unsigned char *copy = malloc(len ? len : 1);
    memcpy(copy, b, len);
    int o = ts_exif_orientation(copy, len);
    free(copy);
    return o;
}

static void test_exif_parser(void)
{
    unsigned char b[256];
    for (int be = 0; be <= 1; be++)
        for (int v = 1; v <= 8; v++) {
            size_t n = make_tiff(b, be, 3, 3, (unsigned)v);
            CHECK_EQ_INT(orientation_of_copy(b, n), v);
            /* Every truncation is refused without reading past the end. */
            for (size_t cut = 0; cut < n - 4; cut++)
                CHECK_EQ_INT(orientation_of_copy(b, cut), 0);
        }
    size_t n = make_tiff(b, 0, 1, 4, 6);       /* LONG instead of SHORT */
    CHECK_EQ_INT(orientation_of_copy(b, n), 6);
    n = make_tiff(b, 1, 1, 3, 9);              /* out of range */
    CHECK_EQ_INT(orientation_of_copy(b, n), 0);
    n = make_tiff(b, 1, 1, 3, 0);
    CHECK_EQ_INT(orientation_of_copy(b, n), 0);
    n = make_tiff(b, 1, 2, 2, 3);              /* wrong type */
    CHECK_EQ_INT(orientation_of_copy(b, n), 0);
    n = make_tiff(b, 1, 1, 3, 3);
    b[3] = 43;                                  /* not TIFF */
    CHECK_EQ_INT(orientation_of_copy(b, n), 0);
    n = make_tiff(b, 1, 1, 3, 3);
    b[4] = 0x7f;                                /* IFD offset far outside */
    CHECK_EQ_INT(orientation_of_copy(b, n), 0);
    n = make_tiff(b, 1, 1, 3, 3);
    b[8] = 0xff; b[9] = 0xff;                   /* 65535 entries claimed, */
    b[11] = 0x10;                               /* and none is Orientation */
    CHECK_EQ_INT(orientation_of_copy(b, n), 0);
    n = make_tiff(b, 0, 1, 3, 3);
    b[4] = 0xf9; b[5] = 0xff; b[6] = 0xff; b[7] = 0xff; /* offset near 2^32 */
    CHECK_EQ_INT(orientation_of_copy(b, n), 0);

    /* Random bytes behind a valid header: never out of bounds, never an
     * orientation outside 1..8. */
    for (int i = 0; i < 2000; i++) {
        size_t len = 8 + check_rand() % 120;
        n = make_tiff(b, (int)(check_rand() & 1), 3, 3, 5);
        for (size_t k = 8; k < len; k++)
            if (check_rand() % 4 == 0 || k >= n)
                b[k] = (unsigned char)check_rand();
        int o = orientation_of_copy(b, len);
        CHECK(o >= 0 && o <= 8);
    }

    /* The writer's block reads back. */
    unsigned char w[TS_EXIF_ORIENT_BYTES];
    for (int v = 1; v <= 8; v++) {
        CHECK_EQ_INT(ts_exif_make_orientation(w, v), TS_EXIF_ORIENT_BYTES);
        CHECK_EQ_INT(orientation_of_copy(w, sizeof w), v);
    }
}

int main(void)
{
    check_seed();
    ct_tempdir(tmpdir, sizeof tmpdir, "ts_jpeg");
    test_fixtures();
    test_icc();
    test_orientation();
    test_cmyk_variants();
    test_scan_limit();
    test_max_pixels();
    test_exif_parser();
    ct_remove_tree(tmpdir);
    return check_exit();
}
