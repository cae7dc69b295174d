/* fuzz_common.h - what the libFuzzer targets share: the input as a FILE
 * (fmemopen, so the loaders run exactly as on a file), the limits a real
 * load of a file of that size gets, and encoding into memory. */
#ifndef TS_FUZZ_COMMON_H
#define TS_FUZZ_COMMON_H

#include "codec_formats.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* fmemopen refuses a size of 0; an empty input then reads as no bytes. */
static inline FILE *fuzz_open(const uint8_t *data, size_t size)
{
    static const uint8_t nothing[1];
    return fmemopen((void *)(size ? data : nothing), size ? size : 1, "rb");
}

/* The limits ts_image_load sets for a file of this size at the default
 * settings (the decompression-bomb budget from the bytes the decoder
 * reads, which runs that parser on the input too), with a pixel limit of
 * 4 MP instead of 1 GP and a work budget of 64 passes over 4 MP: a few
 * header bytes can claim any size up to the limits, and decoding
 * (grey-filling, when damage is accepted) a large image or many scans runs
 * the same code as a small one, only slower. test_bombs covers the default
 * limits. f is rewound. */
#define FUZZ_MAX_PIXELS (1u << 22)
static inline ts_load_limits fuzz_limits(FILE *f, int png, size_t size, int accept_damaged)
{
    uint64_t data = png ? ts_png_data_bytes(f, size) : ts_jpeg_data_bytes(f, size);
    rewind(f);
    ts_load_limits lim = { .max_pixels = FUZZ_MAX_PIXELS, .max_bytes = ts_bomb_budget(data), .file_bytes = size,
                           .data_bytes = data, .accept_damaged = accept_damaged,
                           .max_work = 64ull * FUZZ_MAX_PIXELS };
    return lim;
}

/* At most the top-left 128 x 128 pixels of img (a view of its pixels, with
 * its metadata): what the round trips encode. Encoding more pixels runs
 * the same code, only slower; the metadata paths are what can differ. */
static inline ts_image fuzz_crop(const ts_image *img)
{
    ts_image v = *img;
    if (v.w > 128) v.w = 128;
    if (v.h > 128) v.h = 128;
    return v;
}

/* Any failure of a loader must come with a message that names the file. */
static inline void fuzz_check_message(ts_status st, const ts_err *err, const char *path)
{
    if (st != TS_OK && strncmp(err->msg, path, strlen(path)) != 0) {
        fprintf(stderr, "message does not name the file: %s\n", err->msg);
        abort();
    }
}

typedef ts_status (*fuzz_encoder)(FILE *f, const ts_image *img, ts_err *err);

/* Encode img into memory; returns the bytes (malloc'd) or NULL. */
static inline unsigned char *fuzz_encode(const ts_image *img, fuzz_encoder enc, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return NULL;
    ts_err err = {0};
    ts_status st = enc(f, img, &err);
    fclose(f);
    if (st != TS_OK) {
        fprintf(stderr, "re-encoding a decoded image failed: %s\n", err.msg);
        abort();
    }
    *len = n;
    return (unsigned char *)buf;
}

static inline ts_status fuzz_png_encoder(FILE *f, const ts_image *img, ts_err *err)
{
    return ts_png_save(f, "<fuzz>.png", img, 1, err);
}

static inline ts_status fuzz_jpeg_encoder(FILE *f, const ts_image *img, ts_err *err)
{
    return ts_jpeg_save(f, "<fuzz>.jpg", img, 75, 0, err);
}

/* Decode bytes we wrote ourselves: they must load. */
static inline void fuzz_reload(const unsigned char *buf, size_t len, int png, ts_image *out)
{
    FILE *f = fuzz_open(buf, len);
    ts_load_limits lim = { .file_bytes = len, .data_bytes = len };
    ts_err err = {0};
    ts_status st = png ? ts_png_load(f, "<fuzz-out>", &lim, NULL, out, &err)
                       : ts_jpeg_load(f, "<fuzz-out>", &lim, NULL, out, &err);
    fclose(f);
    if (st != TS_OK) {
        fprintf(stderr, "our own output does not load: %s\n", err.msg);
        abort();
    }
}

/* Lossless round trip: the pixels and the ICC profile come back as they were. */
static inline void fuzz_check_same(const ts_image *a, const ts_image *b)
{
    size_t row = (size_t)a->w * ts_pixel_bytes(a);
    if (a->w != b->w || a->h != b->h || a->c != b->c || a->type != b->type)
        abort();
    for (int y = 0; y < a->h; y++)
        if (memcmp(a->data + (size_t)y * a->stride, b->data + (size_t)y * b->stride, row) != 0)
            abort();
}

#endif
