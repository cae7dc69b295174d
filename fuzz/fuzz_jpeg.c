/* fuzz_jpeg.c - libFuzzer target: the JPEG probe and loader (EXIF
 * orientation and ICC profile parsing included) on arbitrary bytes, at
 * the default limits, strict and accepting damaged data. A successful
 * decode (its top-left 128 x 128 pixels, with its metadata) is written
 * again as PNG (lossless: same pixels back) and as JPEG
 * (it must load back with the same ICC profile, and the EXIF block it had
 * with only the orientation rewritten). The EXIF parsers (orientation and
 * validity) also get the raw bytes. */
#include "fuzz_common.h"

static void round_trip(const ts_image *img)
{
    size_t len;
    unsigned char *png = fuzz_encode(img, fuzz_png_encoder, &len);
    if (png) {
        ts_image back;
        fuzz_reload(png, len, 1, &back);
        fuzz_check_same(img, &back);
        ts_image_free(&back);
        free(png);
    }
    unsigned char *jpg = fuzz_encode(img, fuzz_jpeg_encoder, &len);
    if (jpg) {
        ts_image back;
        fuzz_reload(jpg, len, 0, &back);
        if (back.w != img->w || back.h != img->h || back.c != img->c)
            abort();
        if (img->icc_len && ts_icc_fits(img->icc, img->icc_len, img->c) &&
            (back.icc_len != img->icc_len || memcmp(back.icc, img->icc, img->icc_len) != 0))
            abort();
        if (img->exif && img->exif_len <= 65000 && back.exif_len != img->exif_len &&
            ts_exif_orientation(img->exif, img->exif_len))
            abort();
        if (img->xmp && img->xmp_len <= 65000 &&
            (back.xmp_len != img->xmp_len || memcmp(back.xmp, img->xmp, img->xmp_len) != 0))
            abort();
        ts_image_free(&back);
        free(jpg);
    }
}

static void load(const uint8_t *data, size_t size, int accept_damaged)
{
    const char *path = "<fuzz>";
    ts_err err = {0};
    ts_image img;
    FILE *f = fuzz_open(data, size);
    if (!f)
        return;
    ts_load_limits lim = fuzz_limits(f, 0, size, accept_damaged);
    ts_status st = ts_jpeg_load(f, path, &lim, NULL, &img, &err);
    fclose(f);
    fuzz_check_message(st, &err, path);
    if (st != TS_OK)
        return;
    if (img.orientation < 1 || img.orientation > 8)
        abort();
    ts_image crop = fuzz_crop(&img);
    round_trip(&crop);
    ts_image_free(&img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int o = ts_exif_orientation(data, size);
    if (o < 0 || o > 8)
        abort();
    if (ts_exif_valid(data, size) && size < 8)
        abort();
    /* Rewriting the tag in place: found exactly when it was read. */
    unsigned char *copy = malloc(size ? size : 1);
    if (copy) {
        memcpy(copy, data, size);
        int n = 1 + (int)(size % 8);
        if (ts_exif_set_orientation(copy, size, n) != (o != 0) ||
            (o && ts_exif_orientation(copy, size) != n))
            abort();
        free(copy);
    }

    ts_err err = {0};
    ts_image_info info;
    FILE *f = fuzz_open(data, size);
    if (!f)
        return 0;
    ts_status st = ts_jpeg_probe(f, "<fuzz>", &info, &err);
    fclose(f);
    fuzz_check_message(st, &err, "<fuzz>");

    load(data, size, 0);
    load(data, size, 1);
    return 0;
}
