/* test_codecs.c - image memory, format names and detection, and round
 * trips through every writer: PNG exact at 8 and 16 bits for 1..4
 * channels, JPEG close (PSNR) with the 16-bit and alpha conversions pinned
 * down exactly, BMP and TGA exact (read back by small parsers here), HDR
 * header and values, ICC profiles and EXIF orientation carried across. */
#include "check.h"
#include "codec_test.h"
#include "codec_internal.h"
#include "codec_formats.h"
#include "tilestream.h"

#include <zlib.h>

#define JDIR TS_TEST_DATA "/jpeg"

static char tmpdir[512];

static const char *tmp_path(const char *name)
{
    static char path[4][700];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof path[0], "%s/%s", tmpdir, name);
    return p;
}

/* ---- image memory ------------------------------------------------------ */

typedef struct pool {
    int allocs, frees, fail;
} pool;

static void *pool_alloc(void *ctx, size_t n)
{
    pool *p = ctx;
    p->allocs++;
    return p->fail ? NULL : malloc(n);
}

static void pool_free(void *ctx, void *ptr)
{
    ((pool *)ctx)->frees++;
    free(ptr);
}

static void test_image_memory(void)
{
    ts_image img;
    ts_err err = {0};
    CHECK_EQ_INT(ts_image_alloc(&img, 7, 5, 3, TS_U16, 0, NULL, &err), TS_OK);
    CHECK_EQ_INT(img.stride, 7 * 3 * 2);
    CHECK_EQ_INT(ts_pixel_bytes(&img), 6);
    CHECK_EQ_INT(img.orientation, 1);
    CHECK(img.icc == NULL && img.data != NULL);
    ts_image_free(&img);
    CHECK(img.data == NULL);
    ts_image_free(&img);            /* twice is harmless */
    CHECK_EQ_INT(ts_type_max(TS_U8), 255);
    CHECK_EQ_INT(ts_type_max(TS_U16), 65535);
    CHECK_EQ_INT(ts_type_max(TS_F32), 1);

    /* Limits are checked before anything is allocated. */
    pool p = {0, 0, 0};
    ts_allocator a = {pool_alloc, pool_free, &p};
    CHECK_EQ_INT(ts_image_alloc(&img, 1000, 1000, 1, TS_U8, 999999, &a, &err), TS_E_LIMIT);
    CHECK(strstr(err.msg, "1000x1000") != NULL);
    CHECK_EQ_INT(ts_image_alloc(&img, 0x7fffffff, 0x7fffffff, 4, TS_F32, 0, &a, &err), TS_E_LIMIT);
    CHECK_EQ_INT(ts_image_alloc(&img, 0, 5, 1, TS_U8, 0, &a, &err), TS_E_ARG);
    CHECK_EQ_INT(ts_image_alloc(&img, 5, -1, 1, TS_U8, 0, &a, &err), TS_E_ARG);
    CHECK_EQ_INT(ts_image_alloc(&img, 5, 5, 5, TS_U8, 0, &a, &err), TS_E_ARG);
    CHECK_EQ_INT(ts_image_alloc(&img, 5, 5, 1, (ts_type)3, 0, &a, &err), TS_E_ARG);
    CHECK_EQ_INT(p.allocs, 0);
    CHECK(img.data == NULL);

    /* The caller's allocator makes the pixels and takes them back. */
    CHECK_EQ_INT(ts_image_alloc(&img, 1000, 1000, 1, TS_U8, 1000000, &a, &err), TS_OK);
    CHECK_EQ_INT(p.allocs, 1);
    ts_image_free(&img);
    CHECK_EQ_INT(p.frees, 1);
    p.fail = 1;
    CHECK_EQ_INT(ts_image_alloc(&img, 64, 64, 4, TS_U8, 0, &a, &err), TS_E_NOMEM);
    CHECK(img.data == NULL);

    /* Clones are deep, tightly packed and malloc'd. */
    ts_image src = ct_random_image(13, 9, 4, TS_U16), dst;
    src.orientation = 7;
    src.icc = malloc(200);
    src.icc_len = 200;
    memset(src.icc, 0xAB, 200);
    CHECK_EQ_INT(ts_image_clone(&dst, &src, &err), TS_OK);
    CHECK(ct_same_pixels(&src, &dst));
    CHECK_EQ_INT(dst.stride, 13 * 4 * 2);
    CHECK_EQ_INT(dst.orientation, 7);
    CHECK(dst.icc != src.icc && dst.icc_len == 200 && memcmp(dst.icc, src.icc, 200) == 0);
    CHECK(dst.alloc.alloc == NULL && dst.alloc.free == NULL);
    ts_image_free(&dst);
    ts_image_free(&src);
}

/* ---- formats ----------------------------------------------------------- */

static void test_formats(void)
{
    CHECK(strcmp(ts_format_name(TS_FMT_PNG), "png") == 0);
    CHECK(strcmp(ts_format_name(TS_FMT_JPEG), "jpg") == 0);
    CHECK(strcmp(ts_format_extension(TS_FMT_HDR), ".hdr") == 0);
    CHECK(strcmp(ts_format_extension(TS_FMT_TGA), ".tga") == 0);
    CHECK_EQ_INT(ts_format_from_name("jpeg"), TS_FMT_JPEG);
    CHECK_EQ_INT(ts_format_from_name("JPG"), TS_FMT_JPEG);
    CHECK_EQ_INT(ts_format_from_name(".bmp"), TS_FMT_BMP);
    CHECK_EQ_INT(ts_format_from_name("same"), TS_FMT_UNKNOWN);
    CHECK_EQ_INT(ts_format_from_name(NULL), TS_FMT_UNKNOWN);
    CHECK_EQ_INT(ts_format_from_path("a/b.c/photo.JPEG"), TS_FMT_JPEG);
    CHECK_EQ_INT(ts_format_from_path("out/x.Png"), TS_FMT_PNG);
    CHECK_EQ_INT(ts_format_from_path("scene.hdr"), TS_FMT_HDR);
    CHECK_EQ_INT(ts_format_from_path("dir.png/file"), TS_FMT_UNKNOWN);
    CHECK_EQ_INT(ts_format_from_path("dir/.png"), TS_FMT_UNKNOWN);
    CHECK_EQ_INT(ts_format_from_path("noext"), TS_FMT_UNKNOWN);
    CHECK_EQ_INT(ts_format_from_path("file."), TS_FMT_UNKNOWN);
    CHECK(ts_format_can_read(TS_FMT_PNG) && ts_format_can_read(TS_FMT_JPEG));
    CHECK(!ts_format_can_read(TS_FMT_BMP) && !ts_format_can_read(TS_FMT_UNKNOWN));

    static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    static const unsigned char jpg[] = {0xFF, 0xD8, 0xFF, 0xE0};
    unsigned char bmp[32] = {'B', 'M'};
    bmp[14] = 40;
    CHECK_EQ_INT(ts_format_sniff(png, sizeof png), TS_FMT_PNG);
    CHECK_EQ_INT(ts_format_sniff(jpg, sizeof jpg), TS_FMT_JPEG);
    CHECK_EQ_INT(ts_format_sniff(jpg, 2), TS_FMT_UNKNOWN);
    CHECK_EQ_INT(ts_format_sniff(bmp, sizeof bmp), TS_FMT_BMP);
    CHECK_EQ_INT(ts_format_sniff((const unsigned char *)"BMW is a car brand, not a bitmap", 32),
                 TS_FMT_UNKNOWN);
    CHECK_EQ_INT(ts_format_sniff((const unsigned char *)"#?RADIANCE\n", 11), TS_FMT_HDR);
    CHECK_EQ_INT(ts_format_sniff((const unsigned char *)"hello", 5), TS_FMT_UNKNOWN);

    /* Reading goes by content, whatever the name says. */
    size_t n;
    unsigned char *data = ct_read_file(TS_TEST_DATA "/pngsuite/basn2c08.png", &n);
    CHECK(data && ct_write_file(tmp_path("really-a-png.jpg"), data, n));
    free(data);
    data = ct_read_file(JDIR "/baseline.jpg", &n);
    CHECK(data && ct_write_file(tmp_path("really-a-jpeg.png"), data, n));
    free(data);
    ts_image img;
    ts_image_info info;
    ts_err err = {0};
    CHECK_MSG(ts_image_load(tmp_path("really-a-png.jpg"), NULL, &img, &err) == TS_OK, "%s", err.msg);
    CHECK(img.w == 32 && img.c == 3);
    ts_image_free(&img);
    CHECK(ts_image_probe(tmp_path("really-a-png.jpg"), &info, &err) == TS_OK);
    CHECK_EQ_INT(info.format, TS_FMT_PNG);
    CHECK_MSG(ts_image_load(tmp_path("really-a-jpeg.png"), NULL, &img, &err) == TS_OK, "%s", err.msg);
    CHECK(img.w == 48 && img.c == 3);
    ts_image_free(&img);
    CHECK(ts_image_probe(tmp_path("really-a-jpeg.png"), &info, &err) == TS_OK);
    CHECK_EQ_INT(info.format, TS_FMT_JPEG);
}

/* ---- PNG ----------------------------------------------------------------- */

static ts_status save_load(const ts_image *img, const char *name, const ts_save_opts *o,
                           ts_image *back)
{
    ts_err err = {0};
    memset(back, 0, sizeof *back);
    ts_status st = ts_image_save(tmp_path(name), img, o, &err);
    CHECK_MSG(st == TS_OK, "save %s: %s", name, err.msg);
    if (st != TS_OK)
        return st;
    st = ts_image_load(tmp_path(name), NULL, back, &err);
    CHECK_MSG(st == TS_OK, "load %s: %s", name, err.msg);
    return st;
}

static void test_png_round_trips(void)
{
    for (int depth = 8; depth <= 16; depth += 8)
        for (int c = 1; c <= 4; c++) {
            ts_type t = depth == 8 ? TS_U8 : TS_U16;
            ts_image img = ct_random_image(37, 23, c, t), back;
            if (save_load(&img, "rt.png", NULL, &back) == TS_OK) {
                CHECK_MSG(ct_same_pixels(&img, &back), "PNG %d-bit, %d channels differ", depth, c);
                CHECK_EQ_INT(back.type, t);
            }
            ts_image_info info;
            ts_err err;
            CHECK(ts_image_probe(tmp_path("rt.png"), &info, &err) == TS_OK);
            CHECK_EQ_INT(info.bit_depth, depth);
            CHECK_EQ_INT(info.c, c);
            ts_image_free(&back);
            ts_image_free(&img);
        }

    /* Compression levels: both ends are lossless, and the level is used. */
    ts_image smooth = ct_smooth_image(128, 96, 3), back;
    ts_save_opts store = {TS_FMT_UNKNOWN, 0, 0, 0}, best = {TS_FMT_UNKNOWN, 0, 9, 0};
    size_t n0 = 0, n9 = 0;
    unsigned char *f;
    if (save_load(&smooth, "l0.png", &store, &back) == TS_OK)
        CHECK(ct_same_pixels(&smooth, &back));
    ts_image_free(&back);
    if (save_load(&smooth, "l9.png", &best, &back) == TS_OK)
        CHECK(ct_same_pixels(&smooth, &back));
    ts_image_free(&back);
    free(f = ct_read_file(tmp_path("l0.png"), &n0));
    free(f = ct_read_file(tmp_path("l9.png"), &n9));
    fprintf(stderr, "  PNG 128x96 smooth: level 0 %zu bytes, level 9 %zu bytes\n", n0, n9);
    CHECK(n0 > 128 * 96 * 3 && n9 < n0 / 2);
    ts_save_opts bad_level = {TS_FMT_UNKNOWN, 0, 10, 0};
    ts_err err;
    CHECK_EQ_INT(ts_image_save(tmp_path("bad.png"), &smooth, &bad_level, &err), TS_E_ARG);
    ts_image_free(&smooth);

    /* Float images are written as 16-bit: v * 65535, rounded, clamped. */
    ts_image fl;
    CHECK(ts_image_alloc(&fl, 5, 1, 1, TS_F32, 0, NULL, &err) == TS_OK);
    float vals[5] = {-0.5f, 0.0f, 0.25f, 0.75f, 1.5f};
    memcpy(fl.data, vals, sizeof vals);
    if (save_load(&fl, "float.png", NULL, &back) == TS_OK) {
        CHECK_EQ_INT(back.type, TS_U16);
        unsigned want[5] = {0, 0, 16384, 49151, 65535};   /* 16383.75, 49151.25 */
        for (int i = 0; i < 5; i++)
            CHECK_EQ_INT(ct_sample(&back, i, 0, 0), want[i]);
    }
    ts_image_free(&back);
    ts_image_free(&fl);
}

/* The writer's zlib strategy is chosen per image from a sample compressed
 * both ways: run-length matches for photograph-like data, the default for
 * graphics whose repeats lie further back than the pixel to the left. Both
 * are lossless, and the graphics file stays as small as the default's. */
static void test_png_strategy(void)
{
    enum { W = 1024, H = 512 };
    ts_image photo = ct_smooth_image(W, H, 3), chart = ct_random_image(W, H, 3, TS_U8), back;
    for (int y = 0; y < H; y++) {
        unsigned char *p = photo.data + (size_t)y * photo.stride;
        for (int x = 0; x < W * 3; x++) {   /* sensor-like noise of +-3 on the smooth picture */
            int v = p[x] + (int)(check_rand() % 7) - 3;
            p[x] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
    /* a 37 x 11 random glyph tiled over the chart: every repeat 37 pixels back */
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W * 3; x++)
            chart.data[(size_t)y * chart.stride + (size_t)x] = chart.data[(size_t)(y % 11) * chart.stride + (size_t)(x % 111)];
    CHECK_EQ_INT(ts_png_pick_strategy(&photo, 3), Z_RLE);
    CHECK_EQ_INT(ts_png_pick_strategy(&chart, 3), Z_DEFAULT_STRATEGY);
    CHECK_EQ_INT(ts_png_pick_strategy(&photo, 0), Z_DEFAULT_STRATEGY);
    ts_image small = ct_smooth_image(300, 200, 3);   /* under 1 MB: not sampled */
    CHECK_EQ_INT(ts_png_pick_strategy(&small, 3), Z_DEFAULT_STRATEGY);
    ts_image_free(&small);
    if (save_load(&photo, "photo.png", NULL, &back) == TS_OK) CHECK(ct_same_pixels(&photo, &back));
    ts_image_free(&back);
    if (save_load(&chart, "chart.png", NULL, &back) == TS_OK) CHECK(ct_same_pixels(&chart, &back));
    ts_image_free(&back);
    size_t n = 0;
    unsigned char *f = ct_read_file(tmp_path("chart.png"), &n);
    free(f);
    fprintf(stderr, "  PNG %dx%d tiled glyph: %zu bytes\n", W, H, n);
    CHECK(n > 0 && n < (size_t)W * H * 3 / 20);
    ts_image_free(&photo);
    ts_image_free(&chart);
}

/* ---- JPEG ----------------------------------------------------------------- */

static int same_file(const char *a, const char *b)
{
    size_t na, nb;
    unsigned char *da = ct_read_file(a, &na), *db = ct_read_file(b, &nb);
    int same = da && db && na == nb && memcmp(da, db, na) == 0;
    free(da);
    free(db);
    return same;
}

static void test_jpeg_round_trips(void)
{
    ts_save_opts q95 = {TS_FMT_UNKNOWN, 95, -1, 0};
    ts_save_opts q95p = {TS_FMT_UNKNOWN, 95, -1, 1};
    for (int c = 1; c <= 3; c += 2) {
        ts_image img = ct_smooth_image(160, 120, c), back;
        if (save_load(&img, "q95.jpg", &q95, &back) == TS_OK) {
            double p = ct_psnr(&img, &back);
            fprintf(stderr, "  JPEG q95 %d channel(s): PSNR %.1f dB\n", c, p);
            CHECK_MSG(p > 35.0, "PSNR %.1f", p);
        }
        ts_image_free(&back);
        if (save_load(&img, "q95p.jpg", &q95p, &back) == TS_OK) {
            double p = ct_psnr(&img, &back);
            fprintf(stderr, "  JPEG q95 progressive %d channel(s): PSNR %.1f dB\n", c, p);
            CHECK_MSG(p > 35.0, "PSNR %.1f", p);
        }
        ts_image_free(&back);
        ts_image_info info;
        ts_err err;
        CHECK(ts_image_probe(tmp_path("q95p.jpg"), &info, &err) == TS_OK);
        CHECK_EQ_INT(info.progressive, 1);
        CHECK(ts_image_probe(tmp_path("q95.jpg"), &info, &err) == TS_OK);
        CHECK_EQ_INT(info.progressive, 0);
        ts_image_free(&img);
    }

    /* Conversions are exact: a 16-bit image, an RGBA image and a grey+alpha
     * image give the very bytes of the 8-bit, RGB and grey image that the
     * stated rule (v * 255 / 65535 rounded; alpha dropped) makes. */
    ts_err err;
    ts_image wide = ct_random_image(33, 17, 4, TS_U16), narrow, colour, grey_a, grey;
    CHECK(ts_image_alloc(&narrow, 33, 17, 4, TS_U8, 0, NULL, &err) == TS_OK);
    CHECK(ts_image_alloc(&colour, 33, 17, 3, TS_U8, 0, NULL, &err) == TS_OK);
    CHECK(ts_image_alloc(&grey_a, 33, 17, 2, TS_U8, 0, NULL, &err) == TS_OK);
    CHECK(ts_image_alloc(&grey, 33, 17, 1, TS_U8, 0, NULL, &err) == TS_OK);
    for (int y = 0; y < 17; y++)
        for (int x = 0; x < 33; x++)
            for (int ch = 0; ch < 4; ch++) {
                unsigned v = ct_sample(&wide, x, y, ch);
                unsigned v8 = (unsigned)((v * 255.0) / 65535.0 + 0.5);
                ct_set_sample(&narrow, x, y, ch, v8);
                if (ch < 3)
                    ct_set_sample(&colour, x, y, ch, v8);
                if (ch == 0 || ch == 3)
                    ct_set_sample(&grey_a, x, y, ch == 0 ? 0 : 1, v8);
                if (ch == 0)
                    ct_set_sample(&grey, x, y, 0, v8);
            }
    ts_save_opts q90 = {TS_FMT_UNKNOWN, 0, -1, 0};
    CHECK(ts_image_save(tmp_path("wide.jpg"), &wide, &q90, &err) == TS_OK);
    CHECK(ts_image_save(tmp_path("narrow.jpg"), &narrow, &q90, &err) == TS_OK);
    CHECK(ts_image_save(tmp_path("colour.jpg"), &colour, &q90, &err) == TS_OK);
    CHECK(ts_image_save(tmp_path("grey_a.jpg"), &grey_a, &q90, &err) == TS_OK);
    CHECK(ts_image_save(tmp_path("grey.jpg"), &grey, &q90, &err) == TS_OK);
    CHECK_MSG(same_file(tmp_path("wide.jpg"), tmp_path("colour.jpg")), "16-bit RGBA != 8-bit RGB");
    CHECK_MSG(same_file(tmp_path("narrow.jpg"), tmp_path("colour.jpg")), "RGBA != RGB");
    CHECK_MSG(same_file(tmp_path("grey_a.jpg"), tmp_path("grey.jpg")), "grey+alpha != grey");
    CHECK(!same_file(tmp_path("grey.jpg"), tmp_path("colour.jpg")));
    ts_image back;
    CHECK(ts_image_load(tmp_path("grey_a.jpg"), NULL, &back, &err) == TS_OK);
    CHECK_EQ_INT(back.c, 1);
    ts_image_free(&back);

    ts_save_opts bad_q = {TS_FMT_UNKNOWN, 101, -1, 0};
    CHECK_EQ_INT(ts_image_save(tmp_path("bad.jpg"), &grey, &bad_q, &err), TS_E_ARG);
    /* The format option wins over the extension. */
    ts_save_opts as_jpeg = {TS_FMT_JPEG, 0, -1, 0};
    CHECK(ts_image_save(tmp_path("forced.png"), &grey, &as_jpeg, &err) == TS_OK);
    ts_image_info info;
    CHECK(ts_image_probe(tmp_path("forced.png"), &info, &err) == TS_OK);
    CHECK_EQ_INT(info.format, TS_FMT_JPEG);

    ts_image_free(&wide);
    ts_image_free(&narrow);
    ts_image_free(&colour);
    ts_image_free(&grey_a);
    ts_image_free(&grey);
}

/* ---- BMP / TGA / HDR ----------------------------------------------------- */

#ifdef TS_HAVE_STB  /* parsers for what stb writes */
static unsigned le16(const unsigned char *p) { return p[0] | p[1] << 8; }
static uint32_t le32(const unsigned char *p) { return le16(p) | (uint32_t)le16(p + 2) << 16; }

/* The 8-bit value the writers store for sample (x, y, ch). */
static unsigned value8(const ts_image *img, int x, int y, int ch)
{
    unsigned v = ct_sample(img, x, y, ch);
    return img->type == TS_U16 ? (unsigned)(v * 255.0 / 65535.0 + 0.5) : v;
}

/* Parse the BMP stb writes (24-bit BI_RGB or 32-bit BITFIELDS, bottom-up)
 * and compare every pixel: grey expands to three equal channels, grey's
 * alpha is dropped, RGBA keeps alpha. */
static void check_bmp(const char *path, const ts_image *img)
{
    size_t n;
    unsigned char *f = ct_read_file(path, &n);
    CHECK(f && n > 54 && f[0] == 'B' && f[1] == 'M');
    if (!f || n <= 54) {
        free(f);
        return;
    }
    uint32_t offset = le32(f + 10);
    int w = (int)le32(f + 18), h = (int)le32(f + 22), bpp = (int)le16(f + 28);
    CHECK_EQ_INT(le32(f + 2), n);
    CHECK_EQ_INT(w, img->w);
    CHECK_EQ_INT(h, img->h);
    CHECK_EQ_INT(bpp, img->c == 4 ? 32 : 24);
    size_t row = ((size_t)w * (size_t)(bpp / 8) + 3) & ~(size_t)3;
    CHECK(offset + row * (size_t)h <= n);
    int bad = 0;
    for (int y = 0; y < h && offset + row * (size_t)h <= n; y++) {
        const unsigned char *r = f + offset + row * (size_t)(h - 1 - y);
        for (int x = 0; x < w; x++) {
            const unsigned char *p = r + (size_t)x * (size_t)(bpp / 8);
            unsigned want[4];
            for (int ch = 0; ch < 3; ch++)
                want[ch] = value8(img, x, y, img->c >= 3 ? ch : 0);
            if (p[2] != want[0] || p[1] != want[1] || p[0] != want[2])
                bad++;
            if (bpp == 32 && p[3] != value8(img, x, y, 3))
                bad++;
        }
    }
    CHECK_MSG(bad == 0, "%s: %d pixels differ", path, bad);
    free(f);
}

/* Parse a TGA (uncompressed or RLE, any origin) and compare every pixel. */
static void check_tga(const char *path, const ts_image *img)
{
    size_t n;
    unsigned char *f = ct_read_file(path, &n);
    CHECK(f && n > 18);
    if (!f || n <= 18) {
        free(f);
        return;
    }
    int type = f[2], w = (int)le16(f + 12), h = (int)le16(f + 14), bpp = f[16], desc = f[17];
    int rle = type >= 9, grey = (type & 7) == 3;
    int bytes = bpp / 8;
    CHECK_EQ_INT(f[1], 0);          /* no colour map */
    CHECK_EQ_INT(grey, img->c <= 2);
    CHECK_EQ_INT(w, img->w);
    CHECK_EQ_INT(h, img->h);
    CHECK_EQ_INT(bytes, img->c);
    CHECK_EQ_INT(desc & 15, img->c == 2 || img->c == 4 ? 8 : 0);
    size_t total = (size_t)w * (size_t)h * (size_t)bytes, got = 0, pos = 18u + f[0];
    unsigned char *px = malloc(total);
    while (got < total && pos < n) {
        if (!rle) {
            px[got++] = f[pos++];
            continue;
        }
        int head = f[pos++], count = (head & 127) + 1;
        for (int i = 0; i < count && got < total && pos + (size_t)bytes <= n; i++) {
            memcpy(px + got, f + pos, (size_t)bytes);
            got += (size_t)bytes;
            if (!(head & 128))
                pos += (size_t)bytes;
        }
        if (head & 128)
            pos += (size_t)bytes;
    }
    CHECK_EQ_INT(got, total);
    CHECK_EQ_INT(pos, n);
    int bad = 0, top_down = (desc & 32) != 0;
    for (int y = 0; y < h && got == total; y++)
        for (int x = 0; x < w; x++) {
            int row = top_down ? y : h - 1 - y;
            const unsigned char *p = px + ((size_t)row * (size_t)w + (size_t)x) * (size_t)bytes;
            if (grey) {
                if (p[0] != value8(img, x, y, 0)) bad++;
            } else if (p[2] != value8(img, x, y, 0) || p[1] != value8(img, x, y, 1) ||
                       p[0] != value8(img, x, y, 2)) {
                bad++;
            }
            if ((img->c == 2 || img->c == 4) && p[bytes - 1] != value8(img, x, y, img->c - 1))
                bad++;
        }
    CHECK_MSG(bad == 0, "%s: %d pixels differ", path, bad);
    free(px);
    free(f);
}

/* Header, then every RGBE scanline (RLE when 8 <= width < 32768) decoded
 * and compared with value / max within RGBE's precision. */
static void check_hdr(const char *path, const ts_image *img)
{
    size_t n;
    unsigned char *f = ct_read_file(path, &n);
    CHECK(f && n > 11 && memcmp(f, "#?RADIANCE\n", 11) == 0);
    if (!f || n <= 11) {
        free(f);
        return;
    }
    char *text = malloc(n + 1);
    memcpy(text, f, n);
    text[n] = 0;
    CHECK(strstr(text, "FORMAT=32-bit_rle_rgbe\n") != NULL);
    char dims[64];
    snprintf(dims, sizeof dims, "\n\n-Y %d +X %d\n", img->h, img->w);
    char *at = strstr(text, dims);
    CHECK_MSG(at != NULL, "no '%s' line", dims + 2);
    size_t pos = at ? (size_t)(at - text) + strlen(dims) : n;
    free(text);
    int w = img->w, bad = 0;
    unsigned char *line = malloc((size_t)w * 4);
    double max = ts_type_max(img->type);
    for (int y = 0; y < img->h && pos + 4 <= n; y++) {
        CHECK(f[pos] == 2 && f[pos + 1] == 2 && ((f[pos + 2] << 8) | f[pos + 3]) == w);
        pos += 4;
        for (int ch = 0; ch < 4; ch++)
            for (int x = 0; x < w && pos < n;) {
                int count = f[pos++];
                if (count > 128) {
                    count -= 128;
                    for (int i = 0; i < count && x < w; i++) line[(size_t)(x++) * 4 + ch] = f[pos];
                    pos++;
                } else {
                    for (int i = 0; i < count && x < w && pos < n; i++)
                        line[(size_t)(x++) * 4 + ch] = f[pos++];
                }
            }
        for (int x = 0; x < w; x++) {
            const unsigned char *e = line + (size_t)x * 4;
            double scale = e[3] ? ldexp(1.0, e[3] - 136) : 0.0;
            double top = 0;
            for (int ch = 0; ch < 3; ch++) {
                double want = ct_sample(img, x, y, img->c >= 3 ? ch : 0) / max;
                if (want > top) top = want;
            }
            for (int ch = 0; ch < 3; ch++) {
                double want = ct_sample(img, x, y, img->c >= 3 ? ch : 0) / max;
                if (fabs(e[ch] * scale - want) > top / 128.0 + 1e-6)
                    bad++;
            }
        }
    }
    CHECK_EQ_INT(pos, n);
    CHECK_MSG(bad == 0, "%s: %d samples off", path, bad);
    free(line);
    free(f);
}

#endif

static void test_stb_writers(void)
{
#ifdef TS_HAVE_STB
    for (int c = 1; c <= 4; c++) {
        ts_image img = ct_random_image(21, 11, c, TS_U8);
        /* Runs of equal pixels, so that the TGA writer's RLE packets of
         * both kinds are read back too. */
        for (int x = 3; x < 12; x++)
            memcpy(img.data + (size_t)x * (size_t)c, img.data, (size_t)c);
        ts_err err = {0};
        CHECK_MSG(ts_image_save(tmp_path("t.bmp"), &img, NULL, &err) == TS_OK, "%s", err.msg);
        check_bmp(tmp_path("t.bmp"), &img);
        CHECK_MSG(ts_image_save(tmp_path("t.tga"), &img, NULL, &err) == TS_OK, "%s", err.msg);
        check_tga(tmp_path("t.tga"), &img);
        CHECK_MSG(ts_image_save(tmp_path("t.hdr"), &img, NULL, &err) == TS_OK, "%s", err.msg);
        check_hdr(tmp_path("t.hdr"), &img);
        ts_image_free(&img);
    }
    /* 16-bit input is converted, for each writer. */
    ts_image wide = ct_random_image(19, 7, 3, TS_U16);
    ts_err err = {0};
    CHECK(ts_image_save(tmp_path("w.bmp"), &wide, NULL, &err) == TS_OK);
    check_bmp(tmp_path("w.bmp"), &wide);
    CHECK(ts_image_save(tmp_path("w.tga"), &wide, NULL, &err) == TS_OK);
    check_tga(tmp_path("w.tga"), &wide);
    CHECK(ts_image_save(tmp_path("w.hdr"), &wide, NULL, &err) == TS_OK);
    check_hdr(tmp_path("w.hdr"), &wide);
    ts_image_free(&wide);
#else
    ts_image img = ct_random_image(8, 8, 3, TS_U8);
    ts_err err = {0};
    const char *names[3] = {"t.bmp", "t.tga", "t.hdr"};
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(ts_image_save(tmp_path(names[i]), &img, NULL, &err), TS_E_FORMAT);
        CHECK(strstr(err.msg, names[i]) != NULL && strstr(err.msg, "stb") != NULL);
    }
    CHECK_EQ_INT(ct_count_entries(tmpdir), 0);
    ts_image_free(&img);
#endif
}

/* ---- ICC and orientation -------------------------------------------------- */

static int same_icc(const ts_image *img, const unsigned char *icc, size_t len)
{
    return img->icc && img->icc_len == len && memcmp(img->icc, icc, len) == 0;
}

static void test_icc_and_orientation(void)
{
    size_t rgb_len, grey_len;
    unsigned char *rgb = ct_read_file(JDIR "/test-rgb.icc", &rgb_len);
    unsigned char *grey = ct_read_file(JDIR "/test-grey.icc", &grey_len);
    CHECK(rgb && grey);
    if (!rgb || !grey) {
        free(rgb);
        free(grey);
        return;
    }
    ts_err err = {0};
    ts_image img = ct_random_image(24, 16, 3, TS_U8), back, again;
    img.icc = malloc(rgb_len);
    memcpy(img.icc, rgb, rgb_len);
    img.icc_len = rgb_len;
    img.orientation = 6;

    /* PNG -> PNG */
    if (save_load(&img, "icc.png", NULL, &back) == TS_OK) {
        CHECK_MSG(same_icc(&back, rgb, rgb_len), "ICC lost PNG -> PNG");
        CHECK_EQ_INT(back.orientation, 6);
        /* PNG -> JPEG */
        if (save_load(&back, "from-png.jpg", NULL, &again) == TS_OK) {
            CHECK_MSG(same_icc(&again, rgb, rgb_len), "ICC lost PNG -> JPEG");
            CHECK_EQ_INT(again.orientation, 6);
        }
        ts_image_free(&again);
    }
    ts_image_free(&back);

    /* JPEG -> JPEG, starting from the fixture exiftool made. */
    CHECK(ts_image_load(JDIR "/icc.jpg", NULL, &back, &err) == TS_OK);
    if (save_load(&back, "icc2.jpg", NULL, &again) == TS_OK)
        CHECK_MSG(same_icc(&again, rgb, rgb_len), "ICC lost JPEG -> JPEG");
    ts_image_free(&again);
    ts_image_free(&back);

    /* A grey image keeps a grey profile; an RGB profile does not fit it
     * and is left out rather than written into a file it contradicts. */
    ts_image g = ct_random_image(24, 16, 1, TS_U16);
    g.icc = malloc(grey_len);
    memcpy(g.icc, grey, grey_len);
    g.icc_len = grey_len;
    if (save_load(&g, "grey-icc.png", NULL, &back) == TS_OK)
        CHECK_MSG(same_icc(&back, grey, grey_len), "grey ICC lost PNG -> PNG");
    ts_image_free(&back);
    memcpy(g.icc, rgb, grey_len < rgb_len ? grey_len : rgb_len);
    if (save_load(&g, "grey-rgb-icc.png", NULL, &back) == TS_OK)
        CHECK(back.icc == NULL && back.icc_len == 0);
    ts_image_free(&back);
    ts_image_free(&g);

    ts_image_free(&img);
    free(rgb);
    free(grey);
}

/* Profiles libpng checks on writing. One that matches an entry of its list
 * of "known incorrect sRGB profiles" (made here: same length, intent,
 * Adler-32 and CRC-32 as the HP-Microsoft sRGB v2 profile; see
 * make_icc.py) must be carried unchanged, as every other reader accepts
 * it, to PNG from PNG and from JPEG. One libpng finds malformed is left out
 * with a note, and the image is still written. */
static void test_icc_libpng_refuses(void)
{
    size_t len;
    unsigned char *hp = ct_read_file(JDIR "/test-hp-srgb-lookalike.icc", &len);
    CHECK(hp && len == 3144);
    if (!hp)
        return;
    ts_err err = {0};
    ts_image img = ct_random_image(21, 13, 3, TS_U8), back, again;
    img.icc = malloc(len);
    memcpy(img.icc, hp, len);
    img.icc_len = len;

    CHECK_MSG(ts_image_save(tmp_path("hp.png"), &img, NULL, &err) == TS_OK, "%s", err.msg);
    CHECK_MSG(err.msg[0] == '\0', "unexpected note: %s", err.msg);
    if (ts_image_load(tmp_path("hp.png"), NULL, &back, &err) == TS_OK) {
        CHECK_MSG(same_icc(&back, hp, len), "HP-like sRGB profile lost writing PNG");
        CHECK(ct_same_pixels(&img, &back));
        /* PNG -> PNG again, and through JPEG -> PNG. */
        if (save_load(&back, "hp2.png", NULL, &again) == TS_OK)
            CHECK_MSG(same_icc(&again, hp, len), "profile lost PNG -> PNG");
        ts_image_free(&again);
        if (save_load(&back, "hp.jpg", NULL, &again) == TS_OK) {
            ts_image third;
            if (save_load(&again, "hp3.png", NULL, &third) == TS_OK)
                CHECK_MSG(same_icc(&third, hp, len), "profile lost JPEG -> PNG");
            ts_image_free(&third);
        }
        ts_image_free(&again);
    } else {
        CHECK_MSG(0, "%s", err.msg);
    }
    ts_image_free(&back);

    /* Malformed for libpng: the header's length says 4 bytes more than the
     * profile has. JPEG carries any bytes; PNG drops it, says so, and still
     * writes the image. */
    img.icc[3] += 4;
    CHECK_MSG(ts_image_save(tmp_path("bad-icc.png"), &img, NULL, &err) == TS_OK, "%s", err.msg);
    CHECK_MSG(strstr(err.msg, "bad-icc.png") && strstr(err.msg, "ICC"), "no note: '%s'", err.msg);
    fprintf(stderr, "  %s\n", err.msg);
    if (ts_image_load(tmp_path("bad-icc.png"), NULL, &back, &err) == TS_OK) {
        CHECK(back.icc == NULL);
        CHECK(ct_same_pixels(&img, &back));
    }
    ts_image_free(&back);
    CHECK_MSG(ts_image_save(tmp_path("bad-icc.jpg"), &img, NULL, &err) == TS_OK, "%s", err.msg);
    CHECK(err.msg[0] == '\0');
    ts_image_free(&img);
    free(hp);
}

/* EXIF and XMP carried from input to output. The fixtures' EXIF holds
 * Make=tilestream and Software=make_fixtures besides the orientation, in
 * both byte orders; a writer keeps all of it and sets the orientation tag
 * to the image's orientation (1 once a chain has applied it). */
static int has_bytes(const unsigned char *p, size_t n, const char *s)
{
    size_t k = strlen(s);
    for (size_t i = 0; p && i + k <= n; i++)
        if (memcmp(p + i, s, k) == 0)
            return 1;
    return 0;
}

static void test_exif_and_xmp(void)
{
    static const char *fixtures[] = {JDIR "/orient3.jpg", JDIR "/orient6.jpg"};  /* MM, II */
    for (int f = 0; f < 2; f++) {
        ts_err err = {0};
        ts_image img, back, clone;
        CHECK_MSG(ts_image_load(fixtures[f], NULL, &img, &err) == TS_OK, "%s", err.msg);
        CHECK(img.exif && has_bytes(img.exif, img.exif_len, "tilestream"));
        CHECK(ts_image_clone(&clone, &img, &err) == TS_OK);
        CHECK(clone.exif_len == img.exif_len && memcmp(clone.exif, img.exif, img.exif_len) == 0);
        ts_image_free(&clone);
        const char *names[4] = {"exif-1.jpg", "exif-1.png", "exif-5.jpg", "exif-5.png"};
        for (int i = 0; i < 4; i++) {
            img.orientation = i < 2 ? 1 : 5;
            if (save_load(&img, names[i], NULL, &back) != TS_OK)
                continue;
            CHECK_MSG(back.orientation == img.orientation, "%s: orientation %d", names[i], back.orientation);
            CHECK_MSG(back.exif && has_bytes(back.exif, back.exif_len, "tilestream") &&
                      has_bytes(back.exif, back.exif_len, "make_fixtures"), "%s: EXIF lost", names[i]);
            CHECK(back.exif_len == img.exif_len);
            CHECK_EQ_INT(ts_exif_orientation(back.exif, back.exif_len), img.orientation);
            ts_image_free(&back);
        }
        ts_image_free(&img);
    }

    /* XMP: JPEG keeps the packet as an APP1 segment; PNG gets the iTXt
     * chunk XMP readers look for. */
    static const char packet[] = "<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF>tilestream test"
                                 "</rdf:RDF></x:xmpmeta>";
    ts_image img = ct_random_image(17, 9, 3, TS_U8), back;
    img.xmp = malloc(sizeof packet - 1);
    memcpy(img.xmp, packet, sizeof packet - 1);
    img.xmp_len = sizeof packet - 1;
    if (save_load(&img, "xmp.jpg", NULL, &back) == TS_OK) {
        CHECK_MSG(back.xmp_len == img.xmp_len && back.xmp && memcmp(back.xmp, packet, img.xmp_len) == 0,
                  "XMP lost JPEG -> JPEG");
        CHECK(back.exif == NULL);           /* none made up for orientation 1 */
    }
    ts_image_free(&back);
    ts_err err = {0};
    CHECK(ts_image_save(tmp_path("xmp.png"), &img, NULL, &err) == TS_OK);
    size_t n;
    unsigned char *file = ct_read_file(tmp_path("xmp.png"), &n);
    CHECK(has_bytes(file, n, "iTXtXML:com.adobe.xmp") && has_bytes(file, n, packet));
    free(file);
    ts_image_free(&img);
}

/* Alpha onto a background, hand-computed: round((C A + B (max - A)) / max). */
static void test_flatten(void)
{
    ts_err err = {0};
    unsigned char bg[3];
    CHECK(ts_colour_parse("#102030", bg, &err) == TS_OK && bg[0] == 0x10 && bg[1] == 0x20 && bg[2] == 0x30);
    CHECK(ts_colour_parse("white", bg, &err) == TS_OK && bg[0] == 255 && bg[2] == 255);
    CHECK(ts_colour_parse("ff00ff", bg, &err) == TS_OK && bg[1] == 0);
    CHECK(ts_colour_parse("#12345", bg, &err) == TS_E_ARG);
    CHECK(ts_colour_parse("nope", bg, &err) == TS_E_ARG);
    CHECK(!ts_format_keeps_alpha(TS_FMT_JPEG, 4) && !ts_format_keeps_alpha(TS_FMT_HDR, 2) &&
          !ts_format_keeps_alpha(TS_FMT_BMP, 2) && ts_format_keeps_alpha(TS_FMT_BMP, 4) &&
          ts_format_keeps_alpha(TS_FMT_PNG, 2) && ts_format_keeps_alpha(TS_FMT_JPEG, 3));
    ts_image in, out;
    CHECK(ts_image_alloc(&in, 3, 1, 4, TS_U8, 0, NULL, &err) == TS_OK);
    const unsigned char px[12] = { 200, 100, 0, 0,   200, 100, 0, 255,   200, 100, 0, 128 };
    memcpy(in.data, px, sizeof px);
    const unsigned char grey_bg[3] = { 100, 100, 100 };
    CHECK(ts_image_flatten(&in, grey_bg, &out, &err) == TS_OK);
    CHECK(out.c == 3 && out.w == 3);
    CHECK(out.data[0] == 100 && out.data[1] == 100 && out.data[2] == 100);   /* transparent: the background */
    CHECK(out.data[3] == 200 && out.data[4] == 100 && out.data[5] == 0);     /* opaque: the colour */
    /* (200*128 + 100*127 + 127) / 255 = 150.2 -> 150; (100*128 + 100*127 + 127) / 255 -> 100; 12700/255 -> 50 */
    CHECK_MSG(out.data[6] == 150 && out.data[7] == 100 && out.data[8] == 50, "%d %d %d", out.data[6], out.data[7],
              out.data[8]);
    ts_image_free(&out);
    ts_image_free(&in);
    /* 16-bit grey + alpha onto white: half alpha gives the midpoint */
    CHECK(ts_image_alloc(&in, 1, 1, 2, TS_U16, 0, NULL, &err) == TS_OK);
    ((uint16_t *)in.data)[0] = 0;
    ((uint16_t *)in.data)[1] = 32768;
    const unsigned char white[3] = { 255, 255, 255 };
    CHECK(ts_image_flatten(&in, white, &out, &err) == TS_OK);
    CHECK(out.c == 1 && ((uint16_t *)out.data)[0] == 32767);   /* (65535 * 32767 + 32767) / 65535 */
    ts_image_free(&out);
    ts_image_free(&in);
}

int main(void)
{
    check_seed();
    test_flatten();
    ct_tempdir(tmpdir, sizeof tmpdir, "ts_codecs");
    test_image_memory();
    test_formats();
    test_png_round_trips();
    test_png_strategy();
    test_jpeg_round_trips();
    test_icc_and_orientation();
    test_icc_libpng_refuses();
    test_exif_and_xmp();
    ct_remove_tree(tmpdir);
    ct_tempdir(tmpdir, sizeof tmpdir, "ts_codecs");
    test_stb_writers();
    ct_remove_tree(tmpdir);
    return check_exit();
}
