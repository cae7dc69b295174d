/* codec_formats.h - (internal) the format codecs that codec.c dispatches
 * to. Each decoder reads from an open FILE, each encoder writes to an open
 * FILE; path is used only for messages. All of them fill err with "path:
 * cause" on failure and leave no allocation behind. */
#ifndef TS_CODEC_FORMATS_H
#define TS_CODEC_FORMATS_H

#include "codec_internal.h"

/* PNG (codec_png.c) */
#define TS_PNG_CHUNK_MAX (8u << 20)     /* the largest ancillary chunk we keep */
ts_status ts_png_probe(FILE *f, const char *path, ts_image_info *info, ts_err *err);
ts_status ts_png_load(FILE *f, const char *path, const ts_load_limits *lim,
                      const ts_allocator *a, ts_image *img, ts_err *err);
ts_status ts_png_save(FILE *f, const char *path, const ts_image *img, int level, ts_err *err);
/* The bytes of f (file_bytes long) that a decode reads: the critical
 * chunks up to IEND, not the ancillary ones it skips or keeps aside. */
uint64_t ts_png_data_bytes(FILE *f, uint64_t file_bytes);
/* The zlib strategy ts_png_save uses for img at level: Z_RLE or Z_DEFAULT_STRATEGY. */
int ts_png_pick_strategy(const ts_image *img, int level);

/* JPEG (codec_jpeg.c) */
#define TS_JPEG_MAX_SCANS 1000
ts_status ts_jpeg_probe(FILE *f, const char *path, ts_image_info *info, ts_err *err);
ts_status ts_jpeg_load(FILE *f, const char *path, const ts_load_limits *lim,
                       const ts_allocator *a, ts_image *img, ts_err *err);
ts_status ts_jpeg_save(FILE *f, const char *path, const ts_image *img,
                       int quality, int progressive, ts_err *err);

/* The bytes of f (file_bytes long) that a decode reads: without the APPn
 * and COM segments before the first scan, and nothing after EOI. */
uint64_t ts_jpeg_data_bytes(FILE *f, uint64_t file_bytes);
/* The scans (SOS markers) of a whole JPEG stream in memory. */
int ts_jpeg_count_scans(const unsigned char *data, size_t len);
/* The header alone, checked against the limits as ts_jpeg_load checks it;
 * meta gets the orientation, ICC, EXIF and XMP but no pixels (for GPU
 * decoders). */
ts_status ts_jpeg_load_header(FILE *f, const char *path, const ts_load_limits *lim, ts_image *meta,
                              ts_image_info *info, ts_err *err);
/* 1 when the stream ends with the EOI marker, as a whole file does. GPU
 * decoders take only such files: one cut short, or with bytes after EOI,
 * goes to libjpeg-turbo, which names any damage (what nvJPEG makes of a
 * truncated progressive file is not pinned down). */
int ts_jpeg_ends_with_eoi(const unsigned char *data, size_t len);
/* Write a JPEG stream made elsewhere (nvJPEG) with img's EXIF, XMP and ICC
 * added after SOI (and JFIF APP0) as the CPU writer stores them. */
ts_status ts_jpeg_write_bitstream(FILE *f, const char *path, const ts_image *img, const unsigned char *bits,
                                  size_t len, ts_err *err);

/* BMP, TGA and HDR through stb_image_write (codec_stb.c); without stb
 * these return TS_E_FORMAT. */
ts_status ts_stb_save(FILE *f, const char *path, const ts_image *img,
                      ts_format format, ts_err *err);

#endif
