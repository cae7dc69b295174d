/* tilestream.h - the one public header of libtilestream.
 *
 * tilestream loads PNG and JPEG images, runs chains of image operations on
 * the CPU or streams them through the GPU in tiles, and writes the results.
 *
 * Conventions (stb style: a struct and a few functions, no hidden state):
 *   - every function that can fail returns ts_status and, when given a
 *     non-NULL ts_err, fills it with one line naming the file and the cause;
 *   - library code never exits, aborts or prints (the app prints);
 *   - images own their pixels; ts_image_free releases them with the
 *     allocator that made them.
 */
#ifndef TILESTREAM_H
#define TILESTREAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TS_VERSION_STRING "0.1.0"

/* ---------------------------------------------------------------- errors */

typedef enum ts_status {
    TS_OK = 0,
    TS_E_IO,          /* cannot open/read/write/rename a file */
    TS_E_FORMAT,      /* not an image format we read (or cannot write that) */
    TS_E_CORRUPT,     /* truncated or corrupt data */
    TS_E_LIMIT,       /* image larger than the limits (--max-pixels, overflow) */
    TS_E_NOMEM,       /* allocation failed */
    TS_E_ARG,         /* bad argument, op chain or option */
    TS_E_DEVICE,      /* CUDA error or no usable device */
    TS_E_EXISTS,      /* output exists / output would overwrite input */
    TS_E_INTERRUPTED  /* stopped by the user (Ctrl-C) */
} ts_status;

typedef struct ts_err {
    ts_status status;
    char msg[1024];   /* "path: cause", no trailing newline */
} ts_err;

/* Fill err (if not NULL) with printf-style text; returns status. */
ts_status ts_err_set(ts_err *err, ts_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
const char *ts_status_name(ts_status s);

/* ---------------------------------------------------------------- images */

typedef enum ts_type {      /* the value is the size of one channel in bytes */
    TS_U8 = 1,
    TS_U16 = 2,
    TS_F32 = 4
} ts_type;

/* Memory for pixels. The GPU engine passes a pinned-memory pool here so
 * that decoders write straight into pinned memory. */
typedef struct ts_allocator {
    void *(*alloc)(void *ctx, size_t bytes);
    void (*free)(void *ctx, void *p);
    void *ctx;
} ts_allocator;

typedef struct ts_image {
    int w, h;
    int c;              /* 1 grey, 2 grey+alpha, 3 RGB, 4 RGBA */
    ts_type type;
    size_t stride;      /* bytes from one row to the next */
    unsigned char *data;
    int orientation;    /* EXIF orientation 1..8 of the source; 1 = as stored */
    unsigned char *icc; /* ICC profile bytes (malloc'd) or NULL */
    size_t icc_len;
    ts_allocator alloc; /* who owns data (zeroed = malloc/free) */
} ts_image;

/* Bytes of one pixel and the largest channel value (255, 65535, 1.0). */
size_t ts_pixel_bytes(const ts_image *img);
double ts_type_max(ts_type t);

/* Allocate w x h x c pixels of type t, checking for overflow and against
 * max_pixels (0 = no limit). Pixels are uninitialised. */
ts_status ts_image_alloc(ts_image *img, int w, int h, int c, ts_type t,
                         uint64_t max_pixels, const ts_allocator *a, ts_err *err);
void ts_image_free(ts_image *img);
/* Copy pixels, orientation and ICC into a fresh malloc'd image. */
ts_status ts_image_clone(ts_image *dst, const ts_image *src, ts_err *err);

/* ---------------------------------------------------------------- codecs */

typedef enum ts_format {
    TS_FMT_UNKNOWN = 0,
    TS_FMT_PNG,
    TS_FMT_JPEG,
    TS_FMT_BMP,
    TS_FMT_TGA,
    TS_FMT_HDR
} ts_format;

const char *ts_format_name(ts_format f);            /* "png", "jpg", ... */
const char *ts_format_extension(ts_format f);       /* ".png", ".jpg", ... */
ts_format ts_format_from_name(const char *name);    /* "png", "jpeg", "jpg", ... */
ts_format ts_format_from_path(const char *path);    /* by extension */
int ts_format_can_read(ts_format f);                /* PNG and JPEG */

typedef struct ts_image_info {
    int w, h, c;
    ts_type type;
    int bit_depth;      /* bits per sample as stored in the file (1..16) */
    ts_format format;
    int orientation;    /* EXIF 1..8 */
    int interlaced;     /* PNG Adam7 */
    int progressive;    /* JPEG */
    int palette;        /* PNG colour type 3 */
    const char *color;  /* "grey", "grey+alpha", "rgb", "rgba", "cmyk", "ycck", ... */
    size_t icc_len;     /* 0 = no ICC profile */
} ts_image_info;

typedef struct ts_load_opts {
    uint64_t max_pixels;            /* 0 = default limit (TS_DEFAULT_MAX_PIXELS) */
    const ts_allocator *allocator;  /* NULL = malloc */
} ts_load_opts;

#define TS_DEFAULT_MAX_PIXELS (1ull << 30)   /* about 1 gigapixel */

/* Read only the header: size, channels, depth, orientation. */
ts_status ts_image_probe(const char *path, ts_image_info *info, ts_err *err);
/* Decode a PNG or JPEG (detected by content, not name). Pixels are stored
 * as in the file: orientation is recorded, not applied. PNG: palettes
 * expand to RGB(A), tRNS to alpha, grey below 8 bits scales to 8 bits,
 * 16-bit stays TS_U16. JPEG: grey or RGB 8-bit; CMYK/YCCK become RGB. */
ts_status ts_image_load(const char *path, const ts_load_opts *opts,
                        ts_image *img, ts_err *err);

typedef struct ts_save_opts {
    ts_format format;   /* TS_FMT_UNKNOWN = from the path's extension */
    int quality;        /* JPEG 1..100, 0 = 90 */
    int png_level;      /* zlib level 0..9, -1 = default (3) */
    int progressive;    /* JPEG */
} ts_save_opts;

/* Encode to a temporary file beside path, then rename it into place, so a
 * failure never leaves a half-written file. Formats that cannot hold the
 * image's depth or channels get a converted copy (16 -> 8 bits for JPEG,
 * alpha dropped for JPEG, float for HDR). ICC is written to PNG and JPEG. */
ts_status ts_image_save(const char *path, const ts_image *img,
                        const ts_save_opts *opts, ts_err *err);

/* ------------------------------------------------------------ op chains */

typedef struct ts_chain ts_chain;   /* parsed, validated op chain */

/* Parse "matrix=sepia,gauss=sigma=1.5,transpose". On error, err says which
 * token is wrong, shows where, and suggests the nearest op or key. */
ts_status ts_chain_parse(const char *text, ts_chain **out, ts_err *err);
void ts_chain_free(ts_chain *chain);
int ts_chain_length(const ts_chain *chain);
/* Canonical text of the chain with every parameter spelt out. */
const char *ts_chain_describe(const ts_chain *chain);
/* Prepend the transform that applies an EXIF orientation (1 = none). */
ts_status ts_chain_prepend_orientation(ts_chain *chain, int orientation, ts_err *err);

/* One line per op: name, parameters with defaults, description. */
typedef void (*ts_line_fn)(void *ctx, const char *line);
void ts_ops_list(ts_line_fn fn, void *ctx);

/* --------------------------------------------------------------- running */

typedef enum ts_device { TS_DEVICE_AUTO = 0, TS_DEVICE_CPU, TS_DEVICE_GPU } ts_device;
typedef enum ts_path { TS_PATH_GLOBAL = 0, TS_PATH_TEXTURE } ts_path;

/* Apply a chain to a whole image on the CPU with tiles of tile_w x tile_h
 * output pixels (0 = one tile). The result equals the untiled result
 * exactly. out is allocated here (malloc). */
ts_status ts_cpu_run(const ts_chain *chain, const ts_image *in, int tile_w, int tile_h,
                     ts_image *out, ts_err *err);

/* Output size of a chain applied to a w x h image. */
ts_status ts_chain_out_size(const ts_chain *chain, int w, int h, int c,
                            int *out_w, int *out_h, ts_err *err);

/* GPU presence: returns 1 and the device's name when a CUDA device can be
 * used, 0 otherwise (CPU-only build, no driver or no device; why in err). */
int ts_gpu_probe(char *name, size_t name_len, ts_err *err);

#ifdef __cplusplus
}
#endif
#endif /* TILESTREAM_H */
