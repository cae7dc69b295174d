/* testimg.h - test helpers for views: random fill, poison, compare, and
 * (with CUDA) device copies. Header-only; include after check.h. */
#ifndef TS_TESTIMG_H
#define TS_TESTIMG_H

#include "check.h"
#include "tsk.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A host view over malloc'd memory covering region (x0, y0, w, h) of a
 * full_w x full_h image. Pitch has a few bytes of slack so that code that
 * assumes pitch == width * pixel size is caught. */
static inline ts_view timg_alloc(int x0, int y0, int w, int h, int full_w, int full_h, int c, ts_type t)
{
    ts_view v;
    memset(&v, 0, sizeof v);
    v.x0 = x0; v.y0 = y0; v.w = w; v.h = h; v.full_w = full_w; v.full_h = full_h;
    v.c = c; v.type = t;
    v.pitch = (size_t)(w > 0 ? w : 1) * (size_t)c * (size_t)t + 8 * (size_t)t;
    v.data = (unsigned char *)malloc(v.pitch * (size_t)(h > 0 ? h : 1));
    return v;
}
static inline ts_view timg_whole(int w, int h, int c, ts_type t) { return timg_alloc(0, 0, w, h, w, h, c, t); }
static inline void timg_free(ts_view *v) { free(v->data); v->data = NULL; }

static inline float timg_get(const ts_view *v, int x, int y, int ch)  /* local coords */
{
    const unsigned char *row = v->data + (size_t)y * v->pitch;
    size_t i = (size_t)x * (size_t)v->c + (size_t)ch;
    switch (v->type) {
    case TS_U8: return row[i];
    case TS_U16: return ((const uint16_t *)row)[i];
    default: return ((const float *)row)[i];
    }
}
static inline void timg_set(ts_view *v, int x, int y, int ch, float val)
{
    unsigned char *row = v->data + (size_t)y * v->pitch;
    size_t i = (size_t)x * (size_t)v->c + (size_t)ch;
    switch (v->type) {
    case TS_U8: row[i] = (unsigned char)val; break;
    case TS_U16: ((uint16_t *)row)[i] = (uint16_t)val; break;
    default: ((float *)row)[i] = val; break;
    }
}

/* Uniform random values over the whole range of the type (F32: 0..1). */
static inline void timg_random(ts_view *v)
{
    for (int y = 0; y < v->h; y++)
        for (int x = 0; x < v->w; x++)
            for (int ch = 0; ch < v->c; ch++) {
                unsigned long long r = check_rand();
                float val = v->type == TS_U8 ? (float)(r & 255)
                          : v->type == TS_U16 ? (float)(r & 65535)
                          : (float)((r >> 11) * (1.0 / 9007199254740992.0));
                timg_set(v, x, y, ch, val);
            }
}

/* Fill every byte (padding too) with a value no correct kernel writes by
 * accident: unwritten pixels then show up as mismatches. */
static inline void timg_poison(ts_view *v) { memset(v->data, 0xA5, v->pitch * (size_t)(v->h > 0 ? v->h : 1)); }

/* Compare two views of the same shape. Returns the largest absolute
 * difference; prints the first few pixels beyond tol (name in messages). */
static inline double timg_compare(const ts_view *got, const ts_view *want, double tol, const char *name)
{
    double worst = 0;
    int shown = 0;
    if (got->w != want->w || got->h != want->h || got->c != want->c || got->type != want->type) {
        fprintf(stderr, "%s: shape differs (%dx%dx%d vs %dx%dx%d)\n", name, got->w, got->h, got->c,
                want->w, want->h, want->c);
        return INFINITY;
    }
    for (int y = 0; y < got->h; y++)
        for (int x = 0; x < got->w; x++)
            for (int ch = 0; ch < got->c; ch++) {
                double a = timg_get(got, x, y, ch), b = timg_get(want, x, y, ch);
                double d = fabs(a - b);
                if (a != a || b != b) d = INFINITY; /* NaN */
                if (d > worst) worst = d;
                if (d > tol && shown < 5) {
                    fprintf(stderr, "%s: (%d,%d) ch %d: got %g want %g\n", name, x + got->x0,
                            y + got->y0, ch, a, b);
                    shown++;
                }
            }
    return worst;
}

static inline const char *timg_type_name(ts_type t) { return t == TS_U8 ? "u8" : t == TS_U16 ? "u16" : "f32"; }

/* r grown by `grow` pixels on every side, clipped to a w x h image: a
 * source larger than needed, as a planner may hand over. */
static inline ts_rect timg_grow(ts_rect r, int grow, int w, int h)
{
    int x0 = r.x0 - grow < 0 ? 0 : r.x0 - grow, y0 = r.y0 - grow < 0 ? 0 : r.y0 - grow;
    int x1 = r.x0 + r.w + grow > w ? w : r.x0 + r.w + grow;
    int y1 = r.y0 + r.h + grow > h ? h : r.y0 + r.h + grow;
    ts_rect g = { x0, y0, x1 - x0, y1 - y0 };
    return g;
}

/* TS_TEST_QUICK=1: small sizes only, for runs under compute-sanitizer. */
static inline int timg_quick(void)
{
    const char *s = getenv("TS_TEST_QUICK");
    return s && atoi(s);
}

#ifdef TS_HAVE_CUDA
#include <cuda_runtime_api.h>

/* 1 when a CUDA device can run the tests; otherwise print why (the test
 * then exits 77 and CTest marks it skipped). */
static inline int timg_gpu_ready(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        fprintf(stderr, "no CUDA device: skipping\n");
        return 0;
    }
    return 1;
}

/* Device copy of a host view (same region and shape, pitched). */
static inline ts_view timg_to_device(const ts_view *h)
{
    ts_view d = *h;
    size_t row = (size_t)h->w * (size_t)h->c * (size_t)h->type;
    if (cudaMallocPitch((void **)&d.data, &d.pitch, row ? row : 1, (size_t)(h->h ? h->h : 1)) != cudaSuccess) {
        d.data = NULL;
        return d;
    }
    if (h->w && h->h) cudaMemcpy2D(d.data, d.pitch, h->data, h->pitch, row, (size_t)h->h, cudaMemcpyHostToDevice);
    cudaDeviceSynchronize(); /* done before any stream, non-blocking ones too, reads it */
    return d;
}
/* Device view of the same shape as h, filled with poison. */
static inline ts_view timg_device_poisoned(const ts_view *h)
{
    ts_view d = timg_to_device(h);
    if (d.data) cudaMemset2D(d.data, d.pitch, 0xA5, (size_t)h->w * (size_t)h->c * (size_t)h->type, (size_t)h->h);
    /* cudaMemset2D runs on the legacy default stream, which does not order
     * itself with non-blocking streams: finish it before a kernel writes. */
    cudaDeviceSynchronize();
    return d;
}
static inline void timg_from_device(ts_view *h, const ts_view *d)
{
    size_t row = (size_t)h->w * (size_t)h->c * (size_t)h->type;
    cudaDeviceSynchronize(); /* every stream's writes first */
    if (h->w && h->h) cudaMemcpy2D(h->data, h->pitch, d->data, d->pitch, row, (size_t)h->h, cudaMemcpyDeviceToHost);
}
static inline void timg_device_free(ts_view *d) { cudaFree(d->data); d->data = NULL; }

/* A device copy of a host view whose rows start `offset` bytes into a
 * pitched allocation (offset > 0 makes rows that are not 16-byte aligned). */
typedef struct timg_dev_view {
    ts_view v;
    unsigned char *base;
} timg_dev_view;

static inline size_t timg_row_bytes(const ts_view *v) { return (size_t)v->w * (size_t)v->c * (size_t)v->type; }

static inline int timg_dev_alloc(timg_dev_view *d, const ts_view *like, size_t offset)
{
    size_t pitch = 0;
    d->v = *like;
    if (cudaMallocPitch((void **)&d->base, &pitch, timg_row_bytes(like) + offset + 1, (size_t)(like->h ? like->h : 1)) !=
        cudaSuccess)
        return 0;
    d->v.data = d->base + offset;
    d->v.pitch = pitch;
    return 1;
}

static inline int timg_dev_upload(timg_dev_view *d, const ts_view *h, size_t offset)
{
    if (!timg_dev_alloc(d, h, offset)) return 0;
    return cudaMemcpy2D(d->v.data, d->v.pitch, h->data, h->pitch, timg_row_bytes(h), (size_t)h->h,
                        cudaMemcpyHostToDevice) == cudaSuccess;
}

static inline int timg_dev_poisoned(timg_dev_view *d, const ts_view *like, size_t offset)
{
    if (!timg_dev_alloc(d, like, offset)) return 0;
    int ok = cudaMemset2D(d->base, d->v.pitch, 0xA5, timg_row_bytes(like) + offset, (size_t)like->h) == cudaSuccess;
    return cudaDeviceSynchronize() == cudaSuccess && ok; /* before kernels on any stream write */
}

static inline int timg_dev_download(ts_view *h, const timg_dev_view *d)
{
    cudaDeviceSynchronize(); /* every stream's writes first */
    return cudaMemcpy2D(h->data, h->pitch, d->v.data, d->v.pitch, timg_row_bytes(h), (size_t)h->h,
                        cudaMemcpyDeviceToHost) == cudaSuccess;
}

static inline void timg_dev_free(timg_dev_view *d) { cudaFree(d->base); d->base = NULL; }

/* Exact equality, row by row; on a mismatch timg_compare names pixels. */
static inline int timg_views_equal(const ts_view *got, const ts_view *want, const char *name)
{
    for (int y = 0; y < got->h; y++)
        if (memcmp(got->data + (size_t)y * got->pitch, want->data + (size_t)y * want->pitch, timg_row_bytes(got))) {
            timg_compare(got, want, 0, name);
            return 0;
        }
    return 1;
}

/* Run op on the GPU with the given version from host src into a poisoned
 * device copy of want's region, and require the result to equal want bit
 * for bit. offset misaligns the device rows (see timg_dev_alloc). */
static inline void timg_gpu_check_exact(const tsk_op *op, int version, const ts_view *src, const ts_view *want,
                                        size_t offset, const char *tag)
{
    timg_dev_view ds, dd;
    ts_view got = timg_alloc(want->x0, want->y0, want->w, want->h, want->full_w, want->full_h, want->c, want->type);
    tsk_launch l = { 0, version, TS_PATH_GLOBAL, 0 };
    ts_err err = { TS_OK, "" };
    char name[200];
    snprintf(name, sizeof name, "%s v%d", tag, version);
    CHECK_MSG(timg_dev_upload(&ds, src, offset) && timg_dev_poisoned(&dd, want, offset), "%s: device buffers", name);
    ts_status st = tsk_gpu_apply(op, &ds.v, &dd.v, &l, &err);
    CHECK_MSG(st == TS_OK, "%s: %s", name, err.msg);
    CHECK_MSG(cudaDeviceSynchronize() == cudaSuccess, "%s: kernel failed", name);
    timg_poison(&got);
    CHECK_MSG(timg_dev_download(&got, &dd), "%s: download", name);
    CHECK_MSG(timg_views_equal(&got, want, name), "%s: differs from the reference", name);
    timg_dev_free(&ds);
    timg_dev_free(&dd);
    timg_free(&got);
}

/* The exact kinds' pattern: src filled at random, the reference run once
 * into a poisoned want, versions v_first..v_last each required to equal it;
 * src and want are freed. */
static inline void timg_check_versions_exact(const tsk_op *op, ts_view *src, ts_view *want, size_t offset,
                                             int v_first, int v_last, const char *tag)
{
    ts_err err = { TS_OK, "" };
    timg_random(src);
    timg_poison(want);
    CHECK_MSG(tsk_ref_apply(op, src, want, &err) == TS_OK, "%s: reference: %s", tag, err.msg);
    for (int v = v_first; v <= v_last; v++) timg_gpu_check_exact(op, v, src, want, offset, tag);
    timg_free(src);
    timg_free(want);
}

/* The version table of kind: at least one version, the default among them,
 * every name starting "vN". Returns the count. */
static inline int timg_check_version_table(tsk_kind kind)
{
    int versions = tsk_version_count(kind);
    CHECK(versions >= 1);
    CHECK(tsk_default_version(kind) >= 1 && tsk_default_version(kind) <= versions);
    for (int v = 1; v <= versions; v++) CHECK(strncmp(tsk_version_name(kind, v), "v", 1) == 0);
    return versions;
}
#endif

#endif
