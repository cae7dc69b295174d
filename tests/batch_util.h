/* batch_util.h - folders of generated photos-like images for the batch
 * tests, and helpers to run ts_batch_run on them and compare outputs. */
#ifndef TS_BATCH_UTIL_H
#define TS_BATCH_UTIL_H

#include "check.h"
#include "tilestream.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Smooth gradients, a few hard edges and noise: content a JPEG codec and
 * a blur treat as they treat photos (never flat, never zeros). */
static inline void bu_fill(ts_image *img, unsigned seed)
{
    for (int y = 0; y < img->h; y++) {
        unsigned char *row = img->data + (size_t)y * img->stride;
        for (int x = 0; x < img->w; x++)
            for (int c = 0; c < img->c; c++) {
                double v = 128 + 90 * sin((x + 7.0 * c + seed) * 0.031) * cos((y - 3.0 * c) * 0.017 + seed);
                if (((x / 37) + (y / 23) + (int)seed) % 7 == 0) v = 40 + 30 * c;
                v += (double)((x * 1103515245u + y * 12345u + seed * 2654435761u) >> 27) - 16;
                row[(size_t)x * (size_t)img->c + (size_t)c] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
    }
}

/* Write one image of w x h x c to dir/name (format from the extension). */
static inline int bu_write(const char *dir, const char *name, int w, int h, int c, unsigned seed)
{
    ts_image img;
    ts_err err = {0};
    char path[8400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (ts_image_alloc(&img, w, h, c, TS_U8, 0, NULL, &err) != TS_OK) return 0;
    bu_fill(&img, seed);
    ts_save_opts so = {TS_FMT_UNKNOWN, 92, -1, seed % 3 == 0};   /* every third JPEG progressive */
    int ok = ts_image_save(path, &img, &so, &err) == TS_OK;
    if (!ok) fprintf(stderr, "%s: %s\n", path, err.msg);
    ts_image_free(&img);
    return ok;
}

/* A fresh temporary folder (mkdtemp); path is written into buf. */
static inline int bu_tempdir(char *buf, size_t n, const char *tag)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(buf, n, "%s/ts-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
    return mkdtemp(buf) != NULL;
}

static inline void bu_rmtree(const char *dir)
{
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* Read a whole file (malloc'd); NULL when it cannot be read. */
static inline unsigned char *bu_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(n > 0 ? (size_t)n : 1);
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) { free(p); p = NULL; }
    fclose(f);
    *len = (size_t)n;
    return p;
}

/* The two images have the same size, layout and pixels (strides may differ). */
static inline int bu_same_pixels(const ts_image *a, const ts_image *b)
{
    if (a->w != b->w || a->h != b->h || a->c != b->c || a->type != b->type) return 0;
    size_t row = (size_t)a->w * ts_pixel_bytes(a);
    for (int y = 0; y < a->h; y++)
        if (memcmp(a->data + (size_t)y * a->stride, b->data + (size_t)y * b->stride, row)) return 0;
    return 1;
}

/* The two files hold the same bytes. */
static inline int bu_same_file(const char *a, const char *b)
{
    size_t la = 0, lb = 0;
    unsigned char *pa = bu_slurp(a, &la), *pb = bu_slurp(b, &lb);
    int same = pa && pb && la == lb && memcmp(pa, pb, la) == 0;
    free(pa);
    free(pb);
    return same;
}

/* Output path of image i of r with its folder part outdir_a replaced by
 * outdir_b (same relative name in another run). */
static inline void bu_other_output(const char *out, const char *outdir_a, const char *outdir_b, char *buf, size_t n)
{
    size_t la = strlen(outdir_a);
    snprintf(buf, n, "%s%s", outdir_b, strncmp(out, outdir_a, la) ? out : out + la);
}

/* Batch options for one input (a folder or file; *input must outlive the
 * run) through chain into outdir on device, the rest at their defaults. */
static inline void bu_folder_opts(ts_batch_opts *o, const char **input, const char *outdir, const char *chain,
                                  ts_device device)
{
    memset(o, 0, sizeof *o);
    o->inputs = input;
    o->n_inputs = 1;
    o->outdir = outdir;
    o->chain_text = chain;
    o->device = device;
    o->png_level = -1;
}

#endif
