/* codec_png.c - PNG through libpng.
 *
 * Reading gives what the file holds, made regular: palettes expand to RGB
 * (RGBA with tRNS), grey below 8 bits scales to 8 bits by bit replication,
 * tRNS on grey/RGB becomes an alpha channel, 16-bit stays 16-bit in host
 * byte order. Gamma, sBIT and bKGD are left alone: pixels are as stored.
 *
 * libpng reports errors by calling our handler, which records the message
 * and longjmps back to the one function that called setjmp. That function
 * changes none of its locals after setjmp (everything lives in the context
 * struct of the caller), so nothing is indeterminate after the jump.
 *
 * Memory on hostile files: the size is checked against the limits before
 * libpng allocates anything that depends on it (png_read_update_info
 * allocates two rows), and rows are read one at a time into the image, so
 * no row-pointer array either. Ancillary chunks we do not use are skipped
 * unread; the ones we keep (iCCP, eXIf) may not exceed TS_PNG_CHUNK_MAX. */
#include "codec_formats.h"

#include <errno.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct png_job {
    const char *path;
    FILE *f;
    png_structp png;
    png_infop info;
    char msg[256];          /* libpng's last error message */
    char warning[256];      /* and its last warning */
    int err_no;             /* errno when the error happened (writing) */
    /* reading */
    const ts_load_limits *lim;
    const ts_allocator *alloc;
    ts_image *img;
    ts_image_info *probe;   /* header only */
    /* writing */
    const ts_image *src;
    int level;
    unsigned char *scratch;
    unsigned char *exif;    /* the eXIf block being written */
    char *xmp;              /* the XMP packet being written, NUL-terminated */
    int icc_dropped;        /* libpng would not take the profile */
} png_job;

static void png_on_error(png_structp png, png_const_charp msg)
{
    png_job *job = png_get_error_ptr(png);
    job->err_no = errno;
    snprintf(job->msg, sizeof job->msg, "%s", msg);
    png_longjmp(png, 1);
}

/* Ancillary chunks whose contents we never use: libpng skips them unread
 * (no allocation, CRC still checked), so neither a claimed 2 GB length nor
 * a zTXt that inflates to gigabytes costs memory. */
static const png_byte png_skipped_chunks[] = {
    't', 'E', 'X', 't', '\0', 'z', 'T', 'X', 't', '\0', 'i', 'T', 'X', 't', '\0',
    's', 'P', 'L', 'T', '\0', 's', 'C', 'A', 'L', '\0', 'p', 'C', 'A', 'L', '\0',
    'h', 'I', 'S', 'T', '\0',
};

/* libpng reports a chunk longer than its malloc limit as a "benign" error,
 * which on read is only a warning, and then allocates the claimed length
 * anyway (up to 2 GB) for the chunks it buffers whole. Of those we keep
 * only eXIf and iCCP; for them the warning is fatal. */
#define CHUNK_ID(a, b, c, d) ((png_uint_32)(a) << 24 | (png_uint_32)(b) << 16 | (png_uint_32)(c) << 8 | (png_uint_32)(d))

static int png_chunk_is_buffered(png_uint_32 chunk)
{
    return chunk == CHUNK_ID('e', 'X', 'I', 'f') || chunk == CHUNK_ID('i', 'C', 'C', 'P');
}

/* Other warnings (a bad ancillary chunk, an unknown sRGB profile) change
 * nothing in the pixels; library code does not print. */
static void png_on_warning(png_structp png, png_const_charp msg)
{
    png_job *job = png_get_error_ptr(png);
    snprintf(job->warning, sizeof job->warning, "%s", msg);
    if (strstr(msg, "chunk data is too large") && png_chunk_is_buffered(png_get_io_chunk_type(png)))
        png_error(png, msg);
}

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* ------------------------------------------------------------- reading */

static const char *png_color_name(int color_type)
{
    switch (color_type) {
    case PNG_COLOR_TYPE_GRAY: return "grey";
    case PNG_COLOR_TYPE_GRAY_ALPHA: return "grey+alpha";
    case PNG_COLOR_TYPE_RGB: return "rgb";
    case PNG_COLOR_TYPE_RGB_ALPHA: return "rgba";
    case PNG_COLOR_TYPE_PALETTE: return "palette";
    }
    return "unknown";
}

/* Channels of the decoded image for a colour type, with tRNS as alpha. */
static int png_out_channels(int color_type, int has_trns)
{
    switch (color_type) {
    case PNG_COLOR_TYPE_GRAY: return 1 + has_trns;
    case PNG_COLOR_TYPE_GRAY_ALPHA: return 2;
    case PNG_COLOR_TYPE_RGB: return 3 + has_trns;
    case PNG_COLOR_TYPE_RGB_ALPHA: return 4;
    case PNG_COLOR_TYPE_PALETTE: return 3 + has_trns;
    }
    return 0;
}

static int png_orientation(png_job *job)
{
#ifdef PNG_eXIf_SUPPORTED
    png_uint_32 n = 0;
    png_bytep exif = NULL;
    if (png_get_eXIf_1(job->png, job->info, &n, &exif) && exif) {
        int o = ts_exif_orientation(exif, n);
        if (o)
            return o;
    }
#endif
    return 1;
}

/* Keep the eXIf block for the writers. */
static ts_status png_copy_exif(png_job *job)
{
#ifdef PNG_eXIf_SUPPORTED
    png_uint_32 n = 0;
    png_bytep exif = NULL;
    if (png_get_eXIf_1(job->png, job->info, &n, &exif) && exif && n && !ts_exif_valid(exif, n)) {
        job->img->exif_dropped = 1;
    } else if (exif && n) {
        ts_image src;
        memset(&src, 0, sizeof src);
        src.exif = exif;
        src.exif_len = n;
        return ts_image_copy_metadata(job->img, &src, NULL);
    }
#endif
    return TS_OK;
}

static size_t png_icc_len(png_job *job)
{
    png_charp name;
    int compression;
    png_bytep profile;
    png_uint_32 len = 0;
    if (png_get_iCCP(job->png, job->info, &name, &compression, &profile, &len) && profile)
        return len;
    return 0;
}

static ts_status png_copy_icc(png_job *job)
{
    png_charp name;
    int compression;
    png_bytep profile;
    png_uint_32 len = 0;
    if (!png_get_iCCP(job->png, job->info, &name, &compression, &profile, &len) || !profile || !len)
        return TS_OK;
    job->img->icc = malloc(len);
    if (!job->img->icc)
        return TS_E_NOMEM;
    memcpy(job->img->icc, profile, len);
    job->img->icc_len = len;
    return TS_OK;
}

static void png_read_header(png_job *job)
{
    png_structp png = job->png;
    png_init_io(png, job->f);
    /* libpng's default caps each side at 1e6, which refuses real panoramas.
     * Its replacement is png_check_size: the pixel count and the memory the
     * decode needs, checked right after the header and before libpng or we
     * allocate anything by size (a probe allocates nothing by size). */
    png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
    png_set_chunk_malloc_max(png, TS_PNG_CHUNK_MAX);
    png_set_chunk_cache_max(png, 1000);
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, png_skipped_chunks,
                                (int)(sizeof png_skipped_chunks / 5));
    png_read_info(png, job->info);
}

static void png_probe_body(png_job *job)
{
    png_read_header(job);
    ts_image_info *info = job->probe;
    int ct = png_get_color_type(job->png, job->info);
    int bd = png_get_bit_depth(job->png, job->info);
    int trns = png_get_valid(job->png, job->info, PNG_INFO_tRNS) ? 1 : 0;
    info->w = (int)png_get_image_width(job->png, job->info);
    info->h = (int)png_get_image_height(job->png, job->info);
    info->c = png_out_channels(ct, trns);
    info->type = bd == 16 ? TS_U16 : TS_U8;
    info->bit_depth = bd;
    info->format = TS_FMT_PNG;
    info->orientation = png_orientation(job);
    info->interlaced = png_get_interlace_type(job->png, job->info) != PNG_INTERLACE_NONE;
    info->progressive = 0;
    info->palette = ct == PNG_COLOR_TYPE_PALETTE;
    info->color = png_color_name(ct);
    info->icc_len = png_icc_len(job);
}

/* Ask libpng for the regular layout described at the top of this file. */
static void png_set_read_transforms(png_job *job)
{
    png_structp png = job->png;
    int ct = png_get_color_type(png, job->info);
    int bd = png_get_bit_depth(png, job->info);
    if (ct == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (ct == PNG_COLOR_TYPE_GRAY && bd < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, job->info, PNG_INFO_tRNS))
        png_set_tRNS_to_alpha(png);
    if (bd == 16 && host_is_little_endian())
        png_set_swap(png);
    if (png_get_interlace_type(png, job->info) != PNG_INTERLACE_NONE)
        png_set_interlace_handling(png);
    png_read_update_info(png, job->info);
}

/* The decoded size from the header alone, checked against the limits
 * before png_read_update_info allocates libpng's two row buffers (each as
 * wide as a decoded row, so a 69-byte file claiming a 2^31-pixel row would
 * otherwise cost gigabytes before any check). */
static ts_status png_check_size(png_job *job, ts_err *err)
{
    int ct = png_get_color_type(job->png, job->info);
    int trns = png_get_valid(job->png, job->info, PNG_INFO_tRNS) ? 1 : 0;
    int w = (int)png_get_image_width(job->png, job->info);
    int h = (int)png_get_image_height(job->png, job->info);
    int c = png_out_channels(ct, trns);
    ts_type type = png_get_bit_depth(job->png, job->info) == 16 ? TS_U16 : TS_U8;
    uint64_t row = (uint64_t)w * (uint64_t)c * (uint64_t)type + 1;
    return ts_check_decode_size(job->path, job->lim, w, h, c, type, 2 * row, err);
}

/* Rows one at a time, straight into the image; libpng merges the passes
 * of an interlaced file into the rows it is given. */
static void png_read_pixels(png_job *job)
{
    int passes = png_get_interlace_type(job->png, job->info) != PNG_INTERLACE_NONE
                     ? PNG_INTERLACE_ADAM7_PASSES : 1;
    for (int pass = 0; pass < passes; pass++)
        for (int y = 0; y < job->img->h; y++)
            png_read_row(job->png, job->img->data + (size_t)y * job->img->stride, NULL);
}

/* Everything between setjmp and the end of a successful read. Returns a
 * status for problems we find ourselves; libpng's errors longjmp. */
static ts_status png_load_body(png_job *job, ts_err *err)
{
    png_read_header(job);
    ts_status st = png_check_size(job, err);
    if (st != TS_OK)
        return st;
    png_set_read_transforms(job);

    int w = (int)png_get_image_width(job->png, job->info);
    int h = (int)png_get_image_height(job->png, job->info);
    int c = png_get_channels(job->png, job->info);
    ts_type type = png_get_bit_depth(job->png, job->info) == 16 ? TS_U16 : TS_U8;
    ts_err why;
    st = ts_image_alloc(job->img, w, h, c, type, job->lim->max_pixels, job->alloc, &why);
    if (st != TS_OK)
        return ts_err_set(err, st, "%s: %s", job->path, why.msg);
    if (png_get_rowbytes(job->png, job->info) != job->img->stride)
        return ts_err_set(err, TS_E_FORMAT, "%s: unexpected PNG row layout (%zu bytes, expected %zu)",
                          job->path, (size_t)png_get_rowbytes(job->png, job->info), job->img->stride);
    png_read_pixels(job);
    /* Reading to IEND checks the trailing chunks' CRCs and finds a file
     * cut short after its pixels; an eXIf chunk may also sit there. */
    png_read_end(job->png, job->info);

    job->img->orientation = png_orientation(job);
    if (png_copy_icc(job) != TS_OK || png_copy_exif(job) != TS_OK)
        return ts_err_set(err, TS_E_NOMEM, "%s: out of memory for the ICC profile or EXIF", job->path);
    return TS_OK;
}

static ts_status png_read_error(png_job *job, ts_err *err)
{
    if (ferror(job->f))
        return ts_err_set(err, TS_E_IO, "%s: read error: %s", job->path, strerror(job->err_no));
    if (feof(job->f))
        return ts_err_set(err, TS_E_CORRUPT, "%s: truncated PNG (the file ends early)", job->path);
    return ts_err_set(err, TS_E_CORRUPT, "%s: corrupt PNG: %s", job->path, job->msg);
}

/* The only functions that call setjmp. */
static ts_status png_guarded_load(png_job *job, ts_err *err)
{
    if (setjmp(png_jmpbuf(job->png)))
        return png_read_error(job, err);
    return png_load_body(job, err);
}

static ts_status png_guarded_probe(png_job *job, ts_err *err)
{
    if (setjmp(png_jmpbuf(job->png)))
        return png_read_error(job, err);
    png_probe_body(job);
    return TS_OK;
}

static ts_status png_start_read(png_job *job, ts_err *err)
{
    job->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, job, png_on_error, png_on_warning);
    if (job->png)
        job->info = png_create_info_struct(job->png);
    if (!job->png || !job->info) {
        png_destroy_read_struct(&job->png, &job->info, NULL);
        return ts_err_set(err, TS_E_NOMEM, "%s: out of memory starting the PNG decoder", job->path);
    }
    return TS_OK;
}

uint64_t ts_png_data_bytes(FILE *f, uint64_t file_bytes)
{
    uint64_t at = 8, data = 8;
    unsigned char h[8];
    if (fseek(f, 8, SEEK_SET) != 0) return file_bytes;
    while (at + 12 <= file_bytes && fread(h, 1, 8, f) == 8) {
        uint64_t len = (uint64_t)h[0] << 24 | (uint64_t)h[1] << 16 | (uint64_t)h[2] << 8 | h[3];
        if (len > 0x7fffffffu) break;   /* not PNG: the decoder stops here too */
        if (!(h[4] & 0x20)) data += 12 + len;   /* a critical chunk (upper-case first letter) */
        at += 12 + len;
        if (!memcmp(h + 4, "IEND", 4) || fseek(f, (long)len + 4, SEEK_CUR) != 0) break;
    }
    return data < file_bytes ? data : file_bytes;
}

ts_status ts_png_probe(FILE *f, const char *path, ts_image_info *info, ts_err *err)
{
    png_job job;
    memset(&job, 0, sizeof job);
    job.path = path;
    job.f = f;
    job.probe = info;
    memset(info, 0, sizeof *info);
    ts_status st = png_start_read(&job, err);
    if (st != TS_OK)
        return st;
    st = png_guarded_probe(&job, err);
    png_destroy_read_struct(&job.png, &job.info, NULL);
    return st;
}

ts_status ts_png_load(FILE *f, const char *path, const ts_load_limits *lim,
                      const ts_allocator *a, ts_image *img, ts_err *err)
{
    png_job job;
    memset(&job, 0, sizeof job);
    memset(img, 0, sizeof *img);
    job.path = path;
    job.f = f;
    job.lim = lim;
    job.alloc = a;
    job.img = img;
    ts_status st = png_start_read(&job, err);
    if (st != TS_OK)
        return st;
    st = png_guarded_load(&job, err);
    png_destroy_read_struct(&job.png, &job.info, NULL);
    if (st == TS_OK)
        ts_png_text_read(f, img);   /* text chunks libpng skipped, within a budget */
    if (st != TS_OK)
        ts_image_free(img);
    return st;
}

/* ------------------------------------------------------------- writing */

static const int png_color_types[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                       PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};

/* A float row as 16-bit samples: value * 65535, rounded and clamped. */
static void png_row_from_float(const ts_image *img, int y, uint16_t *out)
{
    const float *in = (const float *)(img->data + (size_t)y * img->stride);
    size_t n = (size_t)img->w * (size_t)img->c;
    for (size_t i = 0; i < n; i++) {
        float v = in[i] * 65535.0f + 0.5f;
        out[i] = !(v > 0.0f) ? 0 : v >= 65535.0f ? 65535 : (uint16_t)v;
    }
}

/* Carry the input's ICC profile. libpng checks a profile before writing
 * it, and two of its checks would lose the image rather than the profile:
 * it refuses, as an error, the profiles it lists as "known incorrect sRGB"
 * (the 1998 HP-Microsoft sRGB profile that many real photos carry, and
 * which every other reader accepts), and it errors on any profile it finds
 * malformed. So the sRGB list check is skipped (the profile is carried
 * as is), and libpng's application errors are made warnings: a profile it
 * still rejects is dropped and the image written without it
 * (job->icc_dropped says so). */
static void png_write_icc(png_job *job)
{
    const ts_image *img = job->src;
    if (!img->icc || !ts_icc_fits(img->icc, img->icc_len, img->c) || img->icc_len > 0xffffffffu)
        return;
#if defined(PNG_SET_OPTION_SUPPORTED) && defined(PNG_SKIP_sRGB_CHECK_PROFILE)
    png_set_option(job->png, PNG_SKIP_sRGB_CHECK_PROFILE, PNG_OPTION_ON);
#endif
    /* Left on afterwards: turning it off would also turn libpng's default
     * application warnings into errors. */
    png_set_benign_errors(job->png, 1);
    png_set_iCCP(job->png, job->info, "ICC profile", PNG_COMPRESSION_TYPE_BASE, img->icc,
                 (png_uint_32)img->icc_len);
    job->icc_dropped = !png_get_valid(job->png, job->info, PNG_INFO_iCCP);
}

/* A PNG input's text chunks (png_text.c), as they were: Latin-1 ones as
 * tEXt, UTF-8 ones as iTXt, compressed when long. libpng copies them. */
static void png_write_text(png_job *job)
{
#ifdef PNG_TEXT_SUPPORTED
    const ts_image *img = job->src;
    if (!img->text || !img->text_len) return;
    const unsigned char *end = img->text + img->text_len;
    ts_png_text_rec r;
    int n = 0;
    for (const unsigned char *at = img->text; (at = ts_png_text_next(at, end, &r)) != NULL;) n++;
    png_text *texts = n ? calloc((size_t)n, sizeof *texts) : NULL;
    if (!texts) return;
    int i = 0;
    for (const unsigned char *at = img->text; i < n && (at = ts_png_text_next(at, end, &r)) != NULL; i++) {
        int long_text = strlen(r.text) > 1024;
        texts[i].key = (png_charp)r.key;
        texts[i].text = (png_charp)r.text;
        texts[i].lang = (png_charp)r.lang;
        texts[i].lang_key = (png_charp)r.lang_key;
        if (r.kind == 'i') texts[i].compression = long_text ? PNG_ITXT_COMPRESSION_zTXt : PNG_ITXT_COMPRESSION_NONE;
        else texts[i].compression = long_text ? PNG_TEXT_COMPRESSION_zTXt : PNG_TEXT_COMPRESSION_NONE;
    }
    png_set_text(job->png, job->info, texts, n);
    free(texts);
#else
    (void)job;
#endif
}

/* The input's EXIF (its orientation tag set to the image's orientation)
 * as eXIf, and its XMP packet as the iTXt chunk XMP readers look for. The
 * buffers must live until png_write_info; the job frees them. XMP and
 * text chunks of PNG inputs are read by png_text.c, not by libpng. */
static void png_write_metadata(png_job *job)
{
    const ts_image *img = job->src;
#ifdef PNG_eXIf_SUPPORTED
    size_t len = 0;
    job->exif = ts_exif_for_output(img, &len);
    if (job->exif && len <= 0x7fffffff)
        png_set_eXIf_1(job->png, job->info, (png_uint_32)len, job->exif);
#endif
#ifdef PNG_iTXt_SUPPORTED
    /* libpng takes the text's length from strlen: a terminated copy. */
    if (img->xmp && img->xmp_len && (job->xmp = malloc(img->xmp_len + 1)) != NULL) {
        memcpy(job->xmp, img->xmp, img->xmp_len);
        job->xmp[img->xmp_len] = '\0';
        png_text text;
        memset(&text, 0, sizeof text);
        text.compression = PNG_ITXT_COMPRESSION_NONE;
        text.key = (png_charp)TS_XMP_PNG_KEY;
        text.text = (png_charp)job->xmp;
        text.lang = (png_charp)"";
        text.lang_key = (png_charp)"";
        png_set_text(job->png, job->info, &text, 1);
    }
#endif
    png_write_text(job);
}

/* One row through PNG's Paeth filter (the type byte, then the residuals),
 * as the writer will filter it; prev is NULL for an image's first row. */
static void paeth_row(const unsigned char *row, const unsigned char *prev, size_t n, size_t bpp, unsigned char *out)
{
    out[0] = 4;
    for (size_t x = 0; x < n; x++) {
        int a = x >= bpp ? row[x - bpp] : 0, b = prev ? prev[x] : 0, c = prev && x >= bpp ? prev[x - bpp] : 0;
        int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
        int pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
        out[1 + x] = (unsigned char)(row[x] - pred);
    }
}

static size_t deflated_size(const unsigned char *in, size_t n, int level, int strategy, unsigned char *out, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level, Z_DEFLATED, 15, 8, strategy) != Z_OK) return (size_t)-1;
    z.next_in = (unsigned char *)in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int r = deflate(&z, Z_FINISH);
    size_t got = r == Z_STREAM_END ? (size_t)z.total_out : (size_t)-1;
    deflateEnd(&z);
    return got;
}

/* zlib's strategy for this image. Z_RLE (matches at distance one only) is
 * much faster than the default strategy on photographs and mostly makes
 * smaller files there, but larger ones on some, and on graphics (flat
 * fills, text), so neither strategy fits every image
 * (docs/measurements/pipeline.md). So bands of rows
 * spread over the image, Paeth-filtered as the writer will filter them,
 * are deflated both ways and Z_RLE is taken when it is no larger than
 * 1.02x the default. Images under 1 MB, 16-bit ones (written byte-swapped:
 * a sample of the bytes in memory would mislead) and failures keep the
 * default. */
int ts_png_pick_strategy(const ts_image *img, int level)
{
    enum { BANDS = 8, BAND_ROWS = 8 };
    size_t bpp = (size_t)img->c, n = (size_t)img->w * bpp;
    if (level < 1 || img->type != TS_U8 || n * (size_t)img->h < ((size_t)1 << 20) || img->h < BANDS * BAND_ROWS)
        return Z_DEFAULT_STRATEGY;
    size_t len = (size_t)BANDS * BAND_ROWS * (n + 1), cap = len + len / 8 + 1024;
    unsigned char *sample = malloc(len), *out = malloc(cap);
    int pick = Z_DEFAULT_STRATEGY;
    if (sample && out) {
        unsigned char *at = sample;
        for (int k = 0; k < BANDS; k++) {
            int y0 = (int)((int64_t)(img->h - BAND_ROWS) * k / (BANDS - 1));
            for (int y = y0; y < y0 + BAND_ROWS; y++, at += n + 1)
                paeth_row(img->data + (size_t)y * img->stride, y ? img->data + (size_t)(y - 1) * img->stride : NULL,
                          n, bpp, at);
        }
        size_t def = deflated_size(sample, len, level, Z_DEFAULT_STRATEGY, out, cap);
        size_t rle = deflated_size(sample, len, level, Z_RLE, out, cap);
        if (def != (size_t)-1 && rle != (size_t)-1 && rle * 50 <= def * 51) pick = Z_RLE;
    }
    free(sample);
    free(out);
    return pick;
}

static void png_write_body(png_job *job)
{
    const ts_image *img = job->src;
    png_structp png = job->png;
    int depth = img->type == TS_U8 ? 8 : 16;
    png_init_io(png, job->f);
    png_set_compression_level(png, job->level);
    /* Paeth alone: it makes files about as small as libpng's adaptive
     * choice among the five filters, which costs a pass of every filter
     * over each row (docs/measurements/pipeline.md). */
    if (job->level > 0) {
        png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_PAETH);
        png_set_compression_strategy(png, ts_png_pick_strategy(img, job->level));
    }
    png_set_IHDR(png, job->info, (png_uint_32)img->w, (png_uint_32)img->h, depth,
                 png_color_types[img->c], PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_icc(job);
    png_write_metadata(job);
    png_write_info(png, job->info);
    if (depth == 16 && host_is_little_endian())
        png_set_swap(png);
    for (int y = 0; y < img->h; y++) {
        if (img->type == TS_F32) {
            png_row_from_float(img, y, (uint16_t *)job->scratch);
            png_write_row(png, job->scratch);
        } else {
            /* libpng copies the row before transforming it, so the image
             * itself is never modified. */
            png_write_row(png, (png_const_bytep)(img->data + (size_t)y * img->stride));
        }
    }
    png_write_end(png, NULL);
}

static ts_status png_write_error(png_job *job, ts_err *err)
{
    if (ferror(job->f))
        return ts_err_set(err, TS_E_IO, "%s: cannot write: %s", job->path, strerror(job->err_no));
    return ts_err_set(err, TS_E_FORMAT, "%s: PNG encoder: %s", job->path, job->msg);
}

static ts_status png_guarded_write(png_job *job, ts_err *err)
{
    if (setjmp(png_jmpbuf(job->png)))
        return png_write_error(job, err);
    png_write_body(job);
    return TS_OK;
}

ts_status ts_png_save(FILE *f, const char *path, const ts_image *img, int level, ts_err *err)
{
    png_job job;
    memset(&job, 0, sizeof job);
    job.path = path;
    job.f = f;
    job.src = img;
    job.level = level;
    if (img->type == TS_F32) {
        job.scratch = malloc((size_t)img->w * (size_t)img->c * 2);
        if (!job.scratch)
            return ts_err_set(err, TS_E_NOMEM, "%s: out of memory for a PNG row", path);
    }
    job.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &job, png_on_error, png_on_warning);
    if (job.png)
        job.info = png_create_info_struct(job.png);
    if (!job.png || !job.info) {
        png_destroy_write_struct(&job.png, &job.info);
        free(job.scratch);
        return ts_err_set(err, TS_E_NOMEM, "%s: out of memory starting the PNG encoder", path);
    }
    ts_status st = png_guarded_write(&job, err);
    png_destroy_write_struct(&job.png, &job.info);
    free(job.scratch);
    free(job.exif);
    free(job.xmp);
    if (st == TS_OK && job.icc_dropped)
        ts_err_set(err, TS_OK, "%s: written without its ICC profile, which libpng rejects (%s)",
                   path, job.warning);
    return st;
}
