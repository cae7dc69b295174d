/* test_gpu_conv_util.h - the machinery of the convolution GPU test
 * (test_gpu_conv.c, whose cases are per family): device views inside
 * poisoned guard margins, one op checked on every kernel version against
 * tsk_ref_apply, the largest difference per version and type, and the
 * timing mode. Include after check.h and testimg.h, with CUDA.
 *
 * Environment: TS_CONV_SMALL=1 runs only the small sizes, TS_CONV_SMALL=2
 * a seventh of those (for compute-sanitizer); TS_CONV_TIMING=1 runs only the timing of every version
 * on a 7680x4320 RGBA8 image against a device-to-device copy; TS_CONV_ONLY=v
 * checks version v alone (the others are skipped, not counted). */
#ifndef TS_TEST_GPU_CONV_UTIL_H
#define TS_TEST_GPU_CONV_UTIL_H

#include "check.h"
#include "testimg.h"
#include "tsk.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { GC_MAX_VERSIONS = 24, GC_MARGIN_ROWS = 2, GC_MARGIN = 64 };

static const char *const gc_border_names[] = { "replicate", "reflect101", "reflect", "wrap", "constant" };

/* Largest difference seen per version and type (index = ts_type). */
static double gc_worst[GC_MAX_VERSIONS + 1][5];
static long gc_cases[GC_MAX_VERSIONS + 1][5];

/* Forget the figures of the family before (one run may test both). */
static inline void gc_reset(void)
{
    memset(gc_worst, 0, sizeof gc_worst);
    memset(gc_cases, 0, sizeof gc_cases);
}

static inline int gc_env(const char *name)
{
    const char *s = getenv(name);
    return s && *s && strcmp(s, "0") != 0;
}

static inline int gc_level(const char *name)
{
    const char *s = getenv(name);
    return s ? atoi(s) : 0;
}

/* 1 when version v is to be checked (TS_CONV_ONLY unset, or v). */
static inline int gc_version_wanted(int v)
{
    int only = gc_level("TS_CONV_ONLY");
    return only <= 0 || only == v;
}

static inline size_t gc_px(const ts_view *v) { return (size_t)v->c * (size_t)v->type; }

/* A device view with the region and shape of h, inside a buffer with
 * GC_MARGIN_ROWS rows above and below and GC_MARGIN (+ shift) bytes to the
 * left, all poisoned; shift = 0 keeps the view aligned for vector access,
 * shift = the channel size misaligns it for c = 2, 4. */
typedef struct gc_dev {
    ts_view v;
    unsigned char *base;
    size_t pitch, rows, left;
} gc_dev;

static inline int gc_dev_alloc(gc_dev *d, const ts_view *h, size_t shift)
{
    size_t row = (size_t)(h->w > 0 ? h->w : 1) * gc_px(h);
    memset(d, 0, sizeof *d);
    d->left = GC_MARGIN + shift;
    d->pitch = (d->left + row + GC_MARGIN + 255) / 256 * 256;
    d->rows = (size_t)(h->h > 0 ? h->h : 1) + 2 * GC_MARGIN_ROWS;
    if (cudaMalloc((void **)&d->base, d->pitch * d->rows) != cudaSuccess) return 0;
    cudaMemset(d->base, 0xA5, d->pitch * d->rows);
    /* the memset runs on the legacy default stream, which non-blocking
     * streams do not wait for: finish it before a kernel writes here */
    cudaDeviceSynchronize();
    d->v = *h;
    d->v.pitch = d->pitch;
    d->v.data = d->base + GC_MARGIN_ROWS * d->pitch + d->left;
    return 1;
}

static inline void gc_dev_free(gc_dev *d) { cudaFree(d->base); d->base = NULL; }

static inline int gc_upload(gc_dev *d, const ts_view *h, size_t shift)
{
    if (!gc_dev_alloc(d, h, shift)) return 0;
    if (h->w > 0 && h->h > 0)
        cudaMemcpy2D(d->v.data, d->pitch, h->data, h->pitch, (size_t)h->w * gc_px(h), (size_t)h->h,
                     cudaMemcpyHostToDevice);
    return 1;
}

/* Copy the region back into out (shaped like the region) and count the
 * bytes outside the region that are no longer poison. */
static inline long gc_download(const gc_dev *d, ts_view *out)
{
    unsigned char *all = (unsigned char *)malloc(d->pitch * d->rows);
    size_t row = (size_t)out->w * gc_px(out);
    long touched = 0;
    cudaMemcpy(all, d->base, d->pitch * d->rows, cudaMemcpyDeviceToHost);
    for (size_t y = 0; y < d->rows; y++) {
        const unsigned char *r = all + y * d->pitch;
        int inside = y >= GC_MARGIN_ROWS && y < GC_MARGIN_ROWS + (size_t)out->h;
        for (size_t x = 0; x < d->pitch; x++) {
            if (inside && x >= d->left && x < d->left + row) continue;
            touched += r[x] != 0xA5;
        }
        if (inside) memcpy(out->data + (y - GC_MARGIN_ROWS) * out->pitch, r + d->left, row);
    }
    free(all);
    return touched;
}

/* The region `need` of the whole host image img, as a view of its own. */
static inline ts_view gc_crop(const ts_view *img, ts_rect need)
{
    ts_view v = timg_alloc(need.x0, need.y0, need.w, need.h, img->full_w, img->full_h, img->c, img->type);
    for (int y = 0; y < need.h; y++)
        memcpy(v.data + (size_t)y * v.pitch, img->data + (size_t)(need.y0 + y) * img->pitch + (size_t)need.x0 * gc_px(img),
               (size_t)need.w * gc_px(img));
    return v;
}

/* How a version may differ from the reference: 0 for the bit-exact ones;
 * for fused multiply-add, 1 on integers and tol_f32 on floats. */
typedef struct gc_tol {
    tsk_kind kind;    /* which versions fuse multiply-add: tsk_version_fma */
    double f32;       /* float tolerance of fused versions */
} gc_tol;

static inline double gc_tol_of(const gc_tol *t, int v, ts_type type)
{
    if (!tsk_version_fma(t->kind, v)) return 0.0;
    return type == TS_F32 ? t->f32 : 1.0;
}

/* op on a full_w x full_h image of c channels of `type`, output region
 * `out`: every version against tsk_ref_apply on fresh random input, the
 * source view being exactly tsk_need(out). shift misaligns the views.
 * slot is the coefficient bank used. */
static inline void gc_check_op(const tsk_op *op, int full_w, int full_h, int c, ts_type type, ts_rect out, size_t shift,
                        int slot, const gc_tol *tol, const char *what)
{
    char name[256];
    ts_err err;
    ts_view img = timg_whole(full_w, full_h, c, type);
    ts_rect need = tsk_need(op, full_w, full_h, out);
    timg_random(&img);
    ts_view src = gc_crop(&img, need);
    ts_view ref = timg_alloc(out.x0, out.y0, out.w, out.h, full_w, full_h, c, type);
    ts_view got = timg_alloc(out.x0, out.y0, out.w, out.h, full_w, full_h, c, type);
    timg_poison(&ref);
    err.msg[0] = '\0';
    ts_status st = tsk_ref_apply(op, &src, &ref, &err);
    CHECK_MSG(st == TS_OK, "%s: reference: %s", what, err.msg);
    gc_dev dsrc;
    CHECK(gc_upload(&dsrc, &src, shift));
    int n = tsk_version_count(op->kind);
    CHECK(n >= 1 && n <= GC_MAX_VERSIONS);
    for (int v = 1; v <= n && v <= GC_MAX_VERSIONS; v++) {
        if (!gc_version_wanted(v)) continue;
        gc_dev ddst;
        CHECK(gc_dev_alloc(&ddst, &ref, shift));
        tsk_launch l = { NULL, v, TS_PATH_GLOBAL, slot };
        err.msg[0] = '\0';
        st = tsk_gpu_apply(op, &dsrc.v, &ddst.v, &l, &err);
        cudaError_t ce = cudaDeviceSynchronize();
        snprintf(name, sizeof name, "%s v%d %dx%d region %d,%d %dx%d c%d %s", what, v, full_w, full_h, out.x0,
                 out.y0, out.w, out.h, c, timg_type_name(type));
        CHECK_MSG(st == TS_OK && ce == cudaSuccess, "%s: %s (%s)", name, err.msg, cudaGetErrorString(ce));
        timg_poison(&got);
        long touched = gc_download(&ddst, &got);
        CHECK_MSG(touched == 0, "%s: %ld bytes outside the destination region written", name, touched);
        double d = timg_compare(&got, &ref, gc_tol_of(tol, v, type), name);
        CHECK_MSG(d <= gc_tol_of(tol, v, type), "%s: differs from the reference by %g", name, d);
        if (d > gc_worst[v][type]) gc_worst[v][type] = d;
        gc_cases[v][type]++;
        gc_dev_free(&ddst);
    }
    gc_dev_free(&dsrc);
    timg_free(&img);
    timg_free(&src);
    timg_free(&ref);
    timg_free(&got);
}

static inline void gc_report(tsk_kind kind)
{
    int n = tsk_version_count(kind);
    fprintf(stderr, "largest difference from tsk_ref_apply (cases):\n");
    for (int v = 1; v <= n && v <= GC_MAX_VERSIONS; v++)
        fprintf(stderr, "  %-72s u8 %g (%ld)  u16 %g (%ld)  f32 %.3g (%ld)\n", tsk_version_name(kind, v),
                gc_worst[v][TS_U8], gc_cases[v][TS_U8], gc_worst[v][TS_U16], gc_cases[v][TS_U16],
                gc_worst[v][TS_F32], gc_cases[v][TS_F32]);
}

/* Random taps: positive and normalised (smoothing), or signed with their
 * absolute values summing to 2 (derivatives, sharpening). */
static inline void gc_random_taps(float *k, int n, int positive)
{
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double r = (double)(check_rand() >> 11) / 9007199254740992.0;
        k[i] = (float)(positive ? 0.05 + r : 2 * r - 1);
        sum += fabs(k[i]);
    }
    for (int i = 0; i < n; i++) k[i] = (float)(k[i] / sum * (positive ? 1.0 : 2.0));
}

static inline double gc_abs_sum(const float *k, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += fabs(k[i]);
    return s;
}

/* ---------------------------------------------------------------- timing */

static inline int gc_cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Median time in ms of reps runs of op on (src, dst), version v (0 =
 * copy); -1 when a launch fails. */
static inline float gc_time(const tsk_op *op, const ts_view *src, ts_view *dst, int v, int reps)
{
    float t[64], ms = 0;
    cudaEvent_t a, b;
    ts_err err;
    if (reps > 64) reps = 64;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int i = -2; i < reps; i++) {
        tsk_launch l = { NULL, v, TS_PATH_GLOBAL, 0 };
        ts_status st = TS_OK;
        cudaEventRecord(a, 0);
        if (v == 0)
            cudaMemcpy2DAsync(dst->data, dst->pitch, src->data, src->pitch, (size_t)dst->w * gc_px(dst),
                              (size_t)dst->h, cudaMemcpyDeviceToDevice, 0);
        else
            st = tsk_gpu_apply(op, src, dst, &l, &err);
        cudaEventRecord(b, 0);
        if (st != TS_OK || cudaEventSynchronize(b) != cudaSuccess) {
            fprintf(stderr, "timing v%d: %s\n", v, st != TS_OK ? err.msg : "launch failed");
            ms = -1;
            break;
        }
        cudaEventElapsedTime(&ms, a, b);
        if (i >= 0) t[i] = ms;
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    if (ms < 0) return -1;
    qsort(t, (size_t)reps, sizeof t[0], gc_cmp_float);
    return t[reps / 2];
}

/* Every version of op on a w x h image of c x type: median ms, GB/s
 * (bytes read once plus written once over the time) and the ratio of a
 * device-to-device copy's time to the kernel's. Outputs of the versions are
 * compared with version 1's (within 1, or 1e-5 for floats). */
static inline void gc_time_op(const tsk_op *op, const char *what, int w, int h, int c, ts_type type)
{
    ts_view img = timg_whole(w, h, c, type);
    ts_view out = timg_whole(w, h, c, type), first = timg_whole(w, h, c, type);
    timg_random(&img);
    ts_view s = timg_to_device(&img), d = timg_to_device(&out);
    double bytes = 2.0 * (double)w * h * c * (double)type;
    CHECK(s.data && d.data);
    float copy = gc_time(op, &s, &d, 0, 30);
    fprintf(stderr, "timing %s %dx%d c%d %s: copy %.4f ms (%.0f GB/s)\n", what, w, h, c, timg_type_name(type), copy,
            bytes / copy * 1e-6);
    int n = tsk_version_count(op->kind);
    for (int v = 1; v <= n; v++) {
        float ms = gc_time(op, &s, &d, v, 30);
        CHECK_MSG(ms > 0, "timing %s v%d failed", what, v);
        fprintf(stderr, "  %-72s %8.4f ms %6.0f GB/s  %.3f of copy\n", tsk_version_name(op->kind, v), ms,
                bytes / ms * 1e-6, copy / ms);
        timg_from_device(v == 1 ? &first : &out, &d);
        if (v > 1) {
            double diff = timg_compare(&out, &first, type == TS_F32 ? 1e-5 : 1.0, what);
            CHECK_MSG(diff <= (type == TS_F32 ? 1e-5 : 1.0), "timing %s v%d differs from v1 by %g", what, v, diff);
        }
    }
    timg_device_free(&s);
    timg_device_free(&d);
    timg_free(&img);
    timg_free(&out);
    timg_free(&first);
}

#endif
