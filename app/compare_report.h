/* compare_report.h - what `tilestream compare` writes: pixel differences,
 * heat maps of them (PNG, with a colour scale and its legend), one
 * self-contained HTML page (table and thumbnails embedded as base64 data
 * URIs) and the same figures as JSON. It takes images and figures, not a
 * device: the pictures and pages can be made (and tested) from images
 * computed anywhere. Uses only the public header. */
#ifndef TS_COMPARE_REPORT_H
#define TS_COMPARE_REPORT_H

#include "tilestream.h"

#include <stdio.h>

typedef struct cmp_diff {
    double max_abs, mean_abs;  /* in channel units (0..255, 0..65535, 0..1) */
    double psnr;               /* dB; INFINITY when equal; NAN when the shapes differ */
} cmp_diff;

/* Difference over every channel of two images of the same shape. */
cmp_diff cmp_diff_images(const ts_image *a, const ts_image *b);

/* One sampling op of the chain on one input, both paths. */
typedef struct cmp_entry {
    const char *input;         /* the file */
    const char *op;            /* the op's text, e.g. "scale=0.3" */
    int in_w, in_h, out_w, out_h, c;
    ts_type type;
    int runs;                  /* timed runs behind each median */
    double global_ms, texture_ms;      /* kernel time, median of the runs (0 = not measured) */
    double global_gbps, texture_gbps;  /* the op's input read once + output written once, over that time */
    cmp_diff g_vs_t, g_vs_ref, t_vs_ref;
    /* Pictures (any may be NULL: the page then leaves the cell empty);
     * wider than 320 they are shrunk for the page. diff_img: the heat map
     * ready to show, or NULL to make it from global_img and texture_img. */
    const ts_image *in_img, *global_img, *texture_img, *diff_img;
} cmp_entry;

/* The heat map of |a - b| (largest over the channels) as an RGB8 image:
 * black (equal) through purple, red and orange to pale yellow (the scale's
 * top, max(largest difference, one step of the type)), with a legend strip
 * under it: the colour bar, and "0" and the top value written on it. The
 * canvas is at least 120 pixels wide so the legend stays legible. max_w > 0
 * shrinks the map to at most max_w wide, each pixel showing the largest
 * difference of the block it covers (a lone differing pixel stays
 * visible). *scale_top gets the top value. */
ts_status cmp_heatmap(const ts_image *a, const ts_image *b, int max_w, ts_image *out, double *scale_top,
                      ts_err *err);

/* img shrunk (area) to at most max_w wide, or a copy when narrower. */
ts_status cmp_thumbnail(const ts_image *img, int max_w, ts_image *out, ts_err *err);

/* Write the heat map of a vs b as a PNG at path. */
ts_status cmp_write_heatmap(const char *path, const ts_image *a, const ts_image *b, ts_err *err);

/* The page: a table of every entry's figures, then per entry thumbnails of
 * the input, both outputs and the heat map of global vs texture. */
ts_status cmp_write_html(const char *path, const char *device, const char *chain, const cmp_entry *e, int n,
                         ts_err *err);

/* The same figures as JSON: {"device", "chain", "entries": [...]}. */
ts_status cmp_write_json(const char *path, const char *device, const char *chain, const cmp_entry *e, int n,
                         ts_err *err);

/* Base64 (RFC 4648, with padding) of n bytes into a malloc'd string. */
char *cmp_base64(const unsigned char *data, size_t n);

#endif
