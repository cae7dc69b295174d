/* codec_test.h - helpers shared by the codec tests: whole-file I/O, a
 * scratch directory, a PNM reader, pixel hashing in the manifest's layout,
 * and random images. Header-only; include after check.h. */
#ifndef TS_CODEC_TEST_H
#define TS_CODEC_TEST_H

#include "check.h"
#include "tilestream.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- files */

/* The whole file in a malloc'd buffer (NULL if unreadable). */
static inline unsigned char *ct_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            unsigned char *bigger = realloc(buf, cap *= 2);
            if (!bigger) { free(buf); buf = NULL; }
            else buf = bigger;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

static inline int ct_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    int ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

/* A fresh directory under $TMPDIR (or /tmp) for this test's outputs. */
static inline void ct_tempdir(char *out, size_t n, const char *name)
{
    const char *base = getenv("TMPDIR");
    snprintf(out, n, "%s/%s.XXXXXX", base && *base ? base : "/tmp", name);
    if (!mkdtemp(out)) {
        perror("mkdtemp");
        exit(1);
    }
}

/* Number of entries in dir other than . and .. (-1 if unreadable). */
static inline int ct_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

/* Remove the files in dir (one level), then dir itself. */
static inline void ct_remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4096];
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            if (rmdir(path) != 0)
                unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

static inline int ct_starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---------------------------------------------------------------- pixels */

static inline unsigned ct_sample(const ts_image *img, int x, int y, int ch)
{
    const unsigned char *row = img->data + (size_t)y * img->stride;
    size_t i = (size_t)x * (size_t)img->c + (size_t)ch;
    return img->type == TS_U16 ? ((const uint16_t *)row)[i] : row[i];
}

static inline void ct_set_sample(ts_image *img, int x, int y, int ch, unsigned v)
{
    unsigned char *row = img->data + (size_t)y * img->stride;
    size_t i = (size_t)x * (size_t)img->c + (size_t)ch;
    if (img->type == TS_U16)
        ((uint16_t *)row)[i] = (uint16_t)v;
    else
        row[i] = (unsigned char)v;
}

/* 64-bit FNV-1a of the pixels: rows top to bottom, samples in order, one
 * byte per 8-bit sample, two bytes big-endian per 16-bit sample (the
 * layout of tests/data/pngsuite.manifest). */
static inline uint64_t ct_hash_pixels(const ts_image *img)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int y = 0; y < img->h; y++)
        for (int x = 0; x < img->w; x++)
            for (int ch = 0; ch < img->c; ch++) {
                unsigned v = ct_sample(img, x, y, ch);
                if (img->type == TS_U16) {
                    h = (h ^ (v >> 8)) * 0x100000001b3ull;
                    h = (h ^ (v & 255)) * 0x100000001b3ull;
                } else {
                    h = (h ^ v) * 0x100000001b3ull;
                }
            }
    return h;
}

/* Same size, channels, type and every sample. */
static inline int ct_same_pixels(const ts_image *a, const ts_image *b)
{
    if (a->w != b->w || a->h != b->h || a->c != b->c || a->type != b->type)
        return 0;
    size_t row = (size_t)a->w * ts_pixel_bytes(a);
    for (int y = 0; y < a->h; y++)
        if (memcmp(a->data + (size_t)y * a->stride, b->data + (size_t)y * b->stride, row))
            return 0;
    return 1;
}

/* An image of random samples with a row stride wider than the pixels, so
 * that writers which ignore stride are caught. */
static inline ts_image ct_random_image(int w, int h, int c, ts_type t)
{
    ts_image img;
    memset(&img, 0, sizeof img);
    img.w = w; img.h = h; img.c = c; img.type = t;
    img.orientation = 1;
    img.stride = (size_t)w * (size_t)c * (size_t)t + 5 * (size_t)t;
    img.data = malloc(img.stride * (size_t)h);
    for (size_t i = 0; i < img.stride * (size_t)h; i++)
        img.data[i] = (unsigned char)check_rand();
    return img;
}

/* A smooth random RGB image (sums of random low-frequency waves), the
 * kind of content JPEG is meant for. */
static inline ts_image ct_smooth_image(int w, int h, int c)
{
    ts_image img = ct_random_image(w, h, c, TS_U8);
    double fx[4][3], fy[4][3], ph[4][3];
    for (int k = 0; k < 4; k++)
        for (int ch = 0; ch < 3; ch++) {
            fx[k][ch] = (double)(check_rand() % 1000) / 1000.0 * 0.08;
            fy[k][ch] = (double)(check_rand() % 1000) / 1000.0 * 0.08;
            ph[k][ch] = (double)(check_rand() % 1000) / 1000.0 * 6.28;
        }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int ch = 0; ch < c; ch++) {
                double v = 128.0;
                for (int k = 0; k < 4; k++)
                    v += 28.0 * sin(fx[k][ch % 3] * x + fy[k][ch % 3] * y + ph[k][ch % 3]);
                ct_set_sample(&img, x, y, ch, (unsigned)(v < 0 ? 0 : v > 255 ? 255 : v + 0.5));
            }
    return img;
}

static inline double ct_psnr(const ts_image *a, const ts_image *b)
{
    double se = 0;
    size_t n = 0;
    for (int y = 0; y < a->h; y++)
        for (int x = 0; x < a->w; x++)
            for (int ch = 0; ch < a->c; ch++, n++) {
                double d = (double)ct_sample(a, x, y, ch) - (double)ct_sample(b, x, y, ch);
                se += d * d;
            }
    if (se == 0)
        return 99.0;
    return 10.0 * log10(255.0 * 255.0 / (se / (double)n));
}

/* ---------------------------------------------------------------- PNM */

/* A binary PGM (P5) or PPM (P6) with maxval 255, as djpeg writes them, as
 * an 8-bit image. Returns 0 on any parse error. */
static inline int ct_read_pnm(const char *path, ts_image *img)
{
    size_t len;
    unsigned char *buf = ct_read_file(path, &len);
    memset(img, 0, sizeof *img);
    if (!buf)
        return 0;
    int fields[3], nf = 0;
    size_t pos = 2;
    int c = len > 2 && buf[0] == 'P' ? (buf[1] == '5' ? 1 : buf[1] == '6' ? 3 : 0) : 0;
    while (c && nf < 3 && pos < len) {
        if (buf[pos] == '#') {
            while (pos < len && buf[pos] != '\n') pos++;
        } else if (buf[pos] >= '0' && buf[pos] <= '9') {
            int v = 0;
            while (pos < len && buf[pos] >= '0' && buf[pos] <= '9') v = v * 10 + (buf[pos++] - '0');
            fields[nf++] = v;
            continue;
        }
        pos++;
    }
    pos++; /* the single whitespace after maxval */
    int ok = c && nf == 3 && fields[2] == 255 &&
             len >= pos + (size_t)fields[0] * (size_t)fields[1] * (size_t)c &&
             ts_image_alloc(img, fields[0], fields[1], c, TS_U8, 0, NULL, NULL) == TS_OK;
    if (ok)
        memcpy(img->data, buf + pos, img->stride * (size_t)img->h);
    free(buf);
    return ok;
}

/* Largest absolute sample difference (-1 if the shapes differ). */
static inline int ct_max_diff(const ts_image *a, const ts_image *b)
{
    if (a->w != b->w || a->h != b->h || a->c != b->c)
        return -1;
    int m = 0;
    for (int y = 0; y < a->h; y++)
        for (int x = 0; x < a->w; x++)
            for (int ch = 0; ch < a->c; ch++) {
                int d = (int)ct_sample(a, x, y, ch) - (int)ct_sample(b, x, y, ch);
                if (d < 0) d = -d;
                if (d > m) m = d;
            }
    return m;
}

#endif
