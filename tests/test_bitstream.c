/* test_bitstream.c - ts_jpeg_write_bitstream (pipeline/codec/codec_jpeg.c), the
 * CPU half of GPU encoding: a finished JPEG stream written with the
 * image's EXIF orientation, XMP and ICC profile must load back with the
 * same pixels as the stream alone and the same metadata as the CPU writer
 * stores; streams that are not JPEG are refused. And ts_jpeg_load_header,
 * the CPU half of GPU decoding, against a full load. */
#include "batch_util.h"
#include "codec_formats.h"

typedef struct bits { const ts_image *img; const unsigned char *p; size_t n; } bits;

static ts_status write_fn(FILE *f, const char *path, void *ctx, ts_err *err)
{
    bits *b = ctx;
    return ts_jpeg_write_bitstream(f, path, b->img, b->p, b->n, err);
}

static int same_pixels(const ts_image *a, const ts_image *b)
{
    if (a->w != b->w || a->h != b->h || a->c != b->c) return 0;
    for (int y = 0; y < a->h; y++)
        if (memcmp(a->data + (size_t)y * a->stride, b->data + (size_t)y * b->stride, (size_t)a->w * (size_t)a->c))
            return 0;
    return 1;
}

/* ts_jpeg_load_header (the CPU half of GPU decoding): the same size,
 * limits and metadata as a full load, no pixels. */
static void check_header(const char *name, ts_status want)
{
    char path[8400];
    snprintf(path, sizeof path, "%s/%s", TS_TEST_DATA, name);
    FILE *f = NULL;
    ts_format fmt;
    ts_load_limits lim;
    ts_image meta, full;
    ts_image_info info;
    ts_err err = {0}, err2 = {0};
    CHECK(ts_open_for_load(path, NULL, &f, &fmt, &lim, &err) == TS_OK);
    if (!f) return;
    ts_status st = ts_jpeg_load_header(f, path, &lim, &meta, &info, &err);
    fclose(f);
    CHECK_MSG(st == want, "%s: status %d, wanted %d (%s)", name, (int)st, (int)want, err.msg);
    ts_status full_st = ts_image_load(path, NULL, &full, &err2);
    if (want != TS_OK) {
        CHECK(full_st == want);   /* the full load refuses it the same way */
        CHECK(strstr(err.msg, name) != NULL);
        return;
    }
    CHECK(full_st == TS_OK);
    CHECK(meta.data == NULL);
    CHECK(info.w == full.w && info.h == full.h && info.c == full.c);
    CHECK_EQ_INT(meta.orientation, full.orientation);
    CHECK(meta.icc_len == full.icc_len && (!meta.icc_len || !memcmp(meta.icc, full.icc, meta.icc_len)));
    CHECK_EQ_INT(meta.exif_len, full.exif_len);
    ts_image_free(&meta);
    ts_image_free(&full);
}

int main(void)
{
    check_header("jpeg/baseline.jpg", TS_OK);
    check_header("jpeg/progressive.jpg", TS_OK);
    check_header("jpeg/icc.jpg", TS_OK);
    check_header("jpeg/orient6.jpg", TS_OK);
    check_header("jpeg/cmyk.jpg", TS_OK);
    check_header("jpeg/grey.jpg", TS_OK);
    check_header("bad/huge.jpg", TS_E_LIMIT);

    char root[4096], plain[8400], out[8400], iccp[8400];
    CHECK(bu_tempdir(root, sizeof root, "bits"));
    snprintf(plain, sizeof plain, "%s/plain.jpg", root);
    snprintf(out, sizeof out, "%s/with-metadata.jpg", root);
    snprintf(iccp, sizeof iccp, "%s/jpeg/test-rgb.icc", TS_TEST_DATA);
    ts_err err = {0};
    ts_image img;
    CHECK(ts_image_alloc(&img, 333, 217, 3, TS_U8, 0, NULL, &err) == TS_OK);
    bu_fill(&img, 9);
    ts_save_opts so = {TS_FMT_JPEG, 90, -1, 0};
    CHECK(ts_image_save(plain, &img, &so, &err) == TS_OK);   /* no metadata: a stand-in for nvJPEG's stream */
    size_t n = 0, icc_len = 0;
    unsigned char *stream = bu_slurp(plain, &n);
    unsigned char *icc = bu_slurp(iccp, &icc_len);
    CHECK(stream && icc && icc_len > 128);
    static const char xmp[] = "<x:xmpmeta xmlns:x='adobe:ns:meta/'>tilestream test</x:xmpmeta>";
    img.orientation = 6;
    img.icc = icc;
    img.icc_len = icc_len;
    img.xmp = (unsigned char *)strdup(xmp);
    img.xmp_len = strlen(xmp);
    bits b = {&img, stream, n};
    CHECK_MSG(ts_write_atomic(out, write_fn, &b, &err) == TS_OK, "%s", err.msg);

    ts_image a, c;
    CHECK(ts_image_load(plain, NULL, &a, &err) == TS_OK);
    CHECK_MSG(ts_image_load(out, NULL, &c, &err) == TS_OK, "%s", err.msg);
    CHECK(same_pixels(&a, &c));
    CHECK_EQ_INT(a.orientation, 1);
    CHECK_EQ_INT(c.orientation, 6);
    CHECK(c.icc_len == icc_len && c.icc && !memcmp(c.icc, icc, icc_len));
    CHECK(c.xmp_len == strlen(xmp) && c.xmp && !memcmp(c.xmp, xmp, c.xmp_len));
    ts_image_free(&a);
    ts_image_free(&c);

    /* GPU decoders take only streams that end with EOI; a progressive
     * file cut short goes to libjpeg-turbo */
    CHECK(ts_jpeg_ends_with_eoi(stream, n));
    CHECK(!ts_jpeg_ends_with_eoi(stream, n - 1));
    CHECK(!ts_jpeg_ends_with_eoi(stream, n / 2));
    CHECK(!ts_jpeg_ends_with_eoi(NULL, 0));
    size_t pn = 0;
    char prog[8400];
    snprintf(prog, sizeof prog, "%s/jpeg/progressive.jpg", TS_TEST_DATA);
    unsigned char *pbytes = bu_slurp(prog, &pn);
    CHECK(pbytes && ts_jpeg_ends_with_eoi(pbytes, pn));
    if (pbytes) CHECK(!ts_jpeg_ends_with_eoi(pbytes, pn - 100));
    free(pbytes);

    /* not a JPEG stream: refused, and no file left behind */
    char bad[8400];
    snprintf(bad, sizeof bad, "%s/bad.jpg", root);
    bits junk = {&img, (const unsigned char *)"not a jpeg", 10};
    CHECK(ts_write_atomic(bad, write_fn, &junk, &err) == TS_E_FORMAT);
    CHECK(strstr(err.msg, "bad.jpg") != NULL);
    CHECK(access(bad, F_OK) != 0);

    free(stream);
    ts_image_free(&img);   /* frees icc and xmp too */
    bu_rmtree(root);
    return check_exit();
}
