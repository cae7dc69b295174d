/* fuzz_png.c - libFuzzer target: the PNG probe and loader (with its EXIF
 * parsing) on arbitrary bytes, at the default limits. A successful decode
 * (its top-left 128 x 128 pixels, with its metadata) is written again as PNG (it must load back to the same pixels and
 * profile) and as JPEG (it must load back). */
#include "fuzz_common.h"

static void round_trip(const ts_image *img)
{
    size_t len;
    unsigned char *png = fuzz_encode(img, fuzz_png_encoder, &len);
    if (png) {
        ts_image back;
        fuzz_reload(png, len, 1, &back);
        fuzz_check_same(img, &back);
        int icc_kept = back.icc_len == img->icc_len && (!img->icc_len ||
                       memcmp(back.icc, img->icc, img->icc_len) == 0);
        /* A profile is dropped only when it does not fit the channels. */
        if (!icc_kept && ts_icc_fits(img->icc, img->icc_len, img->c))
            abort();
        ts_image_free(&back);
        free(png);
    }
    unsigned char *jpg = fuzz_encode(img, fuzz_jpeg_encoder, &len);
    if (jpg) {
        ts_image back;
        fuzz_reload(jpg, len, 0, &back);
        if (back.w != img->w || back.h != img->h)
            abort();
        ts_image_free(&back);
        free(jpg);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = "<fuzz>";
    ts_err err = {0};
    ts_image_info info;
    FILE *f = fuzz_open(data, size);
    if (!f)
        return 0;
    ts_status st = ts_png_probe(f, path, &info, &err);
    fuzz_check_message(st, &err, path);

    rewind(f);
    ts_load_limits lim = fuzz_limits(f, 1, size, 0);
    ts_image img;
    st = ts_png_load(f, path, &lim, NULL, &img, &err);
    fclose(f);
    fuzz_check_message(st, &err, path);
    if (st != TS_OK)
        return 0;
    ts_image crop = fuzz_crop(&img);
    round_trip(&crop);
    ts_image_free(&img);
    return 0;
}
