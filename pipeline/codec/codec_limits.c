/* codec_limits.c - what every format's decoder and encoder checks the same
 * way (codec_internal.h): the decode-size limits, the decompression-bomb
 * budget, and whether an ICC profile fits the image. Kept apart from
 * codec.c so that the format codecs (codec_*.c) depend on these helpers
 * and codec.c depends on the codecs, never both ways. */
#include "codec_internal.h"

#include <string.h>

int ts_icc_fits(const unsigned char *icc, size_t len, int c)
{
    if (!icc || len < 128)
        return 0;
    return memcmp(icc + 16, c <= 2 ? "GRAY" : "RGB ", 4) == 0;
}

uint64_t ts_bomb_budget(uint64_t file_bytes)
{
    if (file_bytes > UINT64_MAX / TS_BOMB_RATIO)
        return UINT64_MAX;
    uint64_t by_ratio = file_bytes * TS_BOMB_RATIO;
    return by_ratio > TS_BOMB_FLOOR_BYTES ? by_ratio : TS_BOMB_FLOOR_BYTES;
}

uint64_t ts_decode_work_budget(const ts_load_limits *lim, uint64_t samples_per_pass)
{
    if (lim->max_work) return lim->max_work;
    uint64_t passes = samples_per_pass > UINT64_MAX / TS_WORK_PASSES ? UINT64_MAX : samples_per_pass * TS_WORK_PASSES;
    return passes > TS_WORK_FLOOR ? passes : TS_WORK_FLOOR;
}

static double megabytes(uint64_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0);
}

ts_status ts_check_decode_size(const char *path, const ts_load_limits *lim, int w, int h, int c,
                               ts_type t, uint64_t work_bytes, ts_err *err)
{
    if (w <= 0 || h <= 0)
        return ts_err_set(err, TS_E_CORRUPT, "%s: image size %dx%d is not positive", path, w, h);
    uint64_t pixels = (uint64_t)w * (uint64_t)h;   /* both below 2^31: no overflow */
    if (lim->max_pixels && pixels > lim->max_pixels)
        return ts_err_set(err, TS_E_LIMIT,
                          "%s: image of %dx%d (%llu pixels) is over the limit of %llu pixels",
                          path, w, h, (unsigned long long)pixels,
                          (unsigned long long)lim->max_pixels);
    /* pixels < 2^62 and c * t <= 16: the product can still overflow, so
     * saturate rather than wrap. */
    uint64_t per_pixel = (uint64_t)c * (uint64_t)t;
    uint64_t need = pixels > UINT64_MAX / per_pixel ? UINT64_MAX : pixels * per_pixel;
    need = need > UINT64_MAX - work_bytes ? UINT64_MAX : need + work_bytes;
    if (lim->max_bytes && need > lim->max_bytes)
        return ts_err_set(err, TS_E_LIMIT,
                          "%s: a %dx%d image from %llu bytes of image data needs %.0f MB to decode, over the "
                          "%.0f MB allowed for that much data (a likely decompression bomb; "
                          "an explicit pixel limit lifts this check)",
                          path, w, h, (unsigned long long)lim->data_bytes, megabytes(need),
                          megabytes(lim->max_bytes));
    return TS_OK;
}
