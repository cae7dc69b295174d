/* codec_internal.h - (internal) what the format-specific codecs share with
 * the dispatcher in codec.c. Each decoder reads from an open FILE, each
 * encoder writes to an open FILE; path is used only for messages. All of
 * them fill err with "path: cause" on failure and leave no allocation
 * behind. */
#ifndef TS_CODEC_INTERNAL_H
#define TS_CODEC_INTERNAL_H

#include "tilestream.h"

#include <stdio.h>

/* How many bytes sniffing needs, and the format those bytes show
 * (TS_FMT_UNKNOWN when none we know). BMP and HDR are recognised so that
 * the message can say what the file is even though we do not read it. */
#define TS_SNIFF_BYTES 32
ts_format ts_format_sniff(const unsigned char *buf, size_t n);

/* PNG (codec_png.c) */
ts_status ts_png_probe(FILE *f, const char *path, ts_image_info *info, ts_err *err);
ts_status ts_png_load(FILE *f, const char *path, uint64_t max_pixels,
                      const ts_allocator *a, ts_image *img, ts_err *err);
ts_status ts_png_save(FILE *f, const char *path, const ts_image *img, int level, ts_err *err);

/* JPEG (codec_jpeg.c) */
#define TS_JPEG_MAX_SCANS 1000
ts_status ts_jpeg_probe(FILE *f, const char *path, ts_image_info *info, ts_err *err);
ts_status ts_jpeg_load(FILE *f, const char *path, uint64_t max_pixels,
                       const ts_allocator *a, ts_image *img, ts_err *err);
ts_status ts_jpeg_save(FILE *f, const char *path, const ts_image *img,
                       int quality, int progressive, ts_err *err);

/* BMP, TGA and HDR through stb_image_write (codec_stb.c); without stb
 * these return TS_E_FORMAT. */
ts_status ts_stb_save(FILE *f, const char *path, const ts_image *img,
                      ts_format format, ts_err *err);

/* EXIF (exif.c). tiff points at a TIFF header ("II*\0" or "MM\0*"), as in
 * a PNG eXIf chunk or after "Exif\0\0" in a JPEG APP1 segment. Returns the
 * orientation 1..8, or 0 when there is none or the data is malformed;
 * never reads outside tiff[0..len). */
int ts_exif_orientation(const unsigned char *tiff, size_t len);
/* A minimal big-endian TIFF block holding only the orientation tag, for
 * writers. out must hold TS_EXIF_ORIENT_BYTES bytes; returns that size. */
#define TS_EXIF_ORIENT_BYTES 26
size_t ts_exif_make_orientation(unsigned char *out, int orientation);

/* The ICC profile's data colour space fits an image of c channels
 * ('GRAY' for 1-2 channels, 'RGB ' for 3-4). Writers embed only those. */
int ts_icc_fits(const unsigned char *icc, size_t len, int c);

/* Read an 8- or 16-bit sample as 8 bits: v * 255 / 65535, rounded. */
static inline unsigned char ts_u16_to_u8(unsigned v)
{
    return (unsigned char)((v * 255u + 32767u) / 65535u);
}

#endif
