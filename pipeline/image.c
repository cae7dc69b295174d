/* image.c - pixel memory: allocation with size checks, release through the
 * allocator that made it, and deep copies. */
#include "tilestream.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t ts_pixel_bytes(const ts_image *img)
{
    return (size_t)img->c * (size_t)img->type;
}

static int type_is_valid(ts_type t)
{
    return t == TS_U8 || t == TS_U16 || t == TS_F32;
}

/* Checks the shape and computes the tight row size and the total size
 * without overflowing size_t. */
static ts_status image_sizes(int w, int h, int c, ts_type t, uint64_t max_pixels,
                             size_t *row_bytes, size_t *total, ts_err *err)
{
    if (w <= 0 || h <= 0)
        return ts_err_set(err, TS_E_ARG, "image size %dx%d is not positive", w, h);
    if (c < 1 || c > 4)
        return ts_err_set(err, TS_E_ARG, "%d channels (1 to 4 are supported)", c);
    if (!type_is_valid(t))
        return ts_err_set(err, TS_E_ARG, "unknown sample type %d", (int)t);

    /* w and h are below 2^31, so the pixel count fits in 62 bits. */
    uint64_t pixels = (uint64_t)w * (uint64_t)h;
    if (max_pixels && pixels > max_pixels)
        return ts_err_set(err, TS_E_LIMIT,
                          "image of %dx%d (%llu pixels) is over the limit of %llu pixels",
                          w, h, (unsigned long long)pixels, (unsigned long long)max_pixels);
    size_t pixel = (size_t)c * (size_t)t;
    if ((uint64_t)w > SIZE_MAX / pixel || (uint64_t)w * pixel > SIZE_MAX / (uint64_t)h)
        return ts_err_set(err, TS_E_LIMIT,
                          "image of %dx%d x %zu bytes does not fit in memory", w, h, pixel);
    *row_bytes = (size_t)w * pixel;
    *total = *row_bytes * (size_t)h;
    return TS_OK;
}

ts_status ts_image_alloc(ts_image *img, int w, int h, int c, ts_type t,
                         uint64_t max_pixels, const ts_allocator *a, ts_err *err)
{
    size_t row_bytes = 0, total = 0;
    memset(img, 0, sizeof *img);
    ts_status st = image_sizes(w, h, c, t, max_pixels, &row_bytes, &total, err);
    if (st != TS_OK)
        return st;

    unsigned char *data;
    if (a && a->alloc) {
        data = a->alloc(a->ctx, total);
        img->alloc = *a;
    } else {
        data = malloc(total);
    }
    if (!data) {
        memset(img, 0, sizeof *img);
        return ts_err_set(err, TS_E_NOMEM, "cannot allocate %zu bytes for a %dx%d image",
                          total, w, h);
    }
    img->w = w;
    img->h = h;
    img->c = c;
    img->type = t;
    img->stride = row_bytes;
    img->data = data;
    img->orientation = 1;
    return TS_OK;
}

void ts_image_free(ts_image *img)
{
    if (!img)
        return;
    if (img->data) {
        if (img->alloc.free)
            img->alloc.free(img->alloc.ctx, img->data);
        else
            free(img->data);
    }
    free(img->icc);
    free(img->exif);
    free(img->xmp);
    memset(img, 0, sizeof *img);
}

/* *dst = a copy of src[0..len) unless *dst is already set or len is 0. */
static int copy_blob(unsigned char **dst, size_t *dst_len, const unsigned char *src, size_t len)
{
    if (*dst || !src || !len)
        return 1;
    *dst = malloc(len);
    if (!*dst)
        return 0;
    memcpy(*dst, src, len);
    *dst_len = len;
    return 1;
}

ts_status ts_image_copy_metadata(ts_image *dst, const ts_image *src, ts_err *err)
{
    if (!copy_blob(&dst->icc, &dst->icc_len, src->icc, src->icc_len) ||
        !copy_blob(&dst->exif, &dst->exif_len, src->exif, src->exif_len) ||
        !copy_blob(&dst->xmp, &dst->xmp_len, src->xmp, src->xmp_len))
        return ts_err_set(err, TS_E_NOMEM, "cannot allocate %zu bytes of metadata",
                          src->icc_len + src->exif_len + src->xmp_len);
    return TS_OK;
}

ts_status ts_image_clone(ts_image *dst, const ts_image *src, ts_err *err)
{
    ts_status st = ts_image_alloc(dst, src->w, src->h, src->c, src->type, 0, NULL, err);
    if (st != TS_OK)
        return st;
    size_t row = ts_pixel_bytes(src) * (size_t)src->w;
    for (int y = 0; y < src->h; y++)
        memcpy(dst->data + (size_t)y * dst->stride, src->data + (size_t)y * src->stride, row);
    dst->orientation = src->orientation;
    st = ts_image_copy_metadata(dst, src, err);
    if (st != TS_OK)
        ts_image_free(dst);
    return st;
}
