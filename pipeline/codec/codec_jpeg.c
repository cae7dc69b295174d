/* codec_jpeg.c - JPEG through libjpeg(-turbo).
 *
 * Reading gives 8-bit grey or RGB. CMYK and YCCK files (from Photoshop and
 * print workflows) are converted to RGB here: libjpeg turns YCCK into CMYK,
 * and Adobe's files store CMYK inverted (255 = no ink), which the APP14
 * marker tells us. The EXIF orientation and the ICC profile are kept.
 *
 * libjpeg reports a fatal error by calling error_exit, which must not
 * return: ours records the message and longjmps to the one function that
 * called setjmp; jpeg_destroy then frees everything libjpeg allocated.
 *
 * libjpeg's warnings mean it met corrupt data and guessed (a truncated
 * file or a damaged segment filled with grey, a bad Huffman code skipped):
 * like `djpeg -strict`, loading treats each one as an error unless the
 * caller accepts damaged files. Warnings about metadata only (a bad ICC
 * marker, an unknown JFIF version) never refuse the pixels. Hostile
 * progressive files can hold thousands of tiny scans that each cost a pass
 * over the whole image; the progress monitor stops after TS_JPEG_MAX_SCANS.
 *
 * Size: before allocating anything by size, the claimed dimensions are
 * checked against the pixel limit and the memory limit (the image plus
 * libjpeg's whole-image coefficient arrays when the file needs them), and,
 * when damaged files are refused, against what the file can hold: see
 * jpeg_file_can_hold. */
#include "codec_formats.h"

#include <errno.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

#define ICC_MARKER (JPEG_APP0 + 2)
#define EXIF_MARKER (JPEG_APP0 + 1)

typedef struct jpeg_job {
    struct jpeg_error_mgr jerr;     /* first: libjpeg hands us &jerr */
    jmp_buf jump;
    struct jpeg_progress_mgr progress;
    const char *path;
    FILE *f;
    ts_status status;               /* what a jump means (set before jumping) */
    int truncated;                  /* the jump was for premature end of data */
    int damaged;                    /* the jump was for a libjpeg warning */
    int accept_damaged;             /* warnings are not fatal */
    int probing;                    /* header only: only the end of the file is fatal */
    char msg[JMSG_LENGTH_MAX];
    int err_no;
    /* reading */
    struct jpeg_decompress_struct d;
    const ts_load_limits *lim;
    const ts_allocator *alloc;
    ts_image *img;
    ts_image_info *probe;           /* header reads: what the header says */
    int work_scan;                  /* the last scan counted in work */
    uint64_t work;                  /* samples decoded so far, summed over scans */
    /* writing */
    struct jpeg_compress_struct cw;
    const ts_image *src;
    int quality, progressive;
} jpeg_job;

static void jpeg_on_error_exit(j_common_ptr cinfo)
{
    jpeg_job *job = (jpeg_job *)cinfo->err;
    job->err_no = errno;
    (*cinfo->err->format_message)(cinfo, job->msg);
    if (cinfo->err->msg_code == JERR_BAD_PRECISION) {
        /* 12- and 16-bit JPEGs are valid files this libjpeg build cannot
         * decode: unsupported, not corrupt. */
        job->status = TS_E_FORMAT;
        snprintf(job->msg, sizeof job->msg,
                 "%d-bit JPEG (data precision %d): not supported, only 8-bit JPEGs are read",
                 cinfo->err->msg_parm.i[0], cinfo->err->msg_parm.i[0]);
    } else if (cinfo->err->msg_code == JERR_IMAGE_TOO_BIG) {
        job->status = TS_E_LIMIT;
        snprintf(job->msg, sizeof job->msg,
                 "the header claims more than libjpeg's limit of %d pixels a side",
                 cinfo->err->msg_parm.i[0]);
    }
    longjmp(job->jump, 1);
}

/* Warnings that concern metadata only; the pixels are as the file says. */
static int jpeg_warning_is_harmless(int code)
{
    return code == JWRN_JFIF_MAJOR || code == JWRN_BOGUS_ICC;
}

static void jpeg_on_message(j_common_ptr cinfo, int level)
{
    jpeg_job *job = (jpeg_job *)cinfo->err;
    int code = cinfo->err->msg_code;
    if (level >= 0)
        return;                     /* trace messages */
    cinfo->err->num_warnings++;
    if (job->accept_damaged || jpeg_warning_is_harmless(code) || (job->probing && code != JWRN_JPEG_EOF))
        return;                     /* keep going, quietly */
    job->status = TS_E_CORRUPT;
    if (code == JWRN_JPEG_EOF)
        job->truncated = 1;
    else
        job->damaged = 1;
    (*cinfo->err->format_message)(cinfo, job->msg);
    longjmp(job->jump, 1);
}

static uint64_t jpeg_blocks(const struct jpeg_decompress_struct *d, int ci);

/* The progress monitor bounds the time a valid file may take: scans
 * counted, and samples decoded summed over them (ts_load_opts.max_work). */
static void jpeg_on_progress(j_common_ptr cinfo)
{
    if (!cinfo->is_decompressor)
        return;
    jpeg_job *job = (jpeg_job *)cinfo->err;
    j_decompress_ptr d = (j_decompress_ptr)cinfo;
    if (d->input_scan_number > TS_JPEG_MAX_SCANS) {
        job->status = TS_E_CORRUPT;
        snprintf(job->msg, sizeof job->msg, "more than %d progressive scans", TS_JPEG_MAX_SCANS);
        longjmp(job->jump, 1);
    }
    if (!job->lim || d->input_scan_number <= 0 || d->comps_in_scan <= 0 || d->input_scan_number == job->work_scan) return;
    /* A new scan: it costs a pass over the samples of its components. */
    job->work_scan = d->input_scan_number;
    uint64_t pass = 0;
    for (int i = 0; i < d->num_components; i++) pass += jpeg_blocks(d, i) * 64;
    for (int i = 0; i < d->comps_in_scan && i < MAX_COMPS_IN_SCAN; i++)
        job->work += (uint64_t)d->cur_comp_info[i]->width_in_blocks * d->cur_comp_info[i]->height_in_blocks * 64;
    uint64_t budget = ts_decode_work_budget(job->lim, pass);
    if (job->work > budget) {
        job->status = TS_E_LIMIT;
        snprintf(job->msg, sizeof job->msg,
                 "decoding would take more than %llu million samples of work (%d scans so far over %ux%u pixels; "
                 "a likely decompression bomb; --max-work raises the limit)",
                 (unsigned long long)(budget / 1000000), d->input_scan_number, (unsigned)d->image_width,
                 (unsigned)d->image_height);
        longjmp(job->jump, 1);
    }
}

static void jpeg_job_init(jpeg_job *job, FILE *f, const char *path)
{
    memset(job, 0, sizeof *job);
    job->path = path;
    job->f = f;
    job->status = TS_E_CORRUPT;
    jpeg_std_error(&job->jerr);
    job->jerr.error_exit = jpeg_on_error_exit;
    job->jerr.emit_message = jpeg_on_message;
    job->progress.progress_monitor = jpeg_on_progress;
}

/* ------------------------------------------------------------- reading */

static ts_status jpeg_read_error(jpeg_job *job, ts_err *err)
{
    if (ferror(job->f))
        return ts_err_set(err, TS_E_IO, "%s: read error: %s", job->path, strerror(job->err_no));
    if (job->truncated)
        return ts_err_set(err, TS_E_CORRUPT, "%s: truncated JPEG (the file ends early)", job->path);
    if (job->damaged)
        return ts_err_set(err, TS_E_CORRUPT,
                          "%s: damaged JPEG: %s (refused; --accept-damaged decodes what is there)",
                          job->path, job->msg);
    if (job->status == TS_E_FORMAT || job->status == TS_E_LIMIT)
        return ts_err_set(err, job->status, "%s: %s", job->path, job->msg);
    return ts_err_set(err, job->status, "%s: corrupt JPEG: %s", job->path, job->msg);
}

static const char *jpeg_color_name(J_COLOR_SPACE cs)
{
    switch (cs) {
    case JCS_GRAYSCALE: return "grey";
    case JCS_RGB: return "rgb";
    case JCS_YCbCr: return "ycbcr";
    case JCS_CMYK: return "cmyk";
    case JCS_YCCK: return "ycck";
    default: return "unknown";
    }
}

static int jpeg_is_cmyk(const struct jpeg_decompress_struct *d)
{
    return d->jpeg_color_space == JCS_CMYK || d->jpeg_color_space == JCS_YCCK;
}

static int jpeg_orientation(const struct jpeg_decompress_struct *d)
{
    for (jpeg_saved_marker_ptr m = d->marker_list; m; m = m->next) {
        if (m->marker != EXIF_MARKER || m->data_length < 6 || memcmp(m->data, "Exif\0\0", 6) != 0)
            continue;
        int o = ts_exif_orientation(m->data + 6, m->data_length - 6);
        if (o)
            return o;
    }
    return 1;
}

/* The payload of the first APP1 segment that starts with id (id_len bytes,
 * its NUL included), or NULL. */
static const unsigned char *jpeg_app1(const struct jpeg_decompress_struct *d, const char *id,
                                      size_t id_len, size_t *len)
{
    for (jpeg_saved_marker_ptr m = d->marker_list; m; m = m->next) {
        if (m->marker == EXIF_MARKER && m->data_length > id_len && memcmp(m->data, id, id_len) == 0) {
            *len = m->data_length - id_len;
            return m->data + id_len;
        }
    }
    return NULL;
}

/* Keep the EXIF block and the XMP packet for the writers. */
static ts_status jpeg_copy_metadata(jpeg_job *job)
{
    ts_image src;
    memset(&src, 0, sizeof src);
    src.exif = (unsigned char *)jpeg_app1(&job->d, "Exif\0", 6, &src.exif_len);
    if (src.exif && !ts_exif_valid(src.exif, src.exif_len)) {
        src.exif = NULL;
        job->img->exif_dropped = 1;
    }
    src.xmp = (unsigned char *)jpeg_app1(&job->d, TS_XMP_JPEG_ID, TS_XMP_JPEG_ID_LEN, &src.xmp_len);
    return ts_image_copy_metadata(job->img, &src, NULL);
}

static void jpeg_read_header_and_markers(jpeg_job *job)
{
    struct jpeg_decompress_struct *d = &job->d;
    jpeg_stdio_src(d, job->f);
    jpeg_save_markers(d, EXIF_MARKER, 0xFFFF);
    jpeg_save_markers(d, ICC_MARKER, 0xFFFF);
    jpeg_read_header(d, TRUE);
}

/* What the header says of the file, beside its size: into info. */
static void jpeg_describe(const struct jpeg_decompress_struct *d, ts_image_info *info)
{
    info->type = TS_U8;
    info->bit_depth = d->data_precision;
    info->format = TS_FMT_JPEG;
    info->progressive = d->progressive_mode ? 1 : 0;
    info->color = jpeg_color_name(d->jpeg_color_space);
}

static ts_status jpeg_probe_body(jpeg_job *job, ts_err *err)
{
    struct jpeg_decompress_struct *d = &job->d;
    ts_image_info *info = job->probe;
    jpeg_read_header_and_markers(job);
    info->w = (int)d->image_width;
    info->h = (int)d->image_height;
    info->c = d->jpeg_color_space == JCS_GRAYSCALE ? 1 : 3;
    jpeg_describe(d, info);
    info->orientation = jpeg_orientation(d);
    JOCTET *icc = NULL;
    unsigned int icc_len = 0;
    if (jpeg_read_icc_profile(d, &icc, &icc_len)) {
        info->icc_len = icc_len;
        free(icc);
    }
    return TS_OK;
}

/* One CMYK row to RGB. Adobe files store inverted values (k' = 255 - k),
 * so there R = c' * k' / 255; plain CMYK gives R = (255-c)(255-k)/255. */
static void cmyk_row_to_rgb(const JSAMPLE *in, unsigned char *out, int w, int inverted)
{
    for (int x = 0; x < w; x++, in += 4, out += 3) {
        unsigned k = inverted ? in[3] : 255u - in[3];
        for (int i = 0; i < 3; i++) {
            unsigned v = inverted ? in[i] : 255u - in[i];
            out[i] = (unsigned char)((v * k + 127u) / 255u);
        }
    }
}

static void jpeg_read_rows(jpeg_job *job)
{
    struct jpeg_decompress_struct *d = &job->d;
    ts_image *img = job->img;
    if (jpeg_is_cmyk(d)) {
        JSAMPARRAY cmyk = (*d->mem->alloc_sarray)((j_common_ptr)d, JPOOL_IMAGE,
                                                  d->output_width * 4, 1);
        while (d->output_scanline < d->output_height) {
            unsigned char *row = img->data + (size_t)d->output_scanline * img->stride;
            jpeg_read_scanlines(d, cmyk, 1);
            cmyk_row_to_rgb(cmyk[0], row, img->w, d->saw_Adobe_marker);
        }
        return;
    }
    /* Straight into the image's memory (pinned when the engine asked). */
    while (d->output_scanline < d->output_height) {
        JSAMPROW rows[16];
        JDIMENSION n = d->output_height - d->output_scanline;
        if (n > 16)
            n = 16;
        for (JDIMENSION i = 0; i < n; i++)
            rows[i] = img->data + (size_t)(d->output_scanline + i) * img->stride;
        jpeg_read_scanlines(d, rows, n);
    }
}

/* 8x8 blocks of component ci, as libjpeg lays them out. */
static uint64_t jpeg_blocks(const struct jpeg_decompress_struct *d, int ci)
{
    return (uint64_t)d->comp_info[ci].width_in_blocks * d->comp_info[ci].height_in_blocks;
}

/* libjpeg's whole-image coefficient arrays (one 16-bit coefficient per
 * sample of every component) exist for progressive files and for
 * sequential files whose components come in separate scans. */
static uint64_t jpeg_work_bytes(const struct jpeg_decompress_struct *d)
{
    uint64_t bytes = (uint64_t)d->output_width * 4 * 2;   /* row buffers, CMYK */
    if (!d->progressive_mode && d->comps_in_scan >= d->num_components)
        return bytes;
    for (int ci = 0; ci < d->num_components; ci++)
        bytes += jpeg_blocks(d, ci) * 64 * sizeof(JCOEF);
    return bytes;
}

/* Whether a file of file_bytes can hold the claimed image at all. With
 * Huffman coding every scan codes at least one symbol of at least one bit
 * for every block of every component it covers (a DC difference; an
 * end-of-band run can skip blocks only in AC scans, which may not come
 * first), and the file must have at least one scan over at least one
 * component. So the file needs at least min over components of blocks / 8
 * bytes; a smaller one is truncated for certain, and refusing it before
 * allocating stops a few-KB file from claiming 65535x65535. Arithmetic
 * coding has no such floor (a run of empty blocks costs a fraction of a
 * bit); there only the memory limit applies. */
static int jpeg_file_can_hold(const struct jpeg_decompress_struct *d, uint64_t file_bytes,
                              uint64_t *need)
{
    uint64_t fewest = UINT64_MAX;
    for (int ci = 0; ci < d->num_components; ci++)
        if (jpeg_blocks(d, ci) < fewest)
            fewest = jpeg_blocks(d, ci);
    *need = fewest / 8;
    return d->arith_code || file_bytes == 0 || file_bytes >= *need;
}

static ts_status jpeg_check_size(jpeg_job *job, int c, ts_err *err)
{
    struct jpeg_decompress_struct *d = &job->d;
    ts_status st = ts_check_decode_size(job->path, job->lim, (int)d->output_width,
                                        (int)d->output_height, c, TS_U8, jpeg_work_bytes(d), err);
    uint64_t need;
    if (st == TS_OK && !job->accept_damaged && !jpeg_file_can_hold(d, job->lim->file_bytes, &need))
        st = ts_err_set(err, TS_E_CORRUPT,
                        "%s: truncated JPEG: a %ux%u image needs at least %llu bytes of data, the "
                        "file has %llu", job->path, (unsigned)d->image_width,
                        (unsigned)d->image_height, (unsigned long long)need,
                        (unsigned long long)job->lim->file_bytes);
    return st;
}

/* Grey stays grey, CMYK and YCCK come out as CMYK (jpeg_read_rows makes
 * RGB of it), the rest as RGB. */
static void jpeg_set_out_color_space(struct jpeg_decompress_struct *d)
{
    if (d->jpeg_color_space == JCS_GRAYSCALE)
        d->out_color_space = JCS_GRAYSCALE;
    else if (jpeg_is_cmyk(d))
        d->out_color_space = JCS_CMYK;
    else
        d->out_color_space = JCS_RGB;
}

/* The ICC profile, the orientation, the EXIF block and the XMP packet into
 * job->img. */
static ts_status jpeg_keep_metadata(jpeg_job *job, ts_err *err)
{
    JOCTET *icc = NULL;
    unsigned int icc_len = 0;
    if (jpeg_read_icc_profile(&job->d, &icc, &icc_len) && icc) {
        job->img->icc = icc;
        job->img->icc_len = icc_len;
    }
    job->img->orientation = jpeg_orientation(&job->d);
    if (jpeg_copy_metadata(job) != TS_OK)
        return ts_err_set(err, TS_E_NOMEM, "%s: out of memory for the EXIF and XMP data", job->path);
    return TS_OK;
}

static ts_status jpeg_load_body(jpeg_job *job, ts_err *err)
{
    struct jpeg_decompress_struct *d = &job->d;
    jpeg_read_header_and_markers(job);
    jpeg_set_out_color_space(d);
    if (job->lim->scale_denom > 1) {
        /* DCT scaling: libjpeg-turbo's reduced-size IDCT, ceil(w / denom) wide */
        d->scale_num = 1;
        d->scale_denom = (unsigned int)job->lim->scale_denom;
    }
    jpeg_calc_output_dimensions(d);
    int c = d->out_color_space == JCS_GRAYSCALE ? 1 : 3;

    /* Before jpeg_start_decompress, which allocates whole-image buffers
     * for progressive files. */
    ts_status st = jpeg_check_size(job, c, err);
    if (st != TS_OK)
        return st;
    ts_err why;
    st = ts_image_alloc(job->img, (int)d->output_width, (int)d->output_height, c,
                        TS_U8, job->lim->max_pixels, job->alloc, &why);
    if (st != TS_OK)
        return ts_err_set(err, st, "%s: %s", job->path, why.msg);
    st = jpeg_keep_metadata(job, err);
    if (st != TS_OK)
        return st;

    jpeg_start_decompress(d);
    jpeg_read_rows(job);
    jpeg_finish_decompress(d);
    return TS_OK;
}

/* ------------------------------------------------------- header only
 * For decoders that take the pixels elsewhere (nvJPEG): the limits checked
 * as ts_jpeg_load checks them, and the metadata kept in meta (orientation,
 * ICC, EXIF, XMP; no pixels). */

static ts_status jpeg_header_body(jpeg_job *job, ts_err *err)
{
    struct jpeg_decompress_struct *d = &job->d;
    ts_image_info *info = job->probe;
    jpeg_read_header_and_markers(job);
    jpeg_set_out_color_space(d);
    jpeg_calc_output_dimensions(d);
    info->w = (int)d->output_width;
    info->h = (int)d->output_height;
    info->c = d->out_color_space == JCS_GRAYSCALE ? 1 : 3;
    jpeg_describe(d, info);
    ts_status st = jpeg_check_size(job, info->c, err);
    if (st != TS_OK)
        return st;
    st = jpeg_keep_metadata(job, err);
    info->icc_len = job->img->icc_len;
    info->orientation = job->img->orientation;
    return st;
}

/* ------------------------------------------------------------- readers */

/* What one read takes besides the file: body reads it under the guard. */
typedef struct jpeg_reader {
    ts_status (*body)(jpeg_job *job, ts_err *err);
    const ts_load_limits *lim;      /* NULL for the probe, which checks none */
    const ts_allocator *alloc;
    ts_image *img;                  /* what body fills, if anything; freed when the read fails */
    ts_image_info *info;            /* what the header says, for header reads */
    int probing;                    /* header only: only the end of the file is fatal */
} jpeg_reader;

/* The readers' one call of setjmp (jpeg_guarded_write is the writer's).
 * Even creating the decompressor can fail (out of memory), so it happens
 * after setjmp; jpeg_destroy copes with a half-made struct. */
static ts_status jpeg_guarded_read(jpeg_job *job, ts_status (*body)(jpeg_job *, ts_err *), ts_err *err)
{
    if (setjmp(job->jump))
        return jpeg_read_error(job, err);
    job->d.err = &job->jerr;
    jpeg_create_decompress(&job->d);
    job->d.progress = &job->progress;
    return body(job, err);
}

/* Every read: the job on the heap (libjpeg's structs and the jump buffer
 * are large), its error manager and limits, the body under the guard, and
 * the decompressor destroyed however it ended. */
static ts_status jpeg_read(FILE *f, const char *path, const jpeg_reader *r, ts_err *err)
{
    jpeg_job *job = malloc(sizeof *job);
    if (!job)
        return ts_err_set(err, TS_E_NOMEM, "%s: out of memory starting the JPEG decoder", path);
    jpeg_job_init(job, f, path);
    job->lim = r->lim;
    job->accept_damaged = r->lim ? r->lim->accept_damaged : 0;
    job->alloc = r->alloc;
    job->img = r->img;
    job->probe = r->info;
    job->probing = r->probing;
    ts_status st = jpeg_guarded_read(job, r->body, err);
    jpeg_destroy_decompress(&job->d);
    free(job);
    if (st != TS_OK && r->img)
        ts_image_free(r->img);
    return st;
}

ts_status ts_jpeg_probe(FILE *f, const char *path, ts_image_info *info, ts_err *err)
{
    memset(info, 0, sizeof *info);
    jpeg_reader r = { .body = jpeg_probe_body, .info = info, .probing = 1 };
    return jpeg_read(f, path, &r, err);
}

ts_status ts_jpeg_load(FILE *f, const char *path, const ts_load_limits *lim,
                       const ts_allocator *a, ts_image *img, ts_err *err)
{
    memset(img, 0, sizeof *img);
    jpeg_reader r = { .body = jpeg_load_body, .lim = lim, .alloc = a, .img = img };
    return jpeg_read(f, path, &r, err);
}

ts_status ts_jpeg_load_header(FILE *f, const char *path, const ts_load_limits *lim, ts_image *meta,
                              ts_image_info *info, ts_err *err)
{
    memset(meta, 0, sizeof *meta);
    memset(info, 0, sizeof *info);
    /* the header only: warnings about the data come with the decode */
    jpeg_reader r = { .body = jpeg_header_body, .lim = lim, .img = meta, .info = info, .probing = 1 };
    return jpeg_read(f, path, &r, err);
}

/* ------------------------------------------------------------- writing */

static unsigned char sample_to_u8(const ts_image *img, const unsigned char *row, size_t i)
{
    switch (img->type) {
    case TS_U8:
        return row[i];
    case TS_U16:
        return ts_u16_to_u8(((const uint16_t *)row)[i]);
    case TS_F32: {
        float v = ((const float *)row)[i] * 255.0f + 0.5f;
        return !(v > 0.0f) ? 0 : v >= 255.0f ? 255 : (unsigned char)v;
    }
    }
    return 0;
}

/* Row y as 8-bit grey or RGB, alpha dropped. */
static void jpeg_convert_row(const ts_image *img, int y, int out_c, unsigned char *out)
{
    const unsigned char *row = img->data + (size_t)y * img->stride;
    for (int x = 0; x < img->w; x++)
        for (int i = 0; i < out_c; i++)
            out[x * out_c + i] = sample_to_u8(img, row, (size_t)x * (size_t)img->c + (size_t)i);
}

/* One APP1 segment: id (its NUL included) then data. A segment holds at
 * most 65533 bytes; what does not fit is left out (EXIF falls back to the
 * orientation alone; extended XMP is not written). */
static int jpeg_write_app1(jpeg_job *job, const char *id, size_t id_len, const unsigned char *data,
                           size_t len)
{
    if (len > 65533 - id_len)
        return 0;
    jpeg_write_m_header(&job->cw, EXIF_MARKER, (unsigned int)(id_len + len));
    for (size_t i = 0; i < id_len; i++)
        jpeg_write_m_byte(&job->cw, (unsigned char)id[i]);
    for (size_t i = 0; i < len; i++)
        jpeg_write_m_byte(&job->cw, data[i]);
    return 1;
}

static void jpeg_write_exif(jpeg_job *job)
{
    size_t len = 0;
    unsigned char *exif = ts_exif_for_output(job->src, &len);
    int written = exif && jpeg_write_app1(job, "Exif\0", 6, exif, len);
    free(exif);
    int o = job->src->orientation;
    if (!written && o >= 2 && o <= 8) {
        unsigned char block[TS_EXIF_ORIENT_BYTES];
        len = ts_exif_make_orientation(block, o);
        jpeg_write_app1(job, "Exif\0", 6, block, len);
    }
}

static void jpeg_write_extras(jpeg_job *job)
{
    const ts_image *img = job->src;
    jpeg_write_exif(job);
    if (img->xmp && img->xmp_len)
        jpeg_write_app1(job, TS_XMP_JPEG_ID, TS_XMP_JPEG_ID_LEN, img->xmp, img->xmp_len);
    if (img->icc && ts_icc_fits(img->icc, img->icc_len, img->c))
        jpeg_write_icc_profile(&job->cw, img->icc, (unsigned int)img->icc_len);
}

static void jpeg_write_body(jpeg_job *job)
{
    struct jpeg_compress_struct *cw = &job->cw;
    const ts_image *img = job->src;
    int out_c = img->c >= 3 ? 3 : 1;
    jpeg_stdio_dest(cw, job->f);
    cw->image_width = (JDIMENSION)img->w;
    cw->image_height = (JDIMENSION)img->h;
    cw->input_components = out_c;
    cw->in_color_space = out_c == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(cw);
    jpeg_set_quality(cw, job->quality, TRUE);
    if (job->progressive)
        jpeg_simple_progression(cw);

    /* Rows go to libjpeg as they are when they already are 8-bit grey or
     * RGB; otherwise each is converted into one scratch row. */
    int direct = img->type == TS_U8 && img->c == out_c;
    JSAMPARRAY scratch = NULL;
    if (!direct)
        scratch = (*cw->mem->alloc_sarray)((j_common_ptr)cw, JPOOL_PERMANENT,
                                           (JDIMENSION)img->w * (JDIMENSION)out_c, 1);
    jpeg_start_compress(cw, TRUE);
    jpeg_write_extras(job);
    while (cw->next_scanline < cw->image_height) {
        int y = (int)cw->next_scanline;
        JSAMPROW row;
        if (direct) {
            row = (JSAMPROW)(img->data + (size_t)y * img->stride);
        } else {
            jpeg_convert_row(img, y, out_c, scratch[0]);
            row = scratch[0];
        }
        jpeg_write_scanlines(cw, &row, 1);
    }
    jpeg_finish_compress(cw);
}

static ts_status jpeg_write_error(jpeg_job *job, ts_err *err)
{
    if (ferror(job->f))
        return ts_err_set(err, TS_E_IO, "%s: cannot write: %s", job->path, strerror(job->err_no));
    return ts_err_set(err, TS_E_FORMAT, "%s: JPEG encoder: %s", job->path, job->msg);
}

static ts_status jpeg_guarded_write(jpeg_job *job, ts_err *err)
{
    if (setjmp(job->jump))
        return jpeg_write_error(job, err);
    job->cw.err = &job->jerr;
    jpeg_create_compress(&job->cw);
    jpeg_write_body(job);
    return TS_OK;
}

ts_status ts_jpeg_save(FILE *f, const char *path, const ts_image *img,
                       int quality, int progressive, ts_err *err)
{
    jpeg_job *job = malloc(sizeof *job);
    if (!job)
        return ts_err_set(err, TS_E_NOMEM, "%s: out of memory starting the JPEG encoder", path);
    jpeg_job_init(job, f, path);
    job->src = img;
    job->quality = quality;
    job->progressive = progressive;
    ts_status st = jpeg_guarded_write(job, err);
    jpeg_destroy_compress(&job->cw);
    free(job);
    return st;
}

/* ------------------------------------------------- a finished bitstream
 * An encoder elsewhere (nvJPEG) made bits: write them with img's EXIF,
 * XMP and ICC profile as the CPU writer stores them, inserted after SOI
 * and the JFIF APP0 segment when there is one. */

static int put_segment(FILE *f, int marker, const char *id, size_t id_len, const unsigned char *head, size_t head_len,
                       const unsigned char *data, size_t len)
{
    size_t total = 2 + id_len + head_len + len;
    if (total > 65535)
        return 1;   /* does not fit in a segment: left out, as jpeg_write_app1 does */
    unsigned char hdr[4] = {0xFF, (unsigned char)marker, (unsigned char)(total >> 8), (unsigned char)total};
    return fwrite(hdr, 1, 4, f) == 4 && fwrite(id, 1, id_len, f) == id_len &&
           (!head_len || fwrite(head, 1, head_len, f) == head_len) && fwrite(data, 1, len, f) == len;
}

/* The ICC profile in APP2 chunks of at most 65519 bytes ("ICC_PROFILE\0",
 * sequence number, count), as libjpeg's jpeg_write_icc_profile does. */
static int put_icc(FILE *f, const unsigned char *icc, size_t len)
{
    const size_t chunk = 65519;
    size_t n = (len + chunk - 1) / chunk;
    if (n > 255)
        return 1;
    for (size_t i = 0; i < n; i++) {
        size_t part = len - i * chunk < chunk ? len - i * chunk : chunk;
        unsigned char seq[2] = {(unsigned char)(i + 1), (unsigned char)n};
        if (!put_segment(f, JPEG_APP0 + 2, "ICC_PROFILE", 12, seq, 2, icc + i * chunk, part))
            return 0;
    }
    return 1;
}

/* Where the first EOI after offset from ends (its last byte + 1), or 0. */
static uint64_t jpeg_find_eoi(FILE *f, uint64_t from)
{
    unsigned char buf[1 << 16];
    int prev_ff = 0;
    uint64_t at = from;
    size_t n;
    if (fseek(f, (long)from, SEEK_SET) != 0) return 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        if (prev_ff && buf[0] == 0xD9) return at + 1;
        for (const unsigned char *p = buf; (p = memchr(p, 0xFF, n - (size_t)(p - buf))) != NULL; p++)
            if ((size_t)(p - buf) + 1 < n && p[1] == 0xD9) return at + (uint64_t)(p - buf) + 2;
        prev_ff = buf[n - 1] == 0xFF;
        at += n;
    }
    return 0;
}

uint64_t ts_jpeg_data_bytes(FILE *f, uint64_t file_bytes)
{
    uint64_t at = 2, skipped = 0;
    unsigned char m[4];
    if (fseek(f, 2, SEEK_SET) != 0) return file_bytes;
    /* the segments before the first scan: APPn and COM are metadata */
    while (fread(m, 1, 4, f) == 4 && m[0] == 0xFF && m[1] != 0xDA && m[1] != 0xD9 && m[1] != 0xFF) {
        uint64_t len = (uint64_t)m[2] << 8 | m[3];
        if (len < 2) break;
        if ((m[1] >= 0xE0 && m[1] <= 0xEF) || m[1] == 0xFE) skipped += 2 + len;
        at += 2 + len;
        if (fseek(f, (long)len - 2, SEEK_CUR) != 0) break;
    }
    uint64_t end = file_bytes;
    if (fseek(f, -2, SEEK_END) == 0 && fread(m, 1, 2, f) == 2 && !(m[0] == 0xFF && m[1] == 0xD9)) {
        uint64_t eoi = jpeg_find_eoi(f, at);   /* bytes after EOI, or a file cut short: rare, so read */
        if (eoi) end = eoi;
    }
    return end > skipped ? end - skipped : 0;
}

int ts_jpeg_count_scans(const unsigned char *data, size_t len)
{
    int scans = 0;
    for (const unsigned char *p = data; len > 1 && (p = memchr(p, 0xFF, len - 1 - (size_t)(p - data))) != NULL; p++)
        scans += p[1] == 0xDA;
    return scans;
}

int ts_jpeg_ends_with_eoi(const unsigned char *data, size_t len)
{
    return data && len >= 4 && data[len - 2] == 0xFF && data[len - 1] == 0xD9;
}

ts_status ts_jpeg_write_bitstream(FILE *f, const char *path, const ts_image *img, const unsigned char *bits,
                                  size_t len, ts_err *err)
{
    if (len < 4 || bits[0] != 0xFF || bits[1] != 0xD8)
        return ts_err_set(err, TS_E_FORMAT, "%s: the GPU encoder's output is not a JPEG stream", path);
    size_t head = 2;
    if (bits[2] == 0xFF && bits[3] == JPEG_APP0 && len >= 6)
        head += 2 + (((size_t)bits[4] << 8) | bits[5]);   /* keep JFIF first, as readers expect */
    if (head > len)
        return ts_err_set(err, TS_E_FORMAT, "%s: the GPU encoder's output is cut short", path);
    int ok = fwrite(bits, 1, head, f) == head;
    size_t exif_len = 0;
    unsigned char *exif = ts_exif_for_output(img, &exif_len);
    if (ok && exif)
        ok = put_segment(f, EXIF_MARKER, "Exif\0", 6, NULL, 0, exif, exif_len);
    free(exif);
    if (ok && img->xmp && img->xmp_len)
        ok = put_segment(f, EXIF_MARKER, TS_XMP_JPEG_ID, TS_XMP_JPEG_ID_LEN, NULL, 0, img->xmp, img->xmp_len);
    if (ok && img->icc && ts_icc_fits(img->icc, img->icc_len, img->c))
        ok = put_icc(f, img->icc, img->icc_len);
    if (ok)
        ok = fwrite(bits + head, 1, len - head, f) == len - head;
    return ok ? TS_OK : ts_err_set(err, TS_E_IO, "%s: cannot write: %s", path, strerror(errno));
}
