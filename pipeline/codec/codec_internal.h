/* codec_internal.h - (internal) the helpers every format codec shares:
 * sniffing (format.c), decode limits and ICC checks (codec_limits.c), EXIF
 * and XMP (exif.c). The codecs' own entry points are in codec_formats.h. */
#ifndef TS_CODEC_INTERNAL_H
#define TS_CODEC_INTERNAL_H

#include "tilestream.h"

#include <stdio.h>

/* How many bytes sniffing needs, and the format those bytes show
 * (TS_FMT_UNKNOWN when none we know). BMP and HDR are recognised so that
 * the message can say what the file is even though we do not read it. */
#define TS_SNIFF_BYTES 32
ts_format ts_format_sniff(const unsigned char *buf, size_t n);

/* What a decoder may spend on one file, and how strict it is.
 *
 * max_pixels refuses images with more pixels (always set when loading).
 * max_bytes caps the memory the decode needs: the image plus the decoder's
 * own buffers (libjpeg's coefficient arrays for progressive files, libpng's
 * row buffers); 0 = no cap. At the default limits ts_image_load sets it from
 * the file's size (see ts_bomb_budget), so that a small file cannot claim
 * gigabytes. file_bytes is the input's size (0 = unknown). accept_damaged
 * decodes JPEGs that libjpeg can only decode by guessing (corrupt entropy
 * data, a truncated file) instead of refusing them. */
typedef struct ts_load_limits {
    uint64_t max_pixels;
    uint64_t max_bytes;
    uint64_t file_bytes;
    uint64_t data_bytes;    /* of those, what the decoder reads (the bomb budget's base) */
    int accept_damaged;
    int scale_denom;        /* JPEG: decode at 1/scale_denom (1, 2, 4, 8; 0 = 1) */
    uint64_t max_work;      /* as ts_load_opts.max_work (0 = the default) */
} ts_load_limits;

/* The decode-work budget for an image whose every component decoded once
 * is samples_per_pass samples (ts_load_opts.max_work). */
uint64_t ts_decode_work_budget(const ts_load_limits *lim, uint64_t samples_per_pass);

/* The decompression-bomb guard used at the default limits: a decode may
 * need up to TS_BOMB_FLOOR_BYTES whatever the file's size, and beyond
 * that at most TS_BOMB_RATIO bytes per byte of file. Real photos and
 * scans stay far below that ratio (PNG photos 2-4:1, JPEG 5-30:1, flat
 * screenshots up to ~100:1 and under the floor anyway); a zlib bomb reaches
 * 1032:1, a JPEG claiming 30000x30000 from a few KB far more. With this a
 * file under 1 MB never needs more than 256 MiB. */
#define TS_BOMB_FLOOR_BYTES (256ull << 20)
#define TS_BOMB_RATIO 256ull
uint64_t ts_bomb_budget(uint64_t file_bytes);

/* Check an image about to be decoded against the limits: w x h pixels of c
 * channels of type t, plus work_bytes of decoder buffers. Call before any
 * allocation that depends on the size. Fills err with "path: cause". */
ts_status ts_check_decode_size(const char *path, const ts_load_limits *lim, int w, int h, int c,
                               ts_type t, uint64_t work_bytes, ts_err *err);

/* For codecs outside codec.c: open path for reading with its format known
 * and the limits ts_image_load applies (lim filled). */
ts_status ts_open_for_load(const char *path, const ts_load_opts *opts, FILE **f, ts_format *fmt,
                           ts_load_limits *lim, ts_err *err);
/* Write path atomically (temporary file + rename, tracked for Ctrl-C as
 * ts_image_save's are) with fn(f, ctx). */
typedef ts_status (*ts_write_fn)(FILE *f, const char *path, void *ctx, ts_err *err);
ts_status ts_write_atomic(const char *path, ts_write_fn fn, void *ctx, ts_err *err);

/* EXIF (exif.c). tiff points at a TIFF header ("II*\0" or "MM\0*"), as in
 * a PNG eXIf chunk or after "Exif\0\0" in a JPEG APP1 segment. Returns the
 * orientation 1..8, or 0 when there is none or the data is malformed;
 * never reads outside tiff[0..len). */
int ts_exif_orientation(const unsigned char *tiff, size_t len);
/* 1 when the block parses: TIFF header, IFD0 (and the next IFD, and the
 * Exif, GPS and interoperability IFDs) with every entry and value inside
 * it. A block that does not is dropped on load, not copied to outputs. */
int ts_exif_valid(const unsigned char *tiff, size_t len);
/* A minimal big-endian TIFF block holding only the orientation tag, for
 * writers. out must hold TS_EXIF_ORIENT_BYTES bytes; returns that size. */
#define TS_EXIF_ORIENT_BYTES 26
size_t ts_exif_make_orientation(unsigned char *out, int orientation);
/* Rewrite IFD0's orientation value in place; 0 when there is no valid
 * orientation entry (nothing changed). */
int ts_exif_set_orientation(unsigned char *tiff, size_t len, int orientation);
/* The EXIF block a writer stores for img (malloc'd, *len set), or NULL for
 * none: img's own EXIF with its orientation tag set to img->orientation,
 * or, without one, a minimal block when the orientation is not 1. */
unsigned char *ts_exif_for_output(const ts_image *img, size_t *len);

/* XMP in JPEG: an APP1 segment starting with this (29 bytes with the NUL);
 * in PNG: an iTXt chunk with this keyword. */
#define TS_XMP_JPEG_ID "http://ns.adobe.com/xap/1.0/"
#define TS_XMP_JPEG_ID_LEN 29
#define TS_XMP_PNG_KEY "XML:com.adobe.xmp"

/* PNG text chunks (pipeline/codec/png_text.c): read after a decode within
 * TS_PNG_TEXT_MAX bytes of text in all; records iterated for the writer. */
#define TS_PNG_TEXT_MAX (1u << 20)
void ts_png_text_read(FILE *f, ts_image *img);
typedef struct ts_png_text_rec { char kind; const char *key, *lang, *lang_key, *text; } ts_png_text_rec;
/* The record at `at` into r; returns the next position, NULL at the end. */
const unsigned char *ts_png_text_next(const unsigned char *at, const unsigned char *end, ts_png_text_rec *r);

/* The ICC profile's data colour space fits an image of c channels
 * ('GRAY' for 1-2 channels, 'RGB ' for 3-4). Writers embed only those. */
int ts_icc_fits(const unsigned char *icc, size_t len, int c);

/* Read an 8- or 16-bit sample as 8 bits: v * 255 / 65535, rounded. */
static inline unsigned char ts_u16_to_u8(unsigned v)
{
    return (unsigned char)((v * 255u + 32767u) / 65535u);
}

#endif
