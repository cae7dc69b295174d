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

/* JPEG (codec_jpeg.c) */
#define TS_JPEG_MAX_SCANS 1000
ts_status ts_jpeg_probe(FILE *f, const char *path, ts_image_info *info, ts_err *err);
ts_status ts_jpeg_load(FILE *f, const char *path, const ts_load_limits *lim,
                       const ts_allocator *a, ts_image *img, ts_err *err);
ts_status ts_jpeg_save(FILE *f, const char *path, const ts_image *img,
                       int quality, int progressive, ts_err *err);

/* BMP, TGA and HDR through stb_image_write (codec_stb.c); without stb
 * these return TS_E_FORMAT. */
ts_status ts_stb_save(FILE *f, const char *path, const ts_image *img,
                      ts_format format, ts_err *err);

#endif
