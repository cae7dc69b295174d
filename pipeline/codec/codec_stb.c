/* codec_stb.c - BMP, TGA and HDR writers through stb_image_write.
 *
 * stb wants tightly packed 8-bit (BMP, TGA) or float (HDR) pixels, so the
 * image is converted into one packed buffer first: 16-bit to 8-bit by
 * v * 255 / 65535 rounded, and to float for HDR by value / max. What each
 * format keeps: BMP grey/RGB as 24-bit and RGBA as 32-bit (grey+alpha loses
 * its alpha); TGA all four layouts (RLE-compressed); HDR colour only.
 *
 * stb indexes pixels with int arithmetic, so images whose packed size
 * does not fit in an int are refused rather than overflowed.
 *
 * stb is optional at build time (TS_HAVE_STB); without it these formats
 * fail with a message saying so. */
#include "codec_formats.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifdef TS_HAVE_STB

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
/* Not STBI_WRITE_NO_STDIO: in this stb version it also hides the HDR
 * writer. The file variants are compiled but unused (static). */
#define STBIW_ASSERT(x) ((void)0)   /* library code never aborts */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif
#include "stb_image_write.h"
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

typedef struct stb_sink {
    FILE *f;
    int failed;
    int err_no;
} stb_sink;

static void stb_sink_write(void *ctx, void *data, int size)
{
    stb_sink *sink = ctx;
    if (sink->failed || size <= 0)
        return;
    if (fwrite(data, 1, (size_t)size, sink->f) != (size_t)size) {
        sink->failed = 1;
        sink->err_no = errno;
    }
}

static float sample_to_float(const ts_image *img, const unsigned char *row, size_t i)
{
    switch (img->type) {
    case TS_U8: return row[i] / 255.0f;
    case TS_U16: return ((const uint16_t *)row)[i] / 65535.0f;
    case TS_F32: return ((const float *)row)[i];
    }
    return 0.0f;
}

static unsigned char sample_to_u8(const ts_image *img, const unsigned char *row, size_t i)
{
    if (img->type == TS_U8)
        return row[i];
    if (img->type == TS_U16)
        return ts_u16_to_u8(((const uint16_t *)row)[i]);
    float v = ((const float *)row)[i] * 255.0f + 0.5f;
    return !(v > 0.0f) ? 0 : v >= 255.0f ? 255 : (unsigned char)v;
}

/* The image as packed 8-bit samples (as_float = 0) or floats. */
static void *stb_pack(const ts_image *img, int as_float)
{
    size_t n = (size_t)img->w * (size_t)img->c;
    void *out = malloc(n * (size_t)img->h * (as_float ? sizeof(float) : 1));
    if (!out)
        return NULL;
    for (int y = 0; y < img->h; y++) {
        const unsigned char *row = img->data + (size_t)y * img->stride;
        if (as_float) {
            float *dst = (float *)out + (size_t)y * n;
            for (size_t i = 0; i < n; i++)
                dst[i] = sample_to_float(img, row, i);
        } else {
            unsigned char *dst = (unsigned char *)out + (size_t)y * n;
            for (size_t i = 0; i < n; i++)
                dst[i] = sample_to_u8(img, row, i);
        }
    }
    return out;
}

static int stb_encode(stb_sink *sink, const ts_image *img, ts_format format, const void *pixels)
{
    switch (format) {
    case TS_FMT_BMP:
        return stbi_write_bmp_to_func(stb_sink_write, sink, img->w, img->h, img->c, pixels);
    case TS_FMT_TGA:
        return stbi_write_tga_to_func(stb_sink_write, sink, img->w, img->h, img->c, pixels);
    case TS_FMT_HDR:
        return stbi_write_hdr_to_func(stb_sink_write, sink, img->w, img->h, img->c, pixels);
    default:
        return 0;
    }
}

ts_status ts_stb_save(FILE *f, const char *path, const ts_image *img,
                      ts_format format, ts_err *err)
{
    if (format != TS_FMT_BMP && format != TS_FMT_TGA && format != TS_FMT_HDR)
        return ts_err_set(err, TS_E_FORMAT, "%s: stb_image_write does not write %s",
                          path, ts_format_name(format));
    /* 4 bytes per sample covers stb's largest index (floats, 4 channels). */
    if ((uint64_t)img->w * (uint64_t)img->h * 4u * 4u > (uint64_t)INT_MAX - 4096)
        return ts_err_set(err, TS_E_LIMIT, "%s: %dx%d is too large for the %s writer",
                          path, img->w, img->h, ts_format_name(format));

    void *pixels = stb_pack(img, format == TS_FMT_HDR);
    if (!pixels)
        return ts_err_set(err, TS_E_NOMEM, "%s: out of memory converting pixels for %s",
                          path, ts_format_name(format));
    stb_sink sink = {f, 0, 0};
    int ok = stb_encode(&sink, img, format, pixels);
    free(pixels);
    if (sink.failed)
        return ts_err_set(err, TS_E_IO, "%s: cannot write: %s", path, strerror(sink.err_no));
    if (!ok)
        return ts_err_set(err, TS_E_FORMAT, "%s: the %s encoder refused the image",
                          path, ts_format_name(format));
    return TS_OK;
}

#else /* !TS_HAVE_STB */

ts_status ts_stb_save(FILE *f, const char *path, const ts_image *img,
                      ts_format format, ts_err *err)
{
    (void)f;
    (void)img;
    return ts_err_set(err, TS_E_FORMAT,
                      "%s: cannot write %s: this build has no stb_image_write "
                      "(install stb, e.g. Debian's libstb-dev, and rebuild)",
                      path, ts_format_name(format));
}

#endif
